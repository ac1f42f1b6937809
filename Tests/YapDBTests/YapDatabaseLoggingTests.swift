import Foundation
import Testing
@testable import YapDB

@Suite(.serialized) struct YapDatabaseLoggingTests {
    @Test func handlerReceivesMessagesWithTheirSource() {
        let capture = LogCapture { ["careful", "detail"].contains($0.message) }
        defer { capture.stop() }
        YapDatabaseLogging.log(.warning, "careful"); let line = #line
        YapDatabaseLogging.log(.verbose, "detail", file: "YapDB/X.swift", function: "f()", line: 7)
        let entries = capture.messages.map { m in "\(m.level)|\(m.message)|\(m.fileName)|\(m.line)|\(m.function)" }
        #expect(entries == ["warning|careful|YapDatabaseLoggingTests.swift|\(line)|handlerReceivesMessagesWithTheirSource()",
                                "verbose|detail|X.swift|7|f()"])
    }

    @Test func levelsOrderAndDescribe() {
        #expect(YapDatabaseLogLevel.error < .warning && YapDatabaseLogLevel.info < .verbose)
        let m = YapDatabaseLogMessage(level: .error, message: "m", file: "a/b.swift", function: "g()", line: 3)
        #expect(m.description == "YapDB [error] b.swift:3 g(): m")
    }

    @Test func deserializationFailuresAreLoggedAsWarnings() {
        let capture = LogCapture(mentioning: "logging-test-key")
        defer { capture.stop() }
        _ = SerializationRegistry().snapshot.deserialize(.object, Data([0x7F]), forKey: "logging-test-key", inCollection: "c")
        let entries = capture.messages.map { m in "\(m.level): \(m.message)" }
        #expect(entries.count == 1)
        #expect(entries.first?.hasPrefix("warning: cannot deserialize") == true)
    }
}
