/// What the encryption layer reports. The public layer maps `wrongKey` and `keyUnavailable`
/// to `YapDatabaseError` cases of their own, and `authenticationFailed` (with the unit's
/// place) to `corrupted`.
package enum CipherError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The key given does not open the database: the wrapped data key or the key-check block
    /// did not authenticate under it, or its form (raw key or passphrase) is not the one the
    /// key slot was made with. Never damage: `corruptAction` must not act on it.
    case wrongKey
    /// A sealed unit did not authenticate under its file key and address: its bytes were
    /// changed, moved from another place, or damaged.
    case authenticationFailed
    /// Bytes that must have a fixed size or shape do not (a key, a salt, a slot, a sealed unit
    /// shorter than its nonce and tag). `reason` names the check.
    case malformed(reason: String)
    /// The key derivation refused its parameters (an iteration count of 0).
    case keyDerivation(reason: String)

    package var description: String {
        switch self {
        case .wrongKey: return "the key does not open this database"
        case .authenticationFailed: return "a sealed unit did not authenticate (changed, moved or damaged bytes)"
        case .malformed(let reason): return "malformed encryption bytes: \(reason)"
        case .keyDerivation(let reason): return "key derivation failed: \(reason)"
        }
    }
}
