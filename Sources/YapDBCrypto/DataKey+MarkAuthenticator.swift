import Crypto
import Foundation

/// Tags and checks the high-water mark slots of an encrypted database's main file
/// (docs/format.md §2, "High-water mark", and §12, "Threat model"): an HMAC-SHA256 over a slot's
/// fields, the database uuid and the slot's index, under a key only the data key gives. Someone
/// without the key can neither lower a mark's promises nor move a slot to the other place.
///
/// Threading: an immutable value; use it from any thread.
package struct MarkAuthenticator: Sendable {
    /// Bytes of a tag: a whole HMAC-SHA256.
    package static let tagSize = 32

    /// The derived key's bytes (kept as bytes: `SymmetricKey` is not `Sendable`).
    private let key: [UInt8]
    private let uuid: [UInt8]

    fileprivate init(key: [UInt8], uuid: [UInt8]) {
        self.key = key
        self.uuid = uuid
    }

    /// The tag of a slot whose fields are `fields` (slot bytes 0 ..< 28) at place `slot`
    /// (0: the main file's first page, 1: its second).
    package func tag(fields: some Collection<UInt8>, slot: Int) -> [UInt8] {
        var mac = HMAC<SHA256>(key: SymmetricKey(data: key))
        update(&mac, fields: fields, slot: slot)
        return Array(mac.finalize())
    }

    /// Whether `tag` is the tag of `fields` at place `slot` (compared in constant time).
    package func verify(tag: some Collection<UInt8>, fields: some Collection<UInt8>, slot: Int) -> Bool {
        guard tag.count == Self.tagSize else { return false }
        var mac = HMAC<SHA256>(key: SymmetricKey(data: key))
        update(&mac, fields: fields, slot: slot)
        return mac.finalize() == Data(tag)
    }

    /// The message: fields ‖ uuid (16) ‖ slot index (u8).
    private func update(_ mac: inout HMAC<SHA256>, fields: some Collection<UInt8>, slot: Int) {
        mac.update(data: Array(fields))
        mac.update(data: uuid)
        mac.update(data: [UInt8(truncatingIfNeeded: slot)])
    }
}

extension DataKey {
    /// The authenticator of database `databaseUUID`'s high-water mark: its key is HKDF-SHA256 of
    /// this data key with info `"YapDB high-water mark v1" ‖ uuid`, 32 bytes. A rekey keeps the
    /// data key, so marks written before it still verify.
    package func markAuthenticator(databaseUUID: [UInt8]) -> MarkAuthenticator {
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes),
                                         info: Array("YapDB high-water mark v1".utf8) + databaseUUID,
                                         outputByteCount: CipherFormat.keySize)
        return MarkAuthenticator(key: key.withUnsafeBytes { [UInt8]($0) }, uuid: databaseUUID)
    }
}
