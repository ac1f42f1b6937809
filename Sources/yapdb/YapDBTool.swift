import ArgumentParser
import Foundation
import YapDB

/// The `yapdb` command-line tool.
@main
struct YapDBTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "yapdb",
        abstract: "Inspect, check and demonstrate YapDB databases.",
        discussion: """
        Exit codes: 0 success; 1 usage or other error; 2 no database at the path; 3 not a YapDB \
        database or a newer format; 4 damaged (verify found problems, or the file is corrupt); \
        5 locked by another process; 6 read-only or permission denied; 7 disk full or I/O error; 8 encrypted: no key, or a wrong key.
        An encrypted database needs its key from --key-env NAME (an environment variable) or --key-file PATH, \
        never from the command line; --raw-key reads it as 64 hexadecimal digits instead of a passphrase.
        stats, dump, get, verify and search open the database read-only (a shared lock on PATH-lock: \
        several at once, also on read-only media, but not beside a read-write open); put and compact \
        wait for the lock (--busy-timeout, 5 s by default).
        """,
        subcommands: [Demo.self, Verify.self, Stats.self, Dump.self, Get.self, Put.self, Compact.self, Rekey.self, Search.self, MeasureCoders.self, MeasureAPI.self, MeasureFullText.self]
    )
}

/// A failure the tool reports with a clear message and its exit code.
struct ToolFailure: Error, CustomStringConvertible {
    var message: String
    var code: Int32
    var description: String { message }

    init(_ message: String, code: Int32) {
        self.message = message
        self.code = code
    }

    /// The message and exit code for a database error at `path`.
    init(_ error: YapDatabaseError, path: String) {
        switch error {
        case .fileNotFound: self.init("no database at \(path)", code: 2)
        case .notADatabase: self.init("not a YapDB database: \(path)", code: 3)
        case .unsupportedVersion(let found, let supported):
            self.init("\(path) uses format version \(found); this yapdb reads up to \(supported)", code: 3)
        case .corrupted(let offset, let reason): self.init("\(path) is damaged at offset \(offset): \(reason)", code: 4)
        case .locked: self.init("\(path) is locked by another process", code: 5)
        case .alreadyOpen: self.init("\(path) is already open", code: 5)
        case .readOnly: self.init("\(path) cannot be written (a read-only volume)", code: 6)
        case .permissionDenied(let operation): self.init("\(path) is not accessible (permission denied during \(operation))", code: 6)
        case .missingFiles(let names): self.init("\(path) is missing files: \(names.joined(separator: ", "))", code: 4)
        case .diskFull: self.init("the disk is full", code: 7)
        case .keyUnavailable: self.init("\(path) is encrypted and no key was given (--key-env NAME or --key-file PATH)", code: 8)
        case .wrongKey: self.init("the key does not open \(path) (another key, a passphrase for a raw key or the other way round, or a key for a plain database)", code: 8)
        case .io(let errno, let operation): self.init("I/O error during \(operation): \(String(cString: strerror(errno)))", code: 7)
        default: self.init("\(path): \(error)", code: 1)
        }
    }
}

/// Runs `body`, turning failures into a message on standard error and an exit code.
func reportingFailures(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let failure as ToolFailure {
        FileHandle.standardError.write(Data("yapdb: \(failure.message)\n".utf8))
        throw ExitCode(failure.code)
    }
}

/// Opens an existing database for the inspection commands (never creates one): read-only
/// (a shared lock, nothing written) unless the command changes it.
/// `key` opens an encrypted database (nil: a plain one).
func openExisting(_ path: String, readOnly: Bool, busyTimeout: Double, key: YapDatabaseCipherKey? = nil) throws -> YapDatabase {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
        throw ToolFailure("\(path) is a directory, not a database file", code: 3)
    }
    let options = YapDatabaseOptions()
    options.createIfMissing = false
    options.readOnly = readOnly
    options.busyTimeout = busyTimeout
    options.cipherKey = key
    YapDatabase.setLogHandler { message in
        if message.level <= .warning { FileHandle.standardError.write(Data("yapdb: \(message.level): \(message.message)\n".utf8)) }
    }
    do {
        return try YapDatabase.open(url: URL(fileURLWithPath: path), options: options)
    } catch {
        throw ToolFailure(error, path: path)
    }
}

/// A long operation's progress on standard error, from half a second on: one line updated in
/// place when standard error is a terminal (at most every half second), else a new line at
/// most every two seconds (a log file or pipe gets readable lines, not carriage returns).
final class Progress {
    let label: String
    let start = Date()
    var last = Date.distantPast
    var shown = false
    let inPlace = isatty(2) != 0

    init(_ label: String) { self.label = label }

    func update(_ count: Int, unit: String) {
        show("\(count) \(unit)")
    }

    /// Shows `text` after the label, if the last line is old enough.
    func show(_ text: String) {
        let now = Date()
        guard now.timeIntervalSince(last) >= (inPlace ? 0.5 : 2), now.timeIntervalSince(start) >= 0.5 else { return }
        last = now
        shown = true
        let line = "\(label): \(text)…"
        FileHandle.standardError.write(Data((inPlace ? "\r\(line)\u{1B}[K" : "\(line)\n").utf8))
    }

    func finish() {
        guard shown else { return }
        let line = "\(label): done in \(String(format: "%.1f", Date().timeIntervalSince(start))) s"
        FileHandle.standardError.write(Data((inPlace ? "\r\(line)\u{1B}[K\n" : "\(line)\n").utf8))
    }
}

/// How the tool shows a stored value.
func describe(_ value: Any?, serialized: Data?) -> String {
    switch value {
    case let string as String: return string
    case let data as Data: return "<\(data.count) bytes: \(data.prefix(32).map { String(format: "%02x", $0) }.joined())\(data.count > 32 ? "…" : "")>"
    case nil:
        if let serialized { return "<\(serialized.count) bytes, not decodable without the app's types>" }
        return "<nil>"
    case let other?: return String(describing: other)
    }
}
