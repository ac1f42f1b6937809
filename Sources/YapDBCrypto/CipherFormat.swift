// The one home of the encryption layout constants (docs/format.md §12). The storage layer
// places these bytes; this module produces and checks them.

/// Sizes and identifiers of encrypted databases (docs/format.md §12).
package enum CipherFormat {
    /// The cipher id written in key slots and cipher headers: AES-256-GCM.
    package static let aes256GCM: UInt8 = 1
    /// Bytes of a data key (DEK), a key-encryption key (KEK) and a per-file key.
    package static let keySize = 32
    /// Bytes of a GCM nonce: 96 bits, drawn at random for every sealed unit.
    package static let nonceSize = 12
    /// Bytes of a GCM tag.
    package static let tagSize = 16
    /// What sealing adds to a unit: its nonce before it and its tag after it.
    package static let sealOverhead = nonceSize + tagSize
    /// Bytes of a per-file salt (each encrypted file's cipher header).
    package static let fileSaltSize = 32
    /// Bytes of a passphrase's PBKDF2 salt (in the key slot).
    package static let kdfSaltSize = 16
    /// Bytes of a unit's associated data (`UnitAddress.associatedData`).
    package static let addressSize = 32
    /// Bytes of the key-check block: nonce, the sealed 16-byte constant, tag.
    package static let keyCheckSize = nonceSize + 16 + tagSize
    /// Bytes of a key slot's body (`KeySlot.encoded()`); the main file frames it with a crc.
    package static let keySlotBodySize = 96
    /// PBKDF2-HMAC-SHA512 iterations when the caller names none: SQLCipher 4's default.
    package static let defaultKDFIterations = 256_000
    /// Most PBKDF2 iterations a key slot may ask for (ten million, about 40 times SQLCipher's
    /// default): a slot asking for more is damage, refused before any work, so hostile bytes
    /// cannot make an open run for hours.
    package static let maxKDFIterations: UInt32 = 10_000_000
    /// The data key id of a new database's first data key.
    package static let firstDataKeyID: UInt32 = 1
}

/// How a key slot turns the caller's key into the key that wraps the data key.
package enum KeyDerivation: UInt8, Sendable, Equatable {
    /// The caller's 32 bytes are the key-encryption key (a raw key or SQLCipher key spec).
    case raw = 0
    /// PBKDF2-HMAC-SHA512 over the passphrase with the slot's salt and iteration count.
    case pbkdf2SHA512 = 1
}

/// The kind of a sealed unit, bound into its associated data so that one kind can never be
/// taken for another.
package enum SealedUnitType: UInt8, Sendable, Equatable {
    /// A log or compaction segment's record.
    case logRecord = 1
    /// A checkpoint file's record.
    case checkpointRecord = 2
    /// An index file's page.
    case indexPage = 3
    /// The main file's key-check block.
    case keyCheck = 4
}
