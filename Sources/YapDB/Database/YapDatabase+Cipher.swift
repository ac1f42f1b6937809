import Foundation
import YapDBCrypto
import YapDBEngine
import YapDBStorage

extension YapDatabase {
    /// Changes the key of an encrypted database (a YapDB addition; SQLCipher's `PRAGMA rekey`).
    ///
    /// The database's data is sealed under a random data key that the key wraps, so a rekey
    /// rewraps that data key under `newKey` in the main file's older key slot, syncs it and
    /// checks it reads back, then does the same to the other slot: no data file is rewritten,
    /// it takes milliseconds (plus the key derivations of a passphrase), and a crash at any
    /// point leaves a database that opens with the old key or the new one (docs/format.md §12).
    /// Later opens need `newKey`; this database's ``options`` name it from now on. A new
    /// passphrase is stretched with the ``YapDatabaseOptions/kdfIterNumber`` the database was
    /// opened with (256,000 when 0).
    ///
    /// - Throws: `io(errno: ENOTSUP, operation: "rekey")` for a database that is not encrypted
    ///   (encrypting a plain database in place is not supported: create an encrypted one and
    ///   copy the rows); `keyUnavailable` for an empty key (or when the key the database opened
    ///   with is no longer available from its key block); `wrongKey` for a raw key under 32
    ///   bytes; `closed`, `readOnly`, `io`.
    public func rekey(to newKey: YapDatabaseCipherKey) throws(YapDatabaseError) {
        let cipher = storedOptions.values.cipher
        guard let fresh = try CipherValues(key: newKey).resolvedKey() else { throw .keyUnavailable }
        guard engine.cipher != nil else { throw .io(errno: ENOTSUP, operation: "rekey") }
        guard let current = try cipher.resolvedKey() else { throw .keyUnavailable }
        do throws(EngineError) {
            try engine.rekey(current: CipherKeyOptions(key: current),
                             new: CipherKeyOptions(key: fresh, creationIterations: cipher.creationIterations))
        } catch {
            throw YapDatabaseError(error)
        }
        storedOptions.cipherKey = newKey
    }

    /// The engine's key options for `options`: nil for a plain database; the resolved key,
    /// with a new database's PBKDF2 iterations and salt (``YapDatabaseOptions/cipherSaltBlock``
    /// when it gives 16 bytes), for an encrypted one. The key source is asked once, here.
    ///
    /// - Throws: `keyUnavailable` when the key source that is set gives no key.
    static func engineCipherKey(_ options: YapDatabaseOptions) throws(YapDatabaseError) -> CipherKeyOptions? {
        let cipher = options.values.cipher
        guard let key = try cipher.resolvedKey() else { return nil }
        var salt: [UInt8]?
        if let block = cipher.saltBlock {
            let given = [UInt8](block())
            if given.count == CipherFormat.kdfSaltSize { salt = given }
        }
        return CipherKeyOptions(key: key, creationIterations: cipher.creationIterations, creationSalt: salt)
    }
}
