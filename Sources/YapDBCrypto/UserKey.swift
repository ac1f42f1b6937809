import Crypto
import _CryptoExtras
import Foundation

/// The caller's key, as the options give it: the key that wraps the database's data key
/// (directly, or after a passphrase's key derivation).
package enum UserKey: Sendable, Equatable {
    /// Raw key bytes: at least `CipherFormat.keySize`; the first 32 are the key-encryption key
    /// (a 48-byte SQLCipher key spec is 32 key bytes and a 16-byte salt YapDB does not need).
    case raw([UInt8])
    /// A passphrase's bytes (UTF-8 for text), stretched with PBKDF2-HMAC-SHA512.
    case passphrase([UInt8])

    /// The derivation a key slot made with this key records.
    package var derivation: KeyDerivation {
        switch self {
        case .raw: return .raw
        case .passphrase: return .pbkdf2SHA512
        }
    }

    /// The key-encryption key for a slot with `iterations` and `salt` (ignored for a raw key).
    ///
    /// - Throws: `CipherError.malformed` for a raw key shorter than 32 bytes;
    ///   `CipherError.keyDerivation` when PBKDF2 refuses the parameters.
    package func keyEncryptionKey(iterations: UInt32, salt: [UInt8]) throws(CipherError) -> [UInt8] {
        switch self {
        case .raw(let bytes):
            guard bytes.count >= CipherFormat.keySize else {
                throw .malformed(reason: "a raw key has \(bytes.count) bytes; it needs \(CipherFormat.keySize)")
            }
            return Array(bytes.prefix(CipherFormat.keySize))
        case .passphrase(let bytes):
            guard iterations >= 1, iterations <= CipherFormat.maxKDFIterations else {
                throw .keyDerivation(reason: "an iteration count of \(iterations) is outside 1 ... \(CipherFormat.maxKDFIterations)")
            }
            do {
                let key = try KDF.Insecure.PBKDF2.deriveKey(from: bytes, salt: salt, using: .sha512,
                                                            outputByteCount: CipherFormat.keySize,
                                                            unsafeUncheckedRounds: Int(iterations))
                return key.withUnsafeBytes { [UInt8]($0) }
            } catch {
                throw .keyDerivation(reason: "PBKDF2: \(error)")
            }
        }
    }
}
