import Testing
import YapDBStorage
import YapDBSimulatedDisk
import YapDBIndex
@testable import YapDBEngine
import TestSupport

@Suite struct VerifyTests {
    /// Records before the checkpoint's replay position are not rescanned: `verify()` finds
    /// damage there only by reading what the key directory points to.
    @Test(arguments: ["object", "metadata", "compressed"])
    func verifyReportsADamagedRecordTheIndexPointsTo(which: String) throws {
        let disk = try EngineTesting.simulated()
        let engine = try Engine.open(path: "/db/main", options: EngineTesting.options(disk))
        let compressible = [UInt8](repeating: 7, count: 600)
        for batch in 0..<5 {
            _ = try engine.write { tx in
                for i in 0..<20 {
                    try EngineTesting.set(tx, "c\(batch % 2)", "k\(batch)-\(i)", [UInt8(i), 1, 2, 3], metadata: [9, UInt8(i)])
                }
                try EngineTesting.set(tx, "z", "big\(batch)", compressible)
            }
        }
        try engine.checkpoint()
        #expect(try engine.verify().isValid)
        let entry: KeydirEntry
        switch which {
        case "object": entry = engine.snapshot().entry(collection: "c1", key: "k3-7")!
        case "metadata": entry = engine.snapshot().entry(collection: "c0", key: "k2-5")!
        default: entry = engine.snapshot().entry(collection: "z", key: "big3")!
        }
        let location = which == "metadata" ? entry.metadata! : entry.object
        #expect(which != "compressed" || location.length < 300, "the big value is stored compressed")
        let file = try disk.open(DatabaseFiles(mainPath: "/db/main").segmentPath(location.segment), mode: .readWrite)
        let last = Int64(location.offset) + Int64(location.length) - 1
        var byte = try file.readExactly(1, at: last)
        byte[0] ^= 0x40
        try file.write(byte, at: last)
        file.close()
        let report = try engine.verify()
        #expect(!report.isValid)
        #expect(report.problems.contains { $0.contains("checksum") }, "\(report.problems)")
        try engine.close()
    }
}
