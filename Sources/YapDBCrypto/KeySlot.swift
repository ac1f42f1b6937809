import Crypto
import Foundation

/// A key slot: the database's data key wrapped (AES-256-GCM) by the caller's key, with what it
/// takes to derive that key from a passphrase. The main file holds two slots and a rekey writes
/// the older one (docs/format.md §12), so a crash during a rekey leaves the other slot whole.
///
/// Body (`CipherFormat.keySlotBodySize` = 96 bytes, little-endian; the main file adds a
/// sequence number before it and a crc after it):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 1 | cipher (`CipherFormat.aes256GCM`) |
/// | 1 | 1 | derivation (`KeyDerivation`) |
/// | 2 | 2 | zero |
/// | 4 | 4 | PBKDF2 iterations (0 for a raw key) |
/// | 8 | 16 | PBKDF2 salt (zero for a raw key) |
/// | 24 | 4 | data key id |
/// | 28 | 60 | the data key sealed: nonce, 32 bytes, tag; associated data `"YapDB key slot v1" ‖ uuid ‖ bytes 0 ..< 28` |
/// | 88 | 8 | zero |
package struct KeySlot: Sendable, Equatable {
    package var derivation: KeyDerivation
    package var iterations: UInt32
    package var kdfSalt: [UInt8]
    package var dataKeyID: UInt32
    package var sealedDataKey: [UInt8]

    static let sealedDataKeyOffset = 28
    static let sealedDataKeySize = CipherFormat.nonceSize + CipherFormat.keySize + CipherFormat.tagSize

    /// A slot that wraps `dataKey` with `userKey`.
    ///
    /// - Parameters:
    ///   - iterations: PBKDF2 iterations for a passphrase (ignored for a raw key).
    ///   - kdfSalt: the passphrase's salt (`CipherFormat.kdfSaltSize` bytes); nil draws a random one.
    package static func wrapping(_ dataKey: DataKey, with userKey: UserKey, databaseUUID: [UInt8],
                                 iterations: UInt32 = UInt32(CipherFormat.defaultKDFIterations),
                                 kdfSalt: [UInt8]? = nil) throws(CipherError) -> KeySlot {
        let isRaw = userKey.derivation == .raw
        let salt = isRaw ? [UInt8](repeating: 0, count: CipherFormat.kdfSaltSize)
                         : (kdfSalt ?? DataKey.randomBytes(CipherFormat.kdfSaltSize))
        guard salt.count == CipherFormat.kdfSaltSize else {
            throw .malformed(reason: "a passphrase salt has \(salt.count) bytes, not \(CipherFormat.kdfSaltSize)")
        }
        var slot = KeySlot(derivation: userKey.derivation, iterations: isRaw ? 0 : iterations, kdfSalt: salt,
                           dataKeyID: dataKey.id, sealedDataKey: [])
        let kek = try userKey.keyEncryptionKey(iterations: slot.iterations, salt: salt)
        slot.sealedDataKey = try UnitSealer(key: kek).seal(dataKey.bytes, associatedData: slot.wrapAssociatedData(databaseUUID))
        return slot
    }

    /// The data key this slot wraps, opened with `userKey`.
    ///
    /// - Throws: `CipherError.wrongKey` when `userKey` is not the key the slot was made with
    ///   (another key, or a raw key for a passphrase slot and the other way round), or the slot
    ///   was changed; `CipherError.keyDerivation` or `.malformed` for a key that cannot be used.
    package func unwrap(with userKey: UserKey, databaseUUID: [UInt8]) throws(CipherError) -> DataKey {
        guard userKey.derivation == derivation else { throw .wrongKey }
        let kek = try userKey.keyEncryptionKey(iterations: iterations, salt: kdfSalt)
        do {
            let bytes = try UnitSealer(key: kek).open(sealedDataKey, associatedData: wrapAssociatedData(databaseUUID))
            return try DataKey(bytes: bytes, id: dataKeyID)
        } catch .authenticationFailed {
            throw .wrongKey
        }
    }

    /// The 96 body bytes.
    package func encoded() -> [UInt8] {
        var bytes = fixedFields()
        bytes += sealedDataKey
        bytes += [UInt8](repeating: 0, count: CipherFormat.keySlotBodySize - bytes.count)
        return bytes
    }

    /// Decodes a body, checking every field before use.
    ///
    /// - Throws: `CipherError.malformed` naming the first field that is wrong: size, cipher,
    ///   derivation, reserved bytes, an iteration count outside 1 ... `maxKDFIterations` for a
    ///   passphrase (or not 0 for a raw key).
    package init(decoding body: [UInt8]) throws(CipherError) {
        guard body.count == CipherFormat.keySlotBodySize else {
            throw .malformed(reason: "a key slot body has \(body.count) bytes, not \(CipherFormat.keySlotBodySize)")
        }
        guard body[0] == CipherFormat.aes256GCM else { throw .malformed(reason: "key slot cipher \(body[0]) is unknown") }
        guard let derivation = KeyDerivation(rawValue: body[1]) else {
            throw .malformed(reason: "key slot derivation \(body[1]) is unknown")
        }
        let end = Self.sealedDataKeyOffset + Self.sealedDataKeySize
        guard body[2] == 0, body[3] == 0, body[end...].allSatisfy({ $0 == 0 }) else {
            throw .malformed(reason: "a key slot's reserved bytes are not zero")
        }
        let iterations = body.loadLittleEndian(UInt32.self, at: 4)
        let salt = Array(body[8..<24])
        switch derivation {
        case .raw:
            guard iterations == 0, salt.allSatisfy({ $0 == 0 }) else {
                throw .malformed(reason: "a raw-key slot has PBKDF2 parameters")
            }
        case .pbkdf2SHA512:
            guard iterations >= 1, iterations <= CipherFormat.maxKDFIterations else {
                throw .malformed(reason: "a key slot asks for \(iterations) PBKDF2 iterations (at most \(CipherFormat.maxKDFIterations))")
            }
        }
        self.derivation = derivation
        self.iterations = iterations
        kdfSalt = salt
        dataKeyID = body.loadLittleEndian(UInt32.self, at: 24)
        sealedDataKey = Array(body[Self.sealedDataKeyOffset..<end])
    }

    private init(derivation: KeyDerivation, iterations: UInt32, kdfSalt: [UInt8], dataKeyID: UInt32, sealedDataKey: [UInt8]) {
        self.derivation = derivation
        self.iterations = iterations
        self.kdfSalt = kdfSalt
        self.dataKeyID = dataKeyID
        self.sealedDataKey = sealedDataKey
    }

    /// Bytes 0 ..< 28: everything the wrapping authenticates besides the database.
    private func fixedFields() -> [UInt8] {
        var bytes: [UInt8] = [CipherFormat.aes256GCM, derivation.rawValue, 0, 0]
        bytes.appendLittleEndian(iterations)
        bytes += kdfSalt
        bytes.appendLittleEndian(dataKeyID)
        return bytes
    }

    /// What the wrapping authenticates: `"YapDB key slot v1" ‖ uuid ‖ bytes 0 ..< 28`, so a slot
    /// cannot move to another database and its derivation, iterations, salt and key id cannot
    /// change without the unwrap failing.
    private func wrapAssociatedData(_ uuid: [UInt8]) -> [UInt8] {
        Array("YapDB key slot v1".utf8) + uuid + fixedFields()
    }
}

extension Array where Element == UInt8 {
    /// The little-endian integer at `offset` (the caller checked the bounds).
    func loadLittleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        var value = T.zero
        for index in 0..<MemoryLayout<T>.size { value |= T(self[offset + index]) << (8 * index) }
        return value
    }
}
