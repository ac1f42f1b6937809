import Crypto
import Foundation

/// Where a sealed unit lives, bound into its associated data: a unit authenticates only at
/// the place it was sealed for, so no record, checkpoint record or page can be moved to
/// another offset, file or database, or taken for another kind of unit (docs/format.md §12).
package struct UnitAddress: Sendable, Equatable {
    /// The database's 16-byte UUID (every file header's bytes 16 ..< 32).
    package var databaseUUID: [UInt8]
    /// The file's kind byte (file header byte 12).
    package var fileKind: UInt8
    /// The file's number (file header bytes 32 ..< 36).
    package var fileNumber: UInt32
    /// The unit's place in its file: a record's byte offset, or an index page's number.
    package var position: UInt64
    /// What the unit is.
    package var unitType: SealedUnitType

    package init(databaseUUID: [UInt8], fileKind: UInt8, fileNumber: UInt32, position: UInt64, unitType: SealedUnitType) {
        precondition(databaseUUID.count == 16, "a database UUID is 16 bytes, got \(databaseUUID.count)")
        self.databaseUUID = databaseUUID
        self.fileKind = fileKind
        self.fileNumber = fileNumber
        self.position = position
        self.unitType = unitType
    }

    /// The 32 bytes of associated data: UUID (16), file kind (1), unit type (1), two zero
    /// bytes, file number (u32), position (u64), little-endian.
    package var associatedData: [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(CipherFormat.addressSize)
        bytes += databaseUUID
        bytes.append(fileKind)
        bytes.append(unitType.rawValue)
        bytes += [0, 0]
        bytes.appendLittleEndian(fileNumber)
        bytes.appendLittleEndian(position)
        return bytes
    }
}

/// Seals and opens the units of one file with AES-256-GCM under that file's key.
///
/// Every `seal` draws a fresh random 96-bit nonce from the system's generator, never one
/// derived from the unit's position: YapDB writes different bytes at the same offset after a
/// rollback, a failed sync, a torn-tail truncation or an index writer's resume, and a nonce
/// repeated under one key would expose both plaintexts and let tags be forged. A per-file key
/// keeps every key's count of nonces far below the 2^32 that random nonces allow.
///
/// A sealed unit is `nonce (12) ‖ ciphertext (as long as the plaintext) ‖ tag (16)`.
///
/// Threading: a value holding only the key's bytes; use it from any thread.
package struct UnitSealer: Sendable {
    /// The file key's bytes (a `SymmetricKey` is made per call: it is not `Sendable` here).
    let keyBytes: [UInt8]

    /// A sealer under `key`, which must be `CipherFormat.keySize` bytes.
    package init(key: [UInt8]) throws(CipherError) {
        guard key.count == CipherFormat.keySize else {
            throw .malformed(reason: "a file key has \(key.count) bytes, not \(CipherFormat.keySize)")
        }
        keyBytes = key
    }

    /// `plaintext` sealed for `address`: nonce, ciphertext, tag
    /// (`plaintext.count + CipherFormat.sealOverhead` bytes), with a nonce never used before.
    package func seal(_ plaintext: some DataProtocol, at address: UnitAddress) throws(CipherError) -> [UInt8] {
        try seal(plaintext, associatedData: address.associatedData)
    }

    /// `plaintext` sealed with `associatedData` (this module's key slots bind their own fields).
    func seal(_ plaintext: some DataProtocol, associatedData: [UInt8]) throws(CipherError) -> [UInt8] {
        do {
            let box = try AES.GCM.seal(plaintext, using: SymmetricKey(data: keyBytes), nonce: AES.GCM.Nonce(),
                                       authenticating: associatedData)
            // A 96-bit nonce makes `combined` exactly nonce ‖ ciphertext ‖ tag, in one buffer.
            guard let combined = box.combined else { throw CipherError.malformed(reason: "a sealed box without its combined form") }
            return [UInt8](combined)
        } catch {
            throw .malformed(reason: "sealing failed: \(error)")
        }
    }

    /// The plaintext of `sealed`, a unit `seal` made for `address`.
    ///
    /// - Throws: `CipherError.malformed` when `sealed` is shorter than a nonce and a tag;
    ///   `CipherError.authenticationFailed` when any byte of it, or the address, differs from
    ///   what was sealed (damage, tampering, a unit moved or swapped), or the key is another.
    package func open(_ sealed: some DataProtocol, at address: UnitAddress) throws(CipherError) -> [UInt8] {
        try open(sealed, associatedData: address.associatedData)
    }

    /// The plaintext of `sealed`, sealed with `associatedData`.
    func open(_ sealed: some DataProtocol, associatedData: [UInt8]) throws(CipherError) -> [UInt8] {
        guard sealed.count >= CipherFormat.sealOverhead else {
            throw .malformed(reason: "a sealed unit of \(sealed.count) bytes is shorter than its nonce and tag")
        }
        let box: AES.GCM.SealedBox
        do {
            // nonce (12) ‖ ciphertext ‖ tag (16) is the combined form of a 96-bit-nonce box.
            box = try AES.GCM.SealedBox(combined: sealed)
        } catch {
            throw .malformed(reason: "a sealed unit's nonce or tag: \(error)")
        }
        do {
            return [UInt8](try AES.GCM.open(box, using: SymmetricKey(data: keyBytes), authenticating: associatedData))
        } catch {
            throw .authenticationFailed
        }
    }
}

extension Array where Element == UInt8 {
    /// Appends `value` little-endian.
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { self += $0 }
    }
}
