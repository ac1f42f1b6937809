import Foundation
import Testing
import TestSupport

/// The one cell of the lifecycle matrix that stops the program: a synchronous read of a closed
/// database (a misuse; the asynchronous reads skip their block instead). Run in the crash child
/// (`YapDBCrashChild readclosed PATH`), since a stop would end this test process.
@Suite struct ClosedDatabaseMisuseTests {
    /// The child's executable, built beside the test bundle.
    static var child: URL {
        let test = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: test).deletingLastPathComponent().appendingPathComponent("YapDBCrashChild")
    }

    @Test func aSynchronousReadOfAClosedDatabaseStopsWithAMessageNamingTheMisuse() throws {
        let directory = TemporaryDirectory("yapdb-misuse")
        defer { directory.remove() }
        let process = Process()
        process.executableURL = Self.child
        process.arguments = ["readclosed", directory.file("closed.yapdb")]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Both outputs are a few lines: reading one to its end cannot block the other.
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let complained = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(said == "closed\n", "the child opened and closed the database, and the read never returned")
        #expect(process.terminationReason == .uncaughtSignal, "stopped, not exited (status \(process.terminationStatus))")
        #if DEBUG
        #expect(complained.contains("YapDatabaseConnection misuse: a synchronous read of a closed database"), "\(complained)")
        #endif
    }
}
