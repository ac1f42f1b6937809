import Foundation
import Synchronization

/// How serious a log message is. Ordered: `.error` < `.warning` < `.info` < `.verbose`
/// (a lower value is more serious).
public enum YapDatabaseLogLevel: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Something failed (e.g. a commit, or opening in the compatible `init?` form).
    case error = 0
    /// Something unexpected that YapDB handled (e.g. a torn tail truncated at open).
    case warning = 1
    /// Notable events (open, checkpoint, compaction).
    case info = 2
    /// Detail for debugging.
    case verbose = 3

    /// More serious levels sort first.
    public static func < (lhs: YapDatabaseLogLevel, rhs: YapDatabaseLogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `"error"`, `"warning"`, `"info"` or `"verbose"`.
    public var description: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .info: "info"
        case .verbose: "verbose"
        }
    }
}

/// One message to the log handler set with `YapDatabase.setLogHandler(_:)`.
///
/// Threading: a plain value.
public struct YapDatabaseLogMessage: Sendable, Hashable, CustomStringConvertible {
    /// How serious it is.
    public let level: YapDatabaseLogLevel
    /// The text.
    public let message: String
    /// The source file that logged it (`#fileID` form, e.g. `YapDB/Commit.swift`).
    public let file: String
    /// The function that logged it.
    public let function: String
    /// The line that logged it.
    public let line: Int

    /// A message.
    public init(level: YapDatabaseLogLevel, message: String, file: String, function: String, line: Int) {
        self.level = level
        self.message = message
        self.file = file
        self.function = function
        self.line = line
    }

    /// The last path component of ``file``.
    public var fileName: String { file.split(separator: "/").last.map(String.init) ?? file }

    /// `YapDB [level] file:line function: message`.
    public var description: String { "YapDB [\(level)] \(fileName):\(line) \(function): \(message)" }
}

/// The process-wide log handler store. `YapDatabase.setLogHandler(_:)` forwards to
/// ``setHandler(_:)``; the package logs with ``log(_:_:file:function:line:)``.
///
/// Threading: the handler sits behind a `Mutex` (`handler`); it is read under the lock and
/// called outside it, so a handler may log or set a new handler without deadlocking. Handlers
/// run on the thread that logs.
enum YapDatabaseLogging {
    typealias Handler = @Sendable (YapDatabaseLogMessage) -> Void

    private static let handler = Mutex<Handler>(defaultHandler)

    /// Prints errors and warnings to standard error, one line each; drops info and verbose.
    static let defaultHandler: Handler = { message in
        guard message.level <= .warning else { return }
        FileHandle.standardError.write(Data((message.description + "\n").utf8))
    }

    /// Replaces the handler for the whole process.
    static func setHandler(_ newHandler: @escaping Handler) {
        handler.withLock { $0 = newHandler }
    }

    /// Restores ``defaultHandler``.
    static func resetHandler() { setHandler(defaultHandler) }

    /// Sends a message to the current handler, on this thread.
    static func log(_ level: YapDatabaseLogLevel, _ message: @autoclosure () -> String,
                    file: String = #fileID, function: String = #function, line: Int = #line) {
        let current = handler.withLock { $0 }
        current(YapDatabaseLogMessage(level: level, message: message(), file: file, function: function, line: line))
    }
}
