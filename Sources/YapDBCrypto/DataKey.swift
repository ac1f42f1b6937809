import Crypto
import Foundation

/// The database's data key (DEK): 32 random bytes drawn when an encrypted database is created.
/// Every file key derives from it; the caller's key only wraps it (`KeySlot`), so changing the
/// caller's key rewrites one key slot and no data.
///
/// Threading: an immutable value; use it from any thread.
package struct DataKey: Sendable, Equatable {
    /// The key's bytes (`CipherFormat.keySize`).
    package let bytes: [UInt8]
    /// The id that files sealed under this key carry in their cipher headers.
    package let id: UInt32

    /// A data key with the given bytes, which must be `CipherFormat.keySize` long.
    package init(bytes: [UInt8], id: UInt32) throws(CipherError) {
        guard bytes.count == CipherFormat.keySize else {
            throw .malformed(reason: "a data key has \(bytes.count) bytes, not \(CipherFormat.keySize)")
        }
        self.bytes = bytes
        self.id = id
    }

    /// A new data key from the system's random generator.
    package static func generate(id: UInt32 = CipherFormat.firstDataKeyID) -> DataKey {
        let key = SymmetricKey(size: .bits256)
        let bytes = key.withUnsafeBytes { [UInt8]($0) }
        return DataKey(uncheckedBytes: bytes, id: id)
    }

    private init(uncheckedBytes: [UInt8], id: UInt32) {
        bytes = uncheckedBytes
        self.id = id
    }

    /// `count` random bytes from the system's generator: a file's salt, a passphrase salt.
    package static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The sealer for one file: its key is HKDF-SHA256 of this data key, salted with the file's
    /// random `salt` (its cipher header's), with info `"YapDB file key v1" ‖ uuid ‖ kind ‖
    /// number (u32) ‖ data key id (u32)`. A file created again under a reused number (a segment
    /// number reused after recovery removed a torn segment) draws a new salt, so it gets a new key.
    package func fileSealer(salt: [UInt8], databaseUUID: [UInt8], fileKind: UInt8, fileNumber: UInt32) throws(CipherError) -> UnitSealer {
        guard salt.count == CipherFormat.fileSaltSize else {
            throw .malformed(reason: "a file salt has \(salt.count) bytes, not \(CipherFormat.fileSaltSize)")
        }
        guard databaseUUID.count == 16 else { throw .malformed(reason: "a database UUID has \(databaseUUID.count) bytes, not 16") }
        var info = Array("YapDB file key v1".utf8)
        info += databaseUUID
        info.append(fileKind)
        info.appendLittleEndian(fileNumber)
        info.appendLittleEndian(id)
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes), salt: salt, info: info,
                                         outputByteCount: CipherFormat.keySize)
        return try UnitSealer(key: key.withUnsafeBytes { [UInt8]($0) })
    }
}
