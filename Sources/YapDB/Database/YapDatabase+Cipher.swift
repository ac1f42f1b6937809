import Foundation
import YapDBCrypto

extension YapDatabase {
    /// Changes the key of an encrypted database (a YapDB addition; SQLCipher's `PRAGMA rekey`).
    ///
    /// The database's data is sealed under a random data key that the key wraps, so a rekey
    /// rewraps that data key under `newKey` in the main file's older key slot, syncs it and
    /// checks it reads back: no data file is rewritten, it takes milliseconds (plus one key
    /// derivation for a passphrase), and a crash at any point leaves a database that opens with
    /// the old key or the new one (docs/format.md §12). Later opens need `newKey`.
    ///
    /// - Throws: `io(errno: ENOTSUP, operation: "rekey")` for a database that is not encrypted
    ///   (encrypting a plain database in place is not supported: create an encrypted one and
    ///   copy the rows); `keyUnavailable` for an empty key; `closed`, `readOnly`, `io`.
    public func rekey(to newKey: YapDatabaseCipherKey) throws(YapDatabaseError) {
        _ = try CipherValues(key: newKey).resolvedKey()
        // Every database opened today is plain: the open refuses encryption until the storage
        // layer seals units (`refuseEncryptionUntilSealed`).
        throw .io(errno: ENOTSUP, operation: "rekey")
    }

    /// Refuses an open that asks for encryption while the storage layer cannot seal units, so
    /// that no key is ever taken as a promise the files do not keep. A key source that gives
    /// no key is `keyUnavailable` first (the blocks are asked once, here).
    static func refuseEncryptionUntilSealed(_ options: YapDatabaseOptions) throws(YapDatabaseError) {
        let cipher = options.values.cipher
        guard cipher.requestsEncryption else { return }
        _ = try cipher.resolvedKey()
        throw .io(errno: ENOTSUP, operation: "encrypt")
    }
}
