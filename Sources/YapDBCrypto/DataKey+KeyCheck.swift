import Crypto
import Foundation

extension DataKey {
    /// The 16 bytes the key-check block seals.
    static let keyCheckConstant = Array("YapDB key check.".utf8)

    /// The main file's key-check block (`CipherFormat.keyCheckSize` bytes): the constant
    /// `"YapDB key check."` sealed under a key derived from this data key (HKDF-SHA256, info
    /// `"YapDB key check v1" ‖ uuid`), at the address (uuid, main file, number 0, position 0,
    /// key check). Written once, when the database is created; a rekey leaves it as it is.
    package func keyCheckBlock(databaseUUID: [UInt8]) throws(CipherError) -> [UInt8] {
        try keyCheckSealer(databaseUUID).seal(Self.keyCheckConstant, at: Self.keyCheckAddress(databaseUUID))
    }

    /// Checks that `block` is this data key's key-check block for the database.
    ///
    /// - Throws: `CipherError.wrongKey` when it does not open or holds another constant: the
    ///   data key is not the database's (never damage: a damaged block is a wrong key too, and
    ///   so changes nothing); `CipherError.malformed` when it is not `CipherFormat.keyCheckSize` bytes.
    package func verifyKeyCheck(_ block: [UInt8], databaseUUID: [UInt8]) throws(CipherError) {
        guard block.count == CipherFormat.keyCheckSize else {
            throw .malformed(reason: "a key-check block has \(block.count) bytes, not \(CipherFormat.keyCheckSize)")
        }
        let opened: [UInt8]
        do {
            opened = try keyCheckSealer(databaseUUID).open(block, at: Self.keyCheckAddress(databaseUUID))
        } catch .authenticationFailed {
            throw .wrongKey
        }
        guard opened == Self.keyCheckConstant else { throw .wrongKey }
    }

    static func keyCheckAddress(_ uuid: [UInt8]) -> UnitAddress {
        UnitAddress(databaseUUID: uuid, fileKind: 1, fileNumber: 0, position: 0, unitType: .keyCheck)
    }

    func keyCheckSealer(_ uuid: [UInt8]) throws(CipherError) -> UnitSealer {
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes),
                                         info: Array("YapDB key check v1".utf8) + uuid,
                                         outputByteCount: CipherFormat.keySize)
        return try UnitSealer(key: key.withUnsafeBytes { [UInt8]($0) })
    }
}
