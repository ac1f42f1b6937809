import YapDBStorage

/// Runs `body` and returns the `IOFailure` it throws, or `nil` if it does not throw. Any
/// other error comes back as an `IOFailure` with errno -1, so comparisons fail.
func failure<T>(_ body: () throws -> T) -> IOFailure? {
    do {
        _ = try body()
        return nil
    } catch let failure as IOFailure {
        return failure
    } catch {
        return IOFailure(errno: -1, operation: "not an IOFailure", path: "\(error)")
    }
}
