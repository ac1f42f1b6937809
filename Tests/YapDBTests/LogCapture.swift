import Foundation
import Synchronization
@testable import YapDB

/// Collects the log messages a test expects, while tests run in parallel: one process-wide
/// handler (installed once, never replaced) hands every message to each live capture, and each
/// capture keeps the messages its filter accepts. Tests that check logging use this instead of
/// `setLogHandler`, so they cannot uninstall each other's handlers.
final class LogCapture: Sendable {
    private static let captures = Mutex<[ObjectIdentifier: LogCapture]>([:])
    private static let installed: Void = YapDatabaseLogging.setHandler { message in
        for capture in LogCapture.captures.withLock({ Array($0.values) }) where capture.filter(message) {
            capture.kept.withLock { $0.append(message) }
        }
    }

    private let filter: @Sendable (YapDatabaseLogMessage) -> Bool
    private let kept = Mutex<[YapDatabaseLogMessage]>([])

    /// Starts collecting the messages `filter` accepts, until `stop()`.
    init(_ filter: @escaping @Sendable (YapDatabaseLogMessage) -> Bool) {
        self.filter = filter
        _ = Self.installed
        Self.captures.withLock { $0[ObjectIdentifier(self)] = self }
    }

    /// Collects messages whose text mentions `text` (e.g. a database's path).
    convenience init(mentioning text: String) {
        self.init { $0.message.contains(text) }
    }

    /// What was collected so far, in order.
    var messages: [YapDatabaseLogMessage] { kept.withLock { $0 } }

    /// Stops collecting (the capture must be stopped, or it lives as long as the process).
    func stop() { _ = Self.captures.withLock { $0.removeValue(forKey: ObjectIdentifier(self)) } }
}
