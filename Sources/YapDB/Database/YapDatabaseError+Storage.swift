import Foundation
import YapDBEngine

extension YapDatabaseError {
    /// The public error for an engine failure: the one place the engine's error becomes the
    /// public one.
    init(_ error: EngineError) {
        switch error {
        case .notADatabase: self = .notADatabase
        case .unsupportedVersion(let found, let supported): self = .unsupportedVersion(found: found, supported: supported)
        case .corrupted(let offset, let reason): self = .corrupted(offset: offset, reason: reason)
        case .io(let errno, let operation, _):
            switch errno {
            case ENOSPC, EDQUOT: self = .diskFull
            case EROFS: self = .readOnly
            case EACCES, EPERM: self = .permissionDenied(operation: operation)
            case EISDIR: self = .notADatabase
            default: self = .io(errno: errno, operation: operation)
            }
        case .tooLarge: self = .valueTooLarge
        case .fileNotFound: self = .fileNotFound
        case .locked: self = .locked
        case .alreadyOpen: self = .alreadyOpen
        case .poisoned: self = .poisoned
        case .closed: self = .closed
        case .readOnly: self = .readOnly
        case .missingFiles(let names): self = .missingFiles(names: names)
        case .keyUnavailable: self = .keyUnavailable
        case .wrongKey: self = .wrongKey
        }
    }
}
