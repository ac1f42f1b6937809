// InvariantViolation: what the structures' self-checks report.

/// A broken structural invariant, reported by a structure's `validate()`; its description says
/// which structure, which invariant and where. `checkInvariants()` traps with the same text.
package struct InvariantViolation: Error, CustomStringConvertible, Sendable {
    package let description: String

    package init(_ description: String) { self.description = description }
}

/// Throws an `InvariantViolation` with `message` unless `condition` holds.
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(InvariantViolation) {
    if !condition { throw InvariantViolation(message()) }
}

/// Runs a `validate()` and traps with its message if it fails.
func trapOnViolation(_ validate: () throws -> Void) {
    do { try validate() } catch { preconditionFailure("\(error)") }
}
