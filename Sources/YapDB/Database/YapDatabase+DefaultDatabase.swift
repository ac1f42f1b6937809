import Foundation
import YapDBEngine

/// YapDatabase's no-argument opening (`YapDatabase()` at `defaultDatabaseURL()`) and the
/// YapDatabase 3.x path-based initializers, kept as deprecated forms.
extension YapDatabase {
    /// Where `YapDatabase()` keeps its database: `<Application Support>/<process name>/yapdb.sqlite`
    /// (on Linux, Application Support is `$XDG_DATA_HOME`, usually `~/.local/share`). The
    /// directory is created by `YapDatabase()` when missing.
    public class func defaultDatabaseURL() -> URL {
        let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        let folder = ProcessInfo.processInfo.processName.isEmpty ? "YapDB" : ProcessInfo.processInfo.processName
        return base.appendingPathComponent(folder, isDirectory: true).appendingPathComponent("yapdb.sqlite")
    }

    /// Opens (creating it if missing) the database at `defaultDatabaseURL()`.
    ///
    /// YapDatabase's `init()` cannot fail. When the database cannot be opened (the folder cannot
    /// be made, the file is damaged, another process holds it, …) the error goes to the log
    /// handler and the database returned is closed: every transaction on it reports `closed`
    /// (write forms throw or log it). Use `open(url:options:)` to handle the error instead.
    public convenience init() {
        let url = Self.defaultDatabaseURL()
        let options = YapDatabaseOptions()
        self.init(engine: Self.openDefaultEngine(url: url, options: options), url: url, options: options)
    }

    /// The engine of `init()`: the database at `url`, or a closed one (the error logged).
    static func openDefaultEngine(url: URL, options: YapDatabaseOptions) -> Engine {
        let folder = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            YapDatabaseLogging.log(.error, "could not create \(folder.path): \(error); YapDatabase() returns a closed database")
            return closedEngine()
        }
        do throws(YapDatabaseError) {
            return try openEngine(url: url, options: options)
        } catch {
            YapDatabaseLogging.log(.error, "could not open \(url.path): \(error); YapDatabase() returns a closed database")
            return closedEngine()
        }
    }

    /// An engine that is already closed: a fresh database in a new temporary folder, closed at
    /// once and its files removed. Everything done through it reports `closed`.
    ///
    /// When even that cannot be made (the temporary folder is not writable either), the program
    /// stops with a message naming both failures: `init()` has no way to report them.
    static func closedEngine() -> Engine {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("yapdb-unopened-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let engine = try openEngine(url: folder.appendingPathComponent("closed.yapdb"), options: YapDatabaseOptions())
            try engine.close()
            return engine
        } catch {
            preconditionFailure("YapDatabase(): the default database could not be opened (see the log), nor a closed stand-in in \(folder.path): \(error)")
        }
    }

    // MARK: YapDatabase 3.x (deprecated)

    /// YapDatabase 3.x's path-based form of `init(url:)`.
    @available(*, deprecated, renamed: "init(url:)")
    public convenience init?(path: String) {
        self.init(url: URL(fileURLWithPath: path), options: nil)
    }

    /// YapDatabase 3.x's path-based form of `init(url:options:)`.
    @available(*, deprecated, renamed: "init(url:options:)")
    public convenience init?(path: String, options: YapDatabaseOptions?) {
        self.init(url: URL(fileURLWithPath: path), options: options)
    }
}
