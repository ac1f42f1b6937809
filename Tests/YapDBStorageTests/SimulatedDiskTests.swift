#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import TestSupport
import YapDBStorage
import YapDBSimulatedDisk

/// A disk with the directory "/db".
func makeDisk(seed: UInt64 = 0) throws -> SimulatedDisk {
    let disk = SimulatedDisk(seed: seed)
    try disk.mkdir("/db")
    return disk
}

/// Creates `path` holding `bytes`, data and name both durable; returns the open handle.
@discardableResult
func makeDurableFile(_ disk: SimulatedDisk, _ path: String, _ bytes: [UInt8]) throws -> any StorageFile {
    let file = try disk.open(path, mode: .create)
    try file.write(bytes, at: 0)
    try file.sync()
    try disk.syncDirectory(Paths.directory(of: path))
    return file
}

/// Every file in "/db" and its current bytes.
func contents(of disk: SimulatedDisk) throws -> [String: [UInt8]] {
    var result: [String: [UInt8]] = [:]
    for name in try disk.listDirectory("/db") { result[name] = disk.currentBytes(of: "/db/" + name) }
    return result
}

let powerLost: Int32 = EIO

@Suite struct SimulatedDiskPowerCutTests {
    @Test(arguments: PowerCutMode.allCases)
    func syncedDataSurvivesEveryMode(mode: PowerCutMode) throws {
        for seed in UInt64(0)..<32 {
            let disk = try makeDisk()
            var random = SeededRandom(seed: seed)
            let synced = random.bytes(6000)
            let file = try makeDurableFile(disk, "/db/a", synced)
            try file.write(random.bytes(5000), at: 6000)  // unsynced, shares a page with synced bytes
            try makeDurableFile(disk, "/db/b", [1, 2, 3]).write([9, 9], at: 1)
            disk.powerCut(seed: seed, mode: mode)
            let after = try #require(disk.currentBytes(of: "/db/a"), "seed \(seed)")
            #expect(Array(after.prefix(6000)) == synced, "seed \(seed)")
            #expect(disk.durableBytes(of: "/db/a") == after, "current = durable after a cut")
            #expect(disk.pendingOperationCount == 0)
            let b = try #require(disk.currentBytes(of: "/db/b"))
            if mode == .keepAll { #expect(b == [1, 9, 9]) } else { #expect(b.count == 3 && b[0] == 1) }
        }
    }

    @Test func dropKeepsAnySubsetOfUnsyncedWritesIncludingHoles() throws {
        let a = [UInt8](repeating: 0xAA, count: 100), b = [UInt8](repeating: 0xBB, count: 100)
        var outcomes: [[Bool]: UInt64] = [:]
        for seed in UInt64(0)..<64 {
            let disk = try makeDisk()
            let file = try makeDurableFile(disk, "/db/f", [])
            try file.write(a, at: 0)
            try file.write(b, at: 100)
            let log = disk.powerCut(seed: seed, mode: .drop)
            let bytes = try #require(disk.currentBytes(of: "/db/f"))
            let outcome: [Bool]
            switch bytes {
            case []: outcome = [false, false]
            case a: outcome = [true, false]
            case [UInt8](repeating: 0, count: 100) + b: outcome = [false, true]  // a hole before b
            case a + b: outcome = [true, true]
            default: Issue.record("seed \(seed): unexpected bytes \(bytes)"); continue
            }
            outcomes[outcome] = outcomes[outcome] ?? seed
            #expect(log.contains { $0.contains("write #0") && $0.hasSuffix(outcome[0] ? "persists" : "lost") })
            #expect(log.contains { $0.contains("write #1") && $0.hasSuffix(outcome[1] ? "persists" : "lost") })
        }
        #expect(outcomes.count == 4, "all four subsets occur: \(outcomes)")
        #expect(outcomes[[false, true]] != nil, "a later write persisted while an earlier did not")
    }

    @Test func tornWritesKeepASectorPrefixOfEachPage() throws {
        var random = SeededRandom(seed: 99)
        let data = random.bytes(3 * 4096).map { $0 | 1 }  // no zero bytes
        var sawPartialPage = false
        for seed in UInt64(0)..<48 {
            let disk = try makeDisk()
            try makeDurableFile(disk, "/db/f", []).write(data, at: 0)
            disk.powerCut(seed: seed, mode: .torn)
            let bytes = try #require(disk.currentBytes(of: "/db/f"))
            #expect(bytes.count <= data.count && bytes.count % 512 == 0, "seed \(seed)")
            for page in stride(from: 0, to: bytes.count, by: 4096) {
                let end = min(page + 4096, bytes.count)
                let region = Array(bytes[page..<end])
                let kept = (0..<(region.count / 512)).prefix { sector in
                    region[(sector * 512)..<(sector * 512 + 512)].elementsEqual(data[(page + sector * 512)..<(page + sector * 512 + 512)])
                }.count
                #expect(region[(kept * 512)...].allSatisfy { $0 == 0 }, "seed \(seed) page \(page): kept sectors are a prefix")
                if kept > 0 && kept < 8 { sawPartialPage = true }
            }
        }
        #expect(sawPartialPage)
    }

    @Test func garbleNeverKeepsUnsyncedBytesIntact() throws {
        var random = SeededRandom(seed: 5)
        let data = random.bytes(2000).map { $0 | 1 }
        var persisted = 0, zeroed = 0
        for seed in UInt64(0)..<40 {
            let disk = try makeDisk()
            try makeDurableFile(disk, "/db/f", [7, 7]).write(data, at: 2)
            disk.powerCut(seed: seed, mode: .garble)
            let bytes = try #require(disk.currentBytes(of: "/db/f"))
            #expect(Array(bytes.prefix(2)) == [7, 7])
            guard bytes.count == 2002 else { #expect(bytes.count == 2); continue }
            persisted += 1
            #expect(Array(bytes[2...]) != data, "seed \(seed)")
            if bytes[2...].allSatisfy({ $0 == 0 }) { zeroed += 1 }
        }
        #expect(persisted > 0 && zeroed > 0 && zeroed < persisted)
    }

    @Test(arguments: [PowerCutMode.drop, .torn, .garble])
    func createdFileWithoutDirectorySyncVanishes(mode: PowerCutMode) throws {
        for seed in UInt64(0)..<8 {
            let disk = try makeDisk()
            let file = try disk.open("/db/new", mode: .createNew)
            try file.write([1, 2, 3], at: 0)
            try file.sync()
            #expect(disk.durableBytes(of: "/db/new") == nil)
            disk.powerCut(seed: seed, mode: mode)
            #expect(disk.kind(of: "/db/new") == .missing)
            #expect(try disk.listDirectory("/db") == [])
        }
        let kept = try makeDisk()
        try kept.open("/db/new", mode: .createNew).write([1], at: 0)
        kept.powerCut(seed: 0, mode: .keepAll)
        #expect(kept.currentBytes(of: "/db/new") == [1])
    }

    @Test(arguments: PowerCutMode.allCases)
    func renameWithoutDirectorySyncIsUndone(mode: PowerCutMode) throws {
        for seed in UInt64(0)..<8 {
            let disk = try makeDisk()
            try makeDurableFile(disk, "/db/ckpt", [1, 1])
            try makeDurableFile(disk, "/db/ckpt.tmp", [2, 2, 2])
            try disk.rename("/db/ckpt.tmp", to: "/db/ckpt")
            #expect(disk.currentBytes(of: "/db/ckpt") == [2, 2, 2])
            disk.powerCut(seed: seed, mode: mode)
            if mode == .keepAll {
                #expect(try contents(of: disk) == ["ckpt": [2, 2, 2]])
            } else {
                #expect(try contents(of: disk) == ["ckpt": [1, 1], "ckpt.tmp": [2, 2, 2]], "seed \(seed)")
            }

            let synced = try makeDisk()
            try makeDurableFile(synced, "/db/ckpt", [1, 1])
            try makeDurableFile(synced, "/db/ckpt.tmp", [2, 2, 2])
            try synced.rename("/db/ckpt.tmp", to: "/db/ckpt")
            try synced.syncDirectory("/db")
            synced.powerCut(seed: seed, mode: mode)
            #expect(try contents(of: synced) == ["ckpt": [2, 2, 2]])
        }
    }

    @Test func unsyncedRemoveMayOrMayNotPersist() throws {
        var outcomes: Set<Bool> = []
        for seed in UInt64(0)..<32 {
            let disk = try makeDisk()
            try makeDurableFile(disk, "/db/f", [4])
            try disk.remove("/db/f")
            #expect(disk.kind(of: "/db/f") == .missing)
            disk.powerCut(seed: seed, mode: .drop)
            let back = disk.kind(of: "/db/f") == .file
            if back { #expect(disk.currentBytes(of: "/db/f") == [4]) }
            outcomes.insert(back)
        }
        #expect(outcomes == [true, false])

        let disk = try makeDisk()
        try makeDurableFile(disk, "/db/f", [4])
        try disk.remove("/db/f")
        try disk.syncDirectory("/db")
        disk.powerCut(seed: 1, mode: .drop)
        #expect(disk.kind(of: "/db/f") == .missing)
    }

    @Test func powerCutKillsHandlesAndReleasesLocks() throws {
        let disk = try makeDisk()
        let file = try makeDurableFile(disk, "/db/f", [1, 2])
        let lock = try disk.lock("/db/f")
        #expect(failure { try disk.lock("/db/f") } == IOFailure(errno: EWOULDBLOCK, operation: "flock", path: "/db/f"))
        let lines = disk.powerCut(seed: 3, mode: .drop)
        #expect(lines.contains { $0.contains("dead") } && lines.contains { $0.contains("released lock") })
        let dead = IOFailure(errno: powerLost, operation: "power lost", path: "/db/f")
        #expect(failure { try file.readExactly(1, at: 0) } == dead)
        #expect(failure { try file.write([1], at: 0) } == dead)
        #expect(failure { try file.sync() } == dead)
        #expect(failure { try file.size() } == dead)
        file.close()
        let again = try disk.lock("/db/f")
        lock.unlock()  // a stale lock must not release the new holder
        #expect(failure { try disk.lock("/db/f") }?.errno == EWOULDBLOCK)
        again.unlock()
        _ = try disk.lock("/db/f")
        #expect(try disk.open("/db/f", mode: .readOnly).readExactly(2, at: 0) == [1, 2])
    }

    /// A seeded mix of every kind of call, leaving plenty pending.
    func randomWorkload(_ disk: SimulatedDisk, seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        var files: [any StorageFile] = []
        for step in 0..<60 {
            switch random.next() % 7 {
            case 0: files.append(try disk.open("/db/f\(random.next() % 5)", mode: .create))
            case 1, 2: if let file = files.randomElement(using: &random) {
                try file.write(random.bytes(Int(random.next() % 9000)), at: Int64(random.next() % 9000))
            }
            case 3: try files.randomElement(using: &random)?.sync()
            case 4: try disk.syncDirectory("/db")
            case 5: try files.randomElement(using: &random)?.truncate(to: Int64(random.next() % 5000))
            default:
                let names = try disk.listDirectory("/db")
                guard let name = names.randomElement(using: &random) else { continue }
                if step % 2 == 0 { try disk.remove("/db/" + name) } else { try disk.rename("/db/" + name, to: "/db/r\(step)") }
            }
        }
    }

    @Test(arguments: PowerCutMode.allCases)
    func sameSeedGivesTheSameDisk(mode: PowerCutMode) throws {
        var results: [[String: [UInt8]]] = []
        for cutSeed in UInt64(0)..<6 {
            let first = try makeDisk(), second = try makeDisk()
            try randomWorkload(first, seed: 11)
            try randomWorkload(second, seed: 11)
            #expect(first.pendingOperationCount > 0)
            #expect(first.powerCut(seed: cutSeed, mode: mode) == second.powerCut(seed: cutSeed, mode: mode))
            let state = try contents(of: first)
            #expect(try contents(of: second) == state)
            #expect(first.log == second.log)
            results.append(state)
        }
        if mode != .keepAll { #expect(Set(results.map { "\($0.sorted { $0.key < $1.key })" }).count > 1) }
    }
}
