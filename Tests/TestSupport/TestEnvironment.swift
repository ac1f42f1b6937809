// Settings the test processes read from the environment (never the libraries themselves).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the environment of a test run asks for. Only test code reads these variables; the
/// libraries take every setting from their options.
public enum TestEnvironment {
    /// The index read mode the test helpers give the engine and the database when a test does
    /// not choose one: `YAPDB_TEST_INDEX_READ_MODE` is `mapped` (or unset: the default, a
    /// memory map) or `cached:N` (`pread` through a cache of N pages). `nil` means mapped; an
    /// unparsable value stops the run with a message, so a typo never silently tests the
    /// default instead.
    public static let cachedIndexPages: Int? = parseIndexReadMode(environment("YAPDB_TEST_INDEX_READ_MODE"))

    /// `nil` for `nil`, `""` or `mapped`; N for `cached:N` (N ≥ 1).
    public static func parseIndexReadMode(_ value: String?) -> Int? {
        guard let value, !value.isEmpty, value != "mapped" else { return nil }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == "cached", let pages = Int(parts[1]), pages >= 1 else {
            preconditionFailure("YAPDB_TEST_INDEX_READ_MODE must be 'mapped' or 'cached:N' (N ≥ 1), not '\(value)'")
        }
        return pages
    }

    /// The value of environment variable `name`, if set.
    public static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
