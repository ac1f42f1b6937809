import Foundation
import Testing
@testable import YapDB

@Suite(.serialized) struct YapDatabaseLoggingTests {
    @Test func handlerReceivesMessagesWithTheirSource() {
        let log = LockedLog()
        YapDatabaseLogging.setHandler { m in log.append("\(m.level)|\(m.message)|\(m.fileName)|\(m.line)|\(m.function)") }
        defer { YapDatabaseLogging.resetHandler() }
        YapDatabaseLogging.log(.warning, "careful"); let line = #line
        YapDatabaseLogging.log(.verbose, "detail", file: "YapDB/X.swift", function: "f()", line: 7)
        #expect(log.entries == ["warning|careful|YapDatabaseLoggingTests.swift|\(line)|handlerReceivesMessagesWithTheirSource()",
                                "verbose|detail|X.swift|7|f()"])
    }

    @Test func levelsOrderAndDescribe() {
        #expect(YapDatabaseLogLevel.error < .warning && YapDatabaseLogLevel.info < .verbose)
        let m = YapDatabaseLogMessage(level: .error, message: "m", file: "a/b.swift", function: "g()", line: 3)
        #expect(m.description == "YapDB [error] b.swift:3 g(): m")
    }

    @Test func deserializationFailuresAreLoggedAsWarnings() {
        let log = LockedLog()
        YapDatabaseLogging.setHandler { m in log.append("\(m.level): \(m.message)") }
        defer { YapDatabaseLogging.resetHandler() }
        _ = SerializationRegistry().snapshot.deserialize(.object, Data([0x7F]), forKey: "k", inCollection: "c")
        #expect(log.entries.count == 1)
        #expect(log.entries.first?.hasPrefix("warning: cannot deserialize") == true)
    }
}
