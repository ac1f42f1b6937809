import Foundation
import YapDBEngine

extension YapDatabaseError {
    /// The public error for a lower layer's failure.
    init(_ error: StorageError) {
        switch error {
        case .notADatabase: self = .notADatabase
        case .unsupportedVersion(let found, let supported): self = .unsupportedVersion(found: found, supported: supported)
        case .corrupted(let offset, let reason): self = .corrupted(offset: offset, reason: reason)
        case .io(let failure):
            switch failure.errno {
            case ENOSPC, EDQUOT: self = .diskFull
            case EROFS: self = .readOnly
            case EACCES, EPERM: self = .permissionDenied(operation: failure.operation)
            case EISDIR: self = .notADatabase
            default: self = .io(errno: failure.errno, operation: failure.operation)
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

    /// `error` as a public error, if it came from the lower layers.
    static func from(_ error: any Error) -> YapDatabaseError? {
        if let storage = error as? StorageError { return YapDatabaseError(storage) }
        return error as? YapDatabaseError
    }
}
