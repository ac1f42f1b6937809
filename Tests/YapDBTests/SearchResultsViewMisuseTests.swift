import Foundation
import Testing
import TestSupport

/// The misuses of a search results view that stop the program (YapDatabase throws for them),
/// each run in the crash child (`YapDBCrashChild srvbadinit|srvsetgrouping PATH`), since a stop
/// would end this test process.
@Suite struct SearchResultsViewMisuseTests {
    /// The child's executable, built beside the test bundle.
    static var child: URL {
        let test = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: test).deletingLastPathComponent().appendingPathComponent("YapDBCrashChild")
    }

    /// Runs the child with `command`; returns what it printed, what it complained and how it ended.
    static func run(_ command: String) throws -> (said: String, complained: String, reason: Process.TerminationReason) {
        let directory = TemporaryDirectory("yapdb-srv-misuse")
        defer { directory.remove() }
        let process = Process()
        process.executableURL = Self.child
        process.arguments = [command, directory.file("misuse.yapdb")]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Both outputs are a few lines: reading one to its end cannot block the other.
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let complained = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (said, complained, process.terminationReason)
    }

    /// YapDatabase's test_badInit.
    @Test func thePlainViewInitializerStops() throws {
        let result = try Self.run("srvbadinit")
        #expect(result.said == "making\n", "the initializer never returned")
        #expect(result.reason == .uncaughtSignal)
        #if DEBUG
        #expect(result.complained.contains("YapDatabaseSearchResultsView misuse"), "\(result.complained)")
        #endif
    }

    @Test func aNewGroupingOnAViewOfAParentStops() throws {
        let result = try Self.run("srvsetgrouping")
        #expect(result.said == "registered\n", "the registrations succeeded and setGrouping never returned")
        #expect(result.reason == .uncaughtSignal)
        #if DEBUG
        #expect(result.complained.contains("change the parent's grouping instead"), "\(result.complained)")
        #endif
    }
}
