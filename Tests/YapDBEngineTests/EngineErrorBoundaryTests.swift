#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import YapDBStorage
import YapDBSimulatedDisk
@testable import YapDBEngine
import TestSupport

/// Every lower layer's failure reaches the engine's caller as `EngineError`, in the case the
/// caller can act on: the log writer's I/O errors, the index files' unreadable and damaged
/// pages (through the trees' `PageError`), a damaged record, a missing file, the refusals and
/// the limits. Faults are scripted on the simulated disk.
@Suite struct EngineErrorBoundaryTests {
    static let path = "/db/main"

    static func open(_ disk: SimulatedDisk, cachedPages: Int? = nil) throws -> Engine {
        var options = EngineTesting.options(disk)
        if let cachedPages {
            options.indexReadMode = .cached(pages: cachedPages)
            options.indexPageSize = 512   // small pages: the trees have levels below the roots
        }
        return try Engine.open(path: path, options: options)
    }

    /// The engine's error `body` threw (`EngineTesting.engineError`); nil, and the test fails,
    /// when it threw nothing or something else.
    static func engineError(_ body: () throws -> Void) -> EngineError? {
        do {
            try body()
            Issue.record("nothing was thrown")
            return nil
        } catch {
            let engine = EngineTesting.engineError(error)
            if engine == nil { Issue.record("not an engine error: \(error)") }
            return engine
        }
    }

    static func fill(_ engine: Engine, rows: Int = 200) throws {
        _ = try engine.write { tx in
            for i in 0..<rows { try EngineTesting.set(tx, "c", "k\(i)", [UInt8(i % 200), 1, 2, 3]) }
        }
    }

    /// A log write that fails: `io` with the errno and a path of the database; the engine is
    /// then poisoned, and says so with `poisoned`.
    @Test func aFailedLogWriteIsIOAndPoisons() throws {
        let disk = try EngineTesting.simulated()
        let engine = try Self.open(disk)
        disk.inject(Fault(.write, effect: .error(EIO)))
        let error = Self.engineError { try Self.fill(engine, rows: 1) }
        guard case .io(let errno, _, let path)? = error else { Issue.record("expected io, got \(String(describing: error))"); return }
        #expect(errno == EIO)
        #expect(path.hasPrefix(Self.path))
        disk.clearFaults()
        #expect(Self.engineError { try Self.fill(engine, rows: 1) } == .poisoned)
    }

    /// A full disk: `io` with `ENOSPC`, and the engine stays usable.
    @Test func aFullDiskIsIOAndLeavesTheEngineUsable() throws {
        let disk = try EngineTesting.simulated()
        let engine = try Self.open(disk)
        disk.inject(Fault(.write, effect: .error(ENOSPC)))
        guard case .io(ENOSPC, _, _)? = Self.engineError({ try Self.fill(engine, rows: 1) }) else {
            Issue.record("expected io(ENOSPC)"); return
        }
        #expect(!engine.isPoisoned)
        try Self.fill(engine, rows: 1)
        try engine.close()
    }

    /// An index page whose read fails (cached mode): the index file's I/O error, as `io`
    /// naming the index file.
    @Test func anUnreadableIndexPageIsIOOnTheIndexFile() throws {
        let disk = try EngineTesting.simulated()
        var engine = try Self.open(disk, cachedPages: 64)
        try Self.fill(engine)
        try engine.close()
        engine = try Self.open(disk, cachedPages: 64)
        disk.inject(Fault(.read, persistent: true, pathContains: Format.indexInfix, effect: .error(EIO)))
        let error = Self.engineError { _ = try engine.snapshot().object(collection: "c", key: "k7") }
        guard case .io(let errno, _, let path)? = error else { Issue.record("expected io, got \(String(describing: error))"); return }
        #expect(errno == EIO)
        #expect(path.contains(Format.indexInfix))
        disk.clearFaults()
        #expect(try engine.snapshot().object(collection: "c", key: "k7") == [7, 1, 2, 3], "a transient failure passes")
    }

    /// A damaged index page (cached mode: checked when read): `corrupted` at the page's id,
    /// the reason naming the index page.
    @Test func aDamagedIndexPageIsCorruptedAtThePage() throws {
        let disk = try EngineTesting.simulated()
        var engine = try Self.open(disk, cachedPages: 64)
        try Self.fill(engine)
        try engine.close()
        engine = try Self.open(disk, cachedPages: 64)
        // Every page below the roots (cached at open) changes one byte of its body.
        let pageSize = Int64(engine.options.indexPageSize)
        let file = try disk.open(DatabaseFiles(mainPath: Self.path).indexPath(1), mode: .readWrite)
        for page in stride(from: pageSize, to: try file.size(), by: Int(pageSize)) {
            var byte = try file.readExactly(1, at: page + pageSize / 2)
            byte[0] ^= 0x21
            try file.write(byte, at: page + pageSize / 2)
        }
        file.close()
        let error = Self.engineError { _ = try engine.snapshot().object(collection: "c", key: "k7") }
        guard case .corrupted(let offset, let reason)? = error else {
            Issue.record("expected corrupted, got \(String(describing: error))"); return
        }
        #expect(offset > 0, "the page's id")
        #expect(reason.hasPrefix("index page"))
    }

    /// A damaged value record: `corrupted`, the reason naming the segment file.
    @Test func aDamagedRecordIsCorruptedNamingItsSegment() throws {
        let disk = try EngineTesting.simulated()
        var engine = try Self.open(disk)
        try Self.fill(engine, rows: 10)
        let entry = try #require(try engine.snapshot().entry(collection: "c", key: "k3"))
        try engine.close()
        let segment = DatabaseFiles(mainPath: Self.path).segmentPath(entry.object.segment)
        let file = try disk.open(segment, mode: .readWrite)
        let at = Int64(entry.object.offset) + Int64(entry.object.length) - 2
        var byte = try file.readExactly(1, at: at)
        byte[0] ^= 0xFF
        try file.write(byte, at: at)
        file.close()
        engine = try Self.open(disk)
        let error = Self.engineError { _ = try engine.snapshot().object(collection: "c", key: "k3") }
        guard case .corrupted(_, let reason)? = error else { Issue.record("expected corrupted, got \(String(describing: error))"); return }
        #expect(reason.contains(Paths.fileName(of: segment)))
    }

    /// An index file the root names, gone: `missingFiles` naming it (not damage).
    @Test func aMissingIndexFileIsMissingFiles() throws {
        let disk = try EngineTesting.simulated()
        let engine = try Self.open(disk)
        try Self.fill(engine)
        try engine.close()
        let index = DatabaseFiles(mainPath: Self.path).indexPath(1)
        try disk.remove(index)
        #expect(Self.engineError { _ = try Self.open(disk) } == .missingFiles([Paths.fileName(of: index)]))
    }

    /// The refusals and the limits.
    @Test func refusalsAndLimits() throws {
        let disk = try EngineTesting.simulated()
        var options = EngineTesting.options(disk)
        options.maxValueSize = 16
        let engine = try Engine.open(path: Self.path, options: options)
        #expect(Self.engineError { _ = try Engine.open(path: Self.path, options: options) } == .alreadyOpen(path: Self.path))
        guard case .tooLarge? = Self.engineError({ _ = try engine.write { tx in try EngineTesting.set(tx, "c", "k", [UInt8](repeating: 1, count: 17)) } }) else {
            Issue.record("expected tooLarge"); return
        }
        try engine.close()
        #expect(Self.engineError { try Self.fill(engine, rows: 1) } == .closed)
        #expect(Self.engineError { try engine.checkpoint() } == .closed)
    }
}

/// `Engine.write` typed over its body's error: the body's own error comes out as `.body` (and
/// rolls the transaction back), the engine's refusal or commit failure as `.engine`, told apart
/// by case.
@Suite struct WriteFailureTests {
    struct Stop: Error, Equatable {}

    static func set(_ tx: WriteTransaction, _ key: String) {
        do { try EngineTesting.set(tx, "c", key, [1, 2, 3]) } catch { Issue.record("the write failed: \(error)") }
    }

    @Test func aBodyErrorIsTheBodysAndRollsBack() throws {
        let disk = try EngineTesting.simulated()
        var engine = try EngineErrorBoundaryTests.open(disk)
        _ = try engine.write { tx in Self.set(tx, "before") }
        #expect(throws: WriteFailure<Stop>.body(Stop())) {
            _ = try engine.write { (tx) throws(Stop) in
                Self.set(tx, "dropped")
                throw Stop()
            }
        }
        #expect(engine.snapshot().number == 1, "nothing committed")
        #expect(try engine.snapshot().entry(collection: "c", key: "dropped") == nil)
        _ = try engine.write { tx in Self.set(tx, "after") }
        try engine.close()
        engine = try EngineErrorBoundaryTests.open(disk)
        #expect(try engine.snapshot().entry(collection: "c", key: "dropped") == nil, "its records were rolled back in the log too")
        #expect(try engine.snapshot().object(collection: "c", key: "after") == [1, 2, 3])
        try engine.close()
    }

    @Test func anEngineFailureIsTheEngines() throws {
        let disk = try EngineTesting.simulated()
        let engine = try EngineErrorBoundaryTests.open(disk)
        disk.inject(Fault(.sync, effect: .syncFailsMarkingClean))
        do throws(WriteFailure<Stop>) {
            _ = try engine.write { (tx) throws(Stop) in Self.set(tx, "k") }
            Issue.record("the commit succeeded")
        } catch {
            switch error {
            case .engine(.io(let errno, _, _)): #expect(errno == EIO)
            default: Issue.record("expected the engine's io failure, got \(error)")
            }
        }
        disk.clearFaults()
        // Refused before the body runs: the engine's, whatever the body would have thrown.
        var ran = false
        #expect(throws: WriteFailure<Stop>.engine(.poisoned)) {
            _ = try engine.write { (_: WriteTransaction) throws(Stop) in ran = true; throw Stop() }
        }
        #expect(!ran)
        try? engine.close()
    }

    /// The non-generic form the public layer's `readWrite` calls: a body that says it threw is
    /// rolled back with no changeset and no engine error, even on an engine that would refuse
    /// it; one that returns commits; a refusal before the body is the engine's error.
    @Test func theNonGenericFormRollsBackABodyThatThrew() throws {
        let disk = try EngineTesting.simulated()
        let engine = try EngineErrorBoundaryTests.open(disk)
        let dropped = try engine.runWriteTransaction { tx in
            Self.set(tx, "dropped")
            return .threw
        }
        #expect(dropped == nil)
        #expect(engine.snapshot().number == 0, "nothing committed")
        #expect(try engine.snapshot().entry(collection: "c", key: "dropped") == nil)
        let kept = try engine.runWriteTransaction { tx in
            Self.set(tx, "kept")
            return .returned
        }
        #expect(kept?.snapshot == 1)
        #expect(try engine.snapshot().object(collection: "c", key: "kept") == [1, 2, 3])
        try engine.close()
        var ran = false
        #expect(throws: EngineError.closed) { _ = try engine.runWriteTransaction { _ in ran = true; return .returned } }
        #expect(!ran)
        let threw = try engine.runWriteTransaction(runsBodyWhenRefused: true) { _ in .threw }
        #expect(threw == nil, "a body that threw is the caller's, whatever the engine would have refused")
    }
}
