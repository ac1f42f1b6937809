#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import YapDBStorage
import YapDBSimulatedDisk

/// The real POSIX file system with a seam of the harness's own in front of it (issue 25): a
/// `FileSystem` that forwards every call to `PosixFileSystem`, counts the calls of each kind,
/// fails chosen ones (`RealFault`), and can record the mutating calls that succeed, in order,
/// for the crash states of `RecordedTrace`. It lives in the test target, not in the product:
/// the engine sees it only because `EngineOptions.fileSystem` takes any `FileSystem`.
///
/// It sits above `PosixFile`'s own retry loops (EINTR, short transfers), which a wrapper cannot
/// reach: an interrupted or short transfer here is what those loops would hand up if they let
/// it through, or a transfer split in two (`RealFault.Effect.split`).
///
/// Sendable: all mutable state is in `state`, behind its `Mutex`.
final class RealPathFileSystem: FileSystem {
    let inner = PosixFileSystem.shared

    struct State {
        var counts: [Fault.Call: Int] = [:]
        var faults: [RealFault] = []
        var fired = 0
        var recording = false
        var trace: [TraceCall] = []
        /// The current name of each file the trace knows (directory entry → inode number).
        var names: [String: Int] = [:]
        var nextInode = 1
    }

    let state = Mutex(State())

    /// - Parameters:
    ///   - faults: the failures to inject, counted from this moment.
    ///   - recording: whether to record the mutating calls (`trace`).
    init(faults: [RealFault] = [], recording: Bool = false) {
        state.withLock {
            $0.faults = faults
            $0.recording = recording
        }
    }

    /// The number of calls of kind `call` so far (failed ones included).
    func count(_ call: Fault.Call) -> Int { state.withLock { $0.counts[call] ?? 0 } }

    /// How many injected faults fired.
    var fired: Int { state.withLock { $0.fired } }

    /// The mutating calls recorded so far, in the order they returned.
    var trace: [TraceCall] { state.withLock { $0.trace } }

    /// The number of calls recorded so far (a position in `trace`).
    var traceCount: Int { state.withLock { $0.trace.count } }

    /// Counts a call of kind `call` and returns the effect of the fault that fires on it, if any.
    func firing(_ call: Fault.Call) -> RealFault.Effect? {
        state.withLock { state in
            state.counts[call, default: 0] += 1
            let seen = state.counts[call]!
            guard let fault = state.faults.first(where: { $0.call == call && ($0.persistent ? seen >= $0.nth : seen == $0.nth) }) else {
                return nil
            }
            state.fired += 1
            return fault.effect
        }
    }

    /// When recording, appends the call `make` returns to the trace; `make` runs under the
    /// lock (so it may update `names`) and only when recording.
    func record(_ make: (inout State) -> TraceCall?) {
        state.withLock { state in
            guard state.recording, let call = make(&state) else { return }
            state.trace.append(call)
        }
    }

    static func failure(_ effect: RealFault.Effect, _ operation: String, _ path: String) -> IOFailure? {
        switch effect {
        case .error(let code), .shortWrite(let code): IOFailure(errno: code, operation: operation, path: path)
        case .shortRead, .split: nil
        }
    }

    // MARK: - FileSystem

    func open(_ path: String, mode: OpenMode) throws(IOFailure) -> any StorageFile {
        if let effect = firing(.open), let failure = Self.failure(effect, "open", path) { throw failure }
        let existed = inner.kind(of: path) == .file
        let file = try inner.open(path, mode: mode)
        var inode = 0
        state.withLock { state in
            if let known = state.names[path], existed {
                inode = known
            } else {
                inode = state.nextInode
                state.nextInode += 1
                state.names[path] = inode
                if state.recording && !existed { state.trace.append(.create(name: Paths.fileName(of: path), inode: inode)) }
            }
        }
        return RealPathFile(file: file, system: self, inode: inode)
    }

    func kind(of path: String) -> FileKind { inner.kind(of: path) }

    func listDirectory(_ path: String) throws(IOFailure) -> [String] {
        if let effect = firing(.listDirectory), let failure = Self.failure(effect, "opendir", path) { throw failure }
        return try inner.listDirectory(path)
    }

    func rename(_ from: String, to: String) throws(IOFailure) {
        if let effect = firing(.rename), let failure = Self.failure(effect, "rename", from + " -> " + to) { throw failure }
        try inner.rename(from, to: to)
        record { state in
            state.names[to] = state.names.removeValue(forKey: from)
            return .rename(from: Paths.fileName(of: from), to: Paths.fileName(of: to))
        }
    }

    func remove(_ path: String) throws(IOFailure) {
        if let effect = firing(.remove), let failure = Self.failure(effect, "unlink", path) { throw failure }
        try inner.remove(path)
        record { state in
            state.names[path] = nil
            return .remove(name: Paths.fileName(of: path))
        }
    }

    func syncDirectory(_ path: String) throws(IOFailure) {
        if let effect = firing(.syncDirectory), let failure = Self.failure(effect, "fsync", path) { throw failure }
        try inner.syncDirectory(path)
        record { _ in .syncDirectory }
    }

    func lock(_ path: String, shared: Bool) throws(IOFailure) -> any FileLock {
        if let effect = firing(.lock), let failure = Self.failure(effect, "flock", path) { throw failure }
        return try inner.lock(path, shared: shared)
    }
}

/// A failure `RealPathFileSystem` injects: the `nth` call of kind `call` (1-based, counted from
/// the file system's creation) fails, and with `persistent` every later one too.
struct RealFault: Sendable, CustomStringConvertible {
    enum Effect: Sendable, Equatable, CustomStringConvertible {
        /// The call does nothing and throws `errno` (`EIO`, `ENOSPC`, `EMFILE`, `EINTR`, …).
        case error(Int32)
        /// A write lands its first half, then throws `errno`; any other call acts as `.error`.
        case shortWrite(Int32)
        /// A read returns its first half only, as if the file ended there; other calls are
        /// unaffected.
        case shortRead
        /// A read or write is done as two transfers (first half, then the rest), as a kernel
        /// transfer interrupted by a signal and resumed would be; other calls are unaffected.
        /// Must be invisible to the engine.
        case split

        var description: String {
            switch self {
            case .error(let code): "error \(code)"
            case .shortWrite(let code): "short write then \(code)"
            case .shortRead: "short read"
            case .split: "split transfer"
            }
        }
    }

    var call: Fault.Call
    var nth: Int
    var persistent: Bool
    var effect: Effect

    var description: String { "\(call.rawValue) #\(nth) \(persistent ? "and later" : "once"): \(effect)" }
}

/// One mutating call recorded on the real file system. Files are named by the directory entry
/// (everything sits in one directory) and, for data, by an inode number the recorder assigns,
/// so a write through a handle whose file was renamed since still lands on the right file.
enum TraceCall: Sendable {
    case create(name: String, inode: Int)
    case write(inode: Int, offset: Int, bytes: [UInt8])
    case truncate(inode: Int, size: Int)
    case sync(inode: Int)
    case rename(from: String, to: String)
    case remove(name: String)
    case syncDirectory
}

/// A `PosixFile` seen through `RealPathFileSystem`: its calls counted, failed when a fault says
/// so, and recorded. Sendable: every property is a `let`; shared state is the system's.
final class RealPathFile: StorageFile {
    let file: any StorageFile
    let system: RealPathFileSystem
    let inode: Int

    init(file: any StorageFile, system: RealPathFileSystem, inode: Int) {
        self.file = file
        self.system = system
        self.inode = inode
    }

    var path: String { file.path }
    var mapsInPlace: Bool { file.mapsInPlace }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(IOFailure) -> Int {
        switch system.firing(.read) {
        case .some(.shortRead) where buffer.count > 1:
            let half = buffer.count / 2
            return try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<half]), at: offset)
        case .some(.split) where buffer.count > 1:
            let half = buffer.count / 2
            let first = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<half]), at: offset)
            if first < half { return first }
            return try first + file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[half...]), at: offset + Int64(half))
        case .some(let effect):
            if let failure = RealPathFileSystem.failure(effect, "pread", path) { throw failure }
            return try file.read(into: buffer, at: offset)
        case nil:
            return try file.read(into: buffer, at: offset)
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(IOFailure) {
        let half = bytes.count / 2
        switch system.firing(.write) {
        case .some(.shortWrite(let code)):
            try file.write(UnsafeRawBufferPointer(rebasing: bytes[..<half]), at: offset)
            throw IOFailure(errno: code, operation: "pwrite", path: path)
        case .some(.split) where bytes.count > 1:
            try file.write(UnsafeRawBufferPointer(rebasing: bytes[..<half]), at: offset)
            try file.write(UnsafeRawBufferPointer(rebasing: bytes[half...]), at: offset + Int64(half))
        case .some(let effect):
            if let failure = RealPathFileSystem.failure(effect, "pwrite", path) { throw failure }
            try file.write(bytes, at: offset)
        case nil:
            try file.write(bytes, at: offset)
        }
        system.record { _ in .write(inode: inode, offset: Int(offset), bytes: [UInt8](bytes)) }
    }

    func sync() throws(IOFailure) {
        if let effect = system.firing(.sync), let failure = RealPathFileSystem.failure(effect, "fdatasync", path) { throw failure }
        try file.sync()
        system.record { _ in .sync(inode: inode) }
    }

    func truncate(to size: Int64) throws(IOFailure) {
        if let effect = system.firing(.truncate), let failure = RealPathFileSystem.failure(effect, "ftruncate", path) { throw failure }
        try file.truncate(to: size)
        system.record { _ in .truncate(inode: inode, size: Int(size)) }
    }

    func size() throws(IOFailure) -> Int64 { try file.size() }

    func close() { file.close() }

    func map(length: Int) throws(IOFailure) -> FileMapping {
        if let effect = system.firing(.map), let failure = RealPathFileSystem.failure(effect, "mmap", path) { throw failure }
        return try file.map(length: length)
    }
}
