#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import Testing
import TestSupport
@testable import YapDBStorage

/// The loops of `PosixFile` and `PosixFileSystem` that retry `EINTR` and continue short
/// transfers, driven through the `PosixCalls` seam with scripted interruptions and short
/// counts (the kernel gives them rarely and never on demand).
@Suite struct PosixRetryLoopTests {
    /// What a scripted call does instead of (or before) the real one.
    enum Step {
        /// Fails with `EINTR`, transferring nothing.
        case interrupt
        /// Makes the real call for at most this many bytes.
        case short(Int)
        /// Returns 0 without calling (the end of the file for `pread`).
        case zero
        /// Fails with this `errno`.
        case fail(Int32)
    }

    enum Call: Hashable { case open, pread, pwrite, sync }

    /// Steps per call kind, taken one per call; once a kind's steps run out its calls are real.
    /// Counts every call. Sendable: its state is behind one `Mutex`.
    final class Script: Sendable {
        private let state = Mutex<(steps: [Call: [Step]], counts: [Call: Int])>(([:], [:]))

        init(_ steps: [Call: [Step]]) { state.withLock { $0.steps = steps } }

        func next(_ call: Call) -> Step? {
            state.withLock { state in
                state.counts[call, default: 0] += 1
                guard var steps = state.steps[call], !steps.isEmpty else { return nil }
                let step = steps.removeFirst()
                state.steps[call] = steps
                return step
            }
        }

        func count(_ call: Call) -> Int { state.withLock { $0.counts[call, default: 0] } }

        /// A file system making the real calls after this script's steps.
        var fileSystem: PosixFileSystem {
            let real = PosixCalls.system
            return PosixFileSystem(calls: PosixCalls(
                open: { path, flags, mode in
                    switch self.next(.open) {
                    case .interrupt?: errno = EINTR; return -1
                    case .fail(let code)?: errno = code; return -1
                    default: return real.open(path, flags, mode)
                    }
                },
                pread: { descriptor, buffer, count, offset in
                    switch self.next(.pread) {
                    case .interrupt?: errno = EINTR; return -1
                    case .short(let most)?: return real.pread(descriptor, buffer, min(count, most), offset)
                    case .zero?: return 0
                    case .fail(let code)?: errno = code; return -1
                    case nil: return real.pread(descriptor, buffer, count, offset)
                    }
                },
                pwrite: { descriptor, bytes, count, offset in
                    switch self.next(.pwrite) {
                    case .interrupt?: errno = EINTR; return -1
                    case .short(let most)?: return real.pwrite(descriptor, bytes, min(count, most), offset)
                    case .zero?: return 0
                    case .fail(let code)?: errno = code; return -1
                    case nil: return real.pwrite(descriptor, bytes, count, offset)
                    }
                },
                fileSync: { descriptor in
                    switch self.next(.sync) {
                    case .interrupt?: errno = EINTR; return -1
                    case .fail(let code)?: errno = code; return -1
                    default: return real.fileSync(descriptor)
                    }
                },
                directorySync: real.directorySync))
        }
    }

    static let bytes: [UInt8] = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    /// A file holding `bytes`, written with the real calls.
    static func file(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("data")
        let file = try PosixFileSystem.shared.open(path, mode: .create)
        try file.write(bytes, at: 0)
        file.close()
        return path
    }

    @Test func preadRetriesInterruptionsAndContinuesShortReads() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = try Self.file(in: directory)
        let script = Script([.pread: [.interrupt, .short(7), .interrupt, .short(1_000), .short(1)]])
        let file = try script.fileSystem.open(path, mode: .readOnly)
        defer { file.close() }
        #expect(try file.readExactly(Self.bytes.count, at: 0) == Self.bytes)
        #expect(script.count(.pread) == 6, "five scripted calls, then one real call for the rest")
        #expect(try file.readExactly(100, at: 9_900) == Array(Self.bytes[9_900..<10_000]))
    }

    @Test func pwriteRetriesInterruptionsAndContinuesShortWrites() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = directory.file("data")
        let script = Script([.pwrite: [.interrupt, .short(3), .interrupt, .short(4_000)]])
        let file = try script.fileSystem.open(path, mode: .create)
        try file.write(Self.bytes, at: 0)
        file.close()
        #expect(script.count(.pwrite) == 5)
        let check = try PosixFileSystem.shared.open(path, mode: .readOnly)
        defer { check.close() }
        #expect(try check.size() == Int64(Self.bytes.count))
        #expect(try check.readExactly(Self.bytes.count, at: 0) == Self.bytes)
    }

    @Test func syncAndOpenRetryInterruptions() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = try Self.file(in: directory)
        let script = Script([.open: [.interrupt, .interrupt], .sync: [.interrupt, .interrupt, .interrupt]])
        let file = try script.fileSystem.open(path, mode: .readWrite)
        defer { file.close() }
        #expect(script.count(.open) == 3)
        try file.sync()
        #expect(script.count(.sync) == 4)
        #expect(try file.readExactly(10, at: 0) == Array(Self.bytes.prefix(10)))
    }

    /// A `pread` that returns 0 is the end of the file: the read returns what it has, once.
    @Test func aZeroBytePreadEndsTheReadInsteadOfSpinning() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = try Self.file(in: directory)
        let script = Script([:])
        let file = try script.fileSystem.open(path, mode: .readOnly)
        defer { file.close() }
        var buffer = [UInt8](repeating: 0, count: 300)
        let count = try buffer.withUnsafeMutableBytes { try file.read(into: $0, at: 9_900) }
        #expect(count == 100 && Array(buffer.prefix(100)) == Array(Self.bytes[9_900...]))
        #expect(script.count(.pread) == 2, "one read of the last 100 bytes, one that returns 0")
        let atEnd = try buffer.withUnsafeMutableBytes { try file.read(into: $0, at: 20_000) }
        #expect(atEnd == 0 && script.count(.pread) == 3)
        // A 0 from the middle of the file (it shrank between calls) ends the read too.
        let shrinking = Script([.pread: [.short(10), .zero, .short(10), .zero]])
        let other = try shrinking.fileSystem.open(path, mode: .readOnly)
        defer { other.close() }
        let partial = try buffer.withUnsafeMutableBytes { try other.read(into: $0, at: 0) }
        #expect(partial == 10 && shrinking.count(.pread) == 2)
        #expect(throws: IOFailure.shortRead(path: path)) { _ = try other.readExactly(50, at: 0) }
    }

    /// Other errors are thrown at once, typed; a `pwrite` that writes nothing is `EIO`.
    @Test func otherFailuresAreThrownNotRetried() throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let path = try Self.file(in: directory)
        let script = Script([.pread: [.short(5), .fail(EIO)], .pwrite: [.zero], .sync: [.interrupt, .fail(EIO)], .open: [.fail(EMFILE)]])
        let fs = script.fileSystem
        #expect(throws: IOFailure(errno: EMFILE, operation: "open", path: path)) { _ = try fs.open(path, mode: .readWrite) }
        let file = try fs.open(path, mode: .readWrite)
        defer { file.close() }
        #expect(throws: IOFailure(errno: EIO, operation: "pread", path: path)) { _ = try file.readExactly(100, at: 0) }
        #expect(script.count(.pread) == 2)
        #expect(throws: IOFailure(errno: EIO, operation: "pwrite", path: path)) { try file.write([1, 2, 3], at: 0) }
        #expect(script.count(.pwrite) == 1)
        #if canImport(Glibc)
        #expect(throws: IOFailure(errno: EIO, operation: "fdatasync", path: path)) { try file.sync() }
        #expect(script.count(.sync) == 2)
        #endif
    }
}
