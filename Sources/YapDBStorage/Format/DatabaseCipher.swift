import Synchronization
import YapDBCrypto

/// The key an open is given for an encrypted database, and how a new one is to be made
/// (docs/format.md §12).
package struct CipherKeyOptions: Sendable, Equatable {
    /// The caller's key: it unwraps the data key of an existing database, and wraps a new
    /// database's data key.
    package var key: UserKey
    /// PBKDF2 iterations of a new database's key slot when `key` is a passphrase.
    package var creationIterations: UInt32
    /// The PBKDF2 salt of a new passphrase database's key slot; nil draws a random one.
    package var creationSalt: [UInt8]?

    package init(key: UserKey, creationIterations: UInt32 = UInt32(CipherFormat.defaultKDFIterations), creationSalt: [UInt8]? = nil) {
        self.key = key
        self.creationIterations = creationIterations
        self.creationSalt = creationSalt
    }
}

/// An open encrypted database's keys: its data key, unlocked, and the per-file sealers derived
/// from it (each derived once per file and kept: an HKDF per record would cost more than the seal).
///
/// Threading: `Sendable`; the sealer cache is guarded by its `Mutex`.
package final class DatabaseCipher: Sendable {
    package let dataKey: DataKey
    package let uuid: [UInt8]
    /// Tags and checks the main file's high-water mark slots (docs/format.md §2).
    package let markAuthenticator: MarkAuthenticator
    /// File sealers by (file kind, file number, salt): a file created again under a reused
    /// number has a new salt, so it never finds the old file's sealer.
    private let sealers = Mutex<[SealerKey: UnitSealer]>([:])

    private struct SealerKey: Hashable {
        var kind: UInt8
        var number: UInt32
        var salt: [UInt8]
    }

    package init(dataKey: DataKey, uuid: [UInt8]) {
        self.dataKey = dataKey
        self.uuid = uuid
        self.markAuthenticator = dataKey.markAuthenticator(databaseUUID: uuid)
    }

    /// The sealer of the file `header` and `cipherHeader` start.
    ///
    /// - Throws: `corrupted` when the cipher header names another data key or another
    ///   database (`header` was checked to be this database's by its reader).
    package func sealer(header: FileHeader, cipherHeader: CipherHeader) throws(StorageError) -> UnitSealer {
        let key = SealerKey(kind: header.kind.rawValue, number: header.fileNumber, salt: cipherHeader.salt)
        if let found = sealers.withLock({ $0[key] }) { return found }
        let made = try cipherHeader.sealer(dataKey: dataKey, header: header)
        sealers.withLock { $0[key] = made }
        return made
    }

    /// Forgets the sealers of files that are gone (a removed segment's number may be reused).
    package func forget(kind: FileKindByte, number: UInt32) {
        sealers.withLock { cache in cache = cache.filter { !($0.key.kind == kind.rawValue && $0.key.number == number) } }
    }

    /// A new file's cipher header (a fresh salt) and sealer.
    package func newFile(_ header: FileHeader) throws(StorageError) -> (cipherHeader: CipherHeader, sealer: UnitSealer) {
        let cipherHeader = CipherHeader.fresh(dataKeyID: dataKey.id)
        return (cipherHeader, try sealer(header: header, cipherHeader: cipherHeader))
    }
}

extension MainFile {
    /// The bytes of a new encrypted main file for database `uuid`, and its data key: a fresh
    /// data key wrapped under `options.key` in the first key slot, the key-check block, and
    /// the first high-water mark slot holding `HighWaterMark.initial` tagged under the data key
    /// (an encrypted main file always has an authentic mark).
    ///
    /// - Throws: `wrongKey` when the key cannot wrap (a raw key under 32 bytes, a passphrase
    ///   whose derivation fails).
    package static func newEncrypted(uuid: [UInt8], options: CipherKeyOptions) throws(StorageError) -> (image: [UInt8], dataKey: DataKey) {
        let dataKey = DataKey.generate()
        let slot: KeySlot
        let keyCheck: [UInt8]
        do {
            slot = try KeySlot.wrapping(dataKey, with: options.key, databaseUUID: uuid,
                                        iterations: options.creationIterations, kdfSalt: options.creationSalt)
            keyCheck = try dataKey.keyCheckBlock(databaseUUID: uuid)
        } catch {
            throw .wrongKey
        }
        let header = FileHeader(kind: .main, uuid: uuid, fileNumber: 0, baseSnapshot: 0)
        var image = encryptedImage(header, slot: StoredKeySlot(sequence: 1, slot: slot), keyCheck: keyCheck)
        let mark = HighWaterMark.initial.encoded(authenticator: dataKey.markAuthenticator(databaseUUID: uuid))
        let markStart = Int(HighWaterMark.slotOffset(sequence: HighWaterMark.initial.sequence))
        image.replaceSubrange(markStart..<(markStart + Format.mainMarkSize), with: mark)
        return (image, dataKey)
    }
}
