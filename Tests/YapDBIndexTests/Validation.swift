// Shared test helper: run a structure's `validate()` and record the failure with its seed.
import Testing

/// Runs `validate` (a structure's `validate()`); on a violation records an issue prefixed by
/// `context` (which names the seed and step) and returns false, so the caller can stop early
/// instead of trapping without the seed.
func isValid(_ validate: () throws -> Void, _ context: @autoclosure () -> String,
             sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
    do {
        try validate()
        return true
    } catch {
        Issue.record("\(context()): \(error)", sourceLocation: sourceLocation)
        return false
    }
}
