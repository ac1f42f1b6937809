#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import TestSupport
import YapDBStorage
import YapDBSimulatedDisk

@Suite struct SimulatedDiskFaultTests {
    /// Nine mutating calls, with reads between and after them.
    func workload(_ disk: SimulatedDisk) throws {
        let file = try disk.open("/db/a", mode: .create)       // 1
        try file.write([1, 2, 3], at: 0)                        // 2
        _ = try file.readExactly(3, at: 0)
        try file.sync()                                         // 3
        try disk.syncDirectory("/db")                           // 4
        try file.truncate(to: 2)                                // 5
        try disk.rename("/db/a", to: "/db/b")                   // 6
        let other = try disk.open("/db/c", mode: .createNew)    // 7
        try other.write([9], at: 0)                             // 8
        try disk.remove("/db/c")                                // 9
        _ = try disk.open("/db/b", mode: .readOnly).readExactly(2, at: 0)
        _ = try disk.listDirectory("/db")
    }

    @Test func crashAfterStopsAtExactlyNMutatingCalls() throws {
        let counting = try makeDisk()
        try workload(counting)
        let total = counting.operationCount
        #expect(total == 9)
        for n in 0...total + 1 {
            let disk = try makeDisk()
            disk.crashAfter(operations: n)
            let error = failure { try workload(disk) }
            #expect(disk.operationCount == min(n, total), "n = \(n)")
            if n <= total {
                // Even n == total stops the trailing reads.
                #expect(error?.errno == EIO && error?.operation == "power lost", "n = \(n)")
                #expect(disk.isStopped)
                #expect(failure { try disk.listDirectory("/db") }?.operation == "power lost")
                #expect(failure { try disk.open("/db/zzz", mode: .create) }?.operation == "power lost")
                #expect(disk.operationCount == min(n, total), "refused calls are not counted")
            } else {
                #expect(error == nil)
            }
            let lines = disk.powerCut(seed: UInt64(n), mode: .drop)
            #expect(!disk.isStopped && !lines.isEmpty)
            _ = try disk.listDirectory("/db")
            try disk.open("/db/after", mode: .create).write([1], at: 0)
        }
    }

    /// Performs call number `index` of `kind` on a disk prepared by `prepare`.
    func perform(_ kind: Fault.Call, _ index: Int, on disk: SimulatedDisk, file: any StorageFile) throws {
        switch kind {
        case .write: try file.write([UInt8(index)], at: Int64(index))
        case .sync: try file.sync()
        case .syncDirectory: try disk.syncDirectory("/db")
        case .truncate: try file.truncate(to: Int64(100 + index))
        case .rename: try disk.rename("/db/r\(index)", to: "/db/s\(index)")
        case .remove: try disk.remove("/db/r\(index)")
        case .open: _ = try disk.open("/db/f", mode: .readWrite)
        case .read: _ = try file.readExactly(1, at: 0)
        case .map: _ = try file.map(length: 1)
        case .listDirectory: _ = try disk.listDirectory("/db")
        case .lock: try disk.lock("/db/r\(index)").unlock()
        }
    }

    @Test func callCountsCountEveryKindOfCall() throws {
        let (disk, file) = try prepare()
        for kind in Fault.Call.allCases {
            let before = disk.callCount(kind)
            try perform(kind, kind == .rename ? 2 : kind == .remove ? 3 : 1, on: disk, file: file)
            #expect(disk.callCount(kind) == before + 1, "\(kind)")
        }
    }

    func prepare() throws -> (SimulatedDisk, any StorageFile) {
        let disk = try makeDisk()
        let file = try makeDurableFile(disk, "/db/f", [1, 2, 3])
        for index in 1...6 { try makeDurableFile(disk, "/db/r\(index)", [UInt8(index)]) }
        return (disk, file)
    }

    @Test(arguments: Fault.Call.allCases)
    func oneShotFaultFailsOnlyTheNthCall(kind: Fault.Call) throws {
        let (disk, file) = try prepare()
        disk.inject(Fault(kind, nth: 2, effect: .error(ENOSPC)))
        #expect(failure { try perform(kind, 1, on: disk, file: file) } == nil)
        #expect(failure { try perform(kind, 2, on: disk, file: file) }?.errno == ENOSPC)
        #expect(failure { try perform(kind, 3, on: disk, file: file) } == nil)
        #expect(failure { try perform(kind, 4, on: disk, file: file) } == nil)
        #expect(disk.log.contains { $0.contains("fires on \(kind.rawValue)") })
    }

    @Test(arguments: Fault.Call.allCases)
    func persistentFaultFailsEveryCallFromTheNth(kind: Fault.Call) throws {
        let (disk, file) = try prepare()
        disk.inject(Fault(kind, nth: 2, persistent: true, effect: .error(EFBIG)))
        disk.inject(Fault(kind, persistent: true, pathContains: "no-such-path", effect: .error(EIO)))
        #expect(failure { try perform(kind, 1, on: disk, file: file) } == nil)
        for index in 2...4 {
            #expect(failure { try perform(kind, index, on: disk, file: file) }?.errno == EFBIG)
        }
        disk.clearFaults()
        #expect(failure { try perform(kind, 5, on: disk, file: file) } == nil)
    }

    @Test func failedCallsChangeNothing() throws {
        let (disk, file) = try prepare()
        for kind in Fault.Call.allCases { disk.inject(Fault(kind, persistent: true, effect: .error(EIO))) }
        let pendingBefore = disk.pendingOperationCount
        #expect(failure { try file.write([0xFF], at: 0) }?.errno == EIO)
        #expect(failure { try file.truncate(to: 0) }?.errno == EIO)
        #expect(failure { try disk.rename("/db/r1", to: "/db/s1") }?.errno == EIO)
        #expect(failure { try disk.remove("/db/r2") }?.errno == EIO)
        #expect(failure { try disk.open("/db/new", mode: .create) }?.errno == EIO)
        #expect(disk.currentBytes(of: "/db/f") == [1, 2, 3])
        #expect(disk.kind(of: "/db/r1") == .file && disk.kind(of: "/db/s1") == .missing)
        #expect(disk.kind(of: "/db/r2") == .file && disk.kind(of: "/db/new") == .missing)
        #expect(disk.pendingOperationCount == pendingBefore)
    }

    @Test func failedSyncAndDirectorySyncMakeNothingDurable() throws {
        let disk = try makeDisk()
        let file = try makeDurableFile(disk, "/db/f", [1])
        try file.write([2], at: 0)
        _ = try disk.open("/db/g", mode: .create)
        disk.inject(Fault(.sync, effect: .error(EIO)))
        disk.inject(Fault(.syncDirectory, effect: .error(EIO)))
        #expect(failure { try file.sync() }?.errno == EIO)
        #expect(failure { try disk.syncDirectory("/db") }?.errno == EIO)
        #expect(disk.durableBytes(of: "/db/f") == [1])
        #expect(disk.durableBytes(of: "/db/g") == nil)
    }

    @Test func shortWriteLandsASeededPrefixThenThrows() throws {
        var prefixes: Set<Int> = []
        for seed in UInt64(0)..<16 {
            let disk = try makeDisk(seed: seed)
            let file = try makeDurableFile(disk, "/db/f", [])
            disk.inject(Fault(.write, effect: .shortWrite(ENOSPC)))
            let data = [UInt8](repeating: 0xCC, count: 1000)
            #expect(failure { try file.write(data, at: 0) } == IOFailure(errno: ENOSPC, operation: "pwrite", path: "/db/f"))
            let landed = try #require(disk.currentBytes(of: "/db/f"))
            #expect(landed.count < 1000 && landed.allSatisfy { $0 == 0xCC })
            prefixes.insert(landed.count)
            try file.write(data, at: 0)  // one-shot: the next write lands whole
            #expect(disk.currentBytes(of: "/db/f") == data)
        }
        #expect(prefixes.count > 4, "lengths vary with the seed: \(prefixes.sorted())")
    }

    @Test func syncFailingMarkingCleanLosesTheWritesDespiteALaterSync() throws {
        for seed in UInt64(0)..<8 {
            let disk = try makeDisk()
            let file = try makeDurableFile(disk, "/db/f", [1, 1, 1])
            try file.write([2, 2, 2], at: 0)
            disk.inject(Fault(.sync, effect: .syncFailsMarkingClean))
            #expect(failure { try file.sync() } == IOFailure(errno: EIO, operation: "fdatasync", path: "/db/f"))
            #expect(disk.currentBytes(of: "/db/f") == [2, 2, 2], "reads still see the lost writes")
            try file.write([3], at: 5)
            try file.sync()  // succeeds, and proves nothing about [2, 2, 2]
            #expect(disk.pendingOperationCount == 0)
            disk.powerCut(seed: seed, mode: .drop)
            #expect(disk.currentBytes(of: "/db/f") == [1, 1, 1, 0, 0, 3])
        }
    }

    @Test func capacityRefusesGrowthWithENOSPCUntilRaised() throws {
        let disk = try makeDisk()
        disk.capacity = 100
        let file = try disk.open("/db/f", mode: .create)
        try file.write([UInt8](repeating: 1, count: 80), at: 0)
        #expect(failure { try file.write([UInt8](repeating: 2, count: 30), at: 80) } == IOFailure(errno: ENOSPC, operation: "pwrite", path: "/db/f"))
        #expect(try file.size() == 80, "nothing written")
        try file.write([UInt8](repeating: 3, count: 80), at: 0)  // overwriting needs no space
        let other = try disk.open("/db/g", mode: .create)
        #expect(failure { try other.write([UInt8](repeating: 4, count: 21), at: 0) }?.errno == ENOSPC)
        #expect(disk.usedBytes == 80)
        disk.capacity = 200
        try file.write([UInt8](repeating: 2, count: 30), at: 80)
        #expect(try file.size() == 110)
        disk.capacity = nil
        try other.write([UInt8](repeating: 4, count: 1000), at: 0)
    }

    @Test func callsFailWithTheRightErrno() throws {
        let disk = try makeDisk()
        try makeDurableFile(disk, "/db/f", [1])
        #expect(failure { try disk.open("/db/missing", mode: .readWrite) } == IOFailure(errno: ENOENT, operation: "open", path: "/db/missing"))
        #expect(failure { try disk.open("/db/missing", mode: .readOnly) }?.errno == ENOENT)
        #expect(failure { try disk.open("/nodir/x", mode: .create) }?.errno == ENOENT)
        #expect(failure { try disk.open("/db/f/x", mode: .create) }?.errno == ENOTDIR)
        #expect(failure { try disk.open("/db/f", mode: .createNew) }?.errno == EEXIST)
        #expect(failure { try disk.open("/db", mode: .readOnly) }?.errno == EISDIR)
        #expect(failure { try disk.open("/db/", mode: .create) }?.errno == EISDIR)
        #expect(failure { try disk.open("", mode: .create) } != nil)
        let readOnly = try disk.open("/db/f", mode: .readOnly)
        #expect(failure { try readOnly.write([1], at: 0) }?.errno == EBADF)
        #expect(failure { try readOnly.truncate(to: 0) }?.errno == EBADF)
        readOnly.close()
        #expect(failure { try readOnly.readExactly(1, at: 0) }?.errno == EBADF)
        #expect(failure { try disk.remove("/db") }?.errno == EISDIR)
        #expect(failure { try disk.remove("/db/missing") }?.errno == ENOENT)
        #expect(failure { try disk.rename("/db/missing", to: "/db/x") }?.errno == ENOENT)
        #expect(failure { try disk.rename("/db/f", to: "/nodir/x") }?.errno == ENOENT)
        #expect(failure { try disk.listDirectory("/db/f") }?.errno == ENOTDIR)
        #expect(failure { try disk.syncDirectory("/nodir") }?.errno == ENOENT)
        #expect(failure { try disk.lock("/db/missing") }?.errno == ENOENT)
        #expect(failure { try disk.mkdir("/db/f") }?.errno == EEXIST)
        #expect(failure { try disk.setBytes([1], of: "/db/missing") }?.errno == ENOENT)
        #expect(disk.kind(of: "/") == .directory && disk.kind(of: "/db/f") == .file && disk.kind(of: "/x") == .missing)
    }

    @Test func hostileArgumentsGetErrorsNotTraps() throws {
        let disk = try makeDisk()
        let file = try makeDurableFile(disk, "/db/f", [1, 2, 3])
        #expect(failure { try file.write([1], at: -1) }?.errno == EINVAL)
        #expect(failure { try file.write([1, 2], at: Int64.max) }?.errno == EFBIG)
        #expect(failure { try file.write([1], at: 1 << 40) }?.errno == EFBIG)
        #expect(failure { try file.truncate(to: -1) }?.errno == EINVAL)
        #expect(failure { try file.truncate(to: Int64.max) }?.errno == EFBIG)
        #expect(failure { try file.readExactly(1, at: -1) }?.errno == EINVAL)
        #expect(failure { try file.readExactly(1, at: Int64.max) }?.isShortRead == true)
        #expect(failure { try disk.rename("/db/f", to: "") } != nil)
        #expect(failure { try disk.mkdir("") }?.errno == ENOENT)
        disk.inject(Fault(.write, nth: -3, effect: .error(EIO)))  // nth below 1 acts as 1
        #expect(failure { try file.write([1], at: 0) }?.errno == EIO)
        disk.crashAfter(operations: -5)
        #expect(disk.isStopped)
        disk.powerCut(seed: .max, mode: .torn)
        #expect(disk.currentBytes(of: "/db/f") == [1, 2, 3])
    }

    @Test func setBytesOverwritesCurrentAndDurable() throws {
        let disk = try makeDisk()
        let file = try makeDurableFile(disk, "/db/f", [1, 2, 3, 4])
        try file.write([9], at: 10)
        try disk.setBytes([1, 2, 0xFF, 4], of: "/db/f")
        #expect(disk.currentBytes(of: "/db/f") == [1, 2, 0xFF, 4])
        #expect(disk.durableBytes(of: "/db/f") == [1, 2, 0xFF, 4])
        #expect(disk.pendingOperationCount == 0)
        disk.powerCut(seed: 0, mode: .keepAll)
        #expect(disk.currentBytes(of: "/db/f") == [1, 2, 0xFF, 4])
    }
}
