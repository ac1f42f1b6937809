import Testing
import YapDBStorage
import TestSupport

@Suite struct LogWriterTests {
    let fs = PosixFileSystem.shared

    @Test func rollbackLeavesNoTraceEvenAfterStreamedBytes() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let harness = LogHarness(path: dir.file("db"), fs: fs)
        let (opened, _) = try harness.open()
        let writer = opened.writer
        writer.flushThreshold = 256
        try LogHarness.commit(writer, [("kept", [1])])
        let endBefore = writer.end
        try writer.begin()
        let big = [UInt8](repeating: 7, count: 4000)
        for i in 0..<10 {
            _ = try big.withBytes { (raw) throws(StorageError) in
                try writer.appendValue(.object, rowid: 1, collection: "c", key: "x\(i)", value: raw, noMetadata: true, compress: false)
            }
        }
        #expect(try writer.file.size() > Int64(endBefore), "the transaction streamed bytes to the file")
        writer.rollback()
        #expect(try writer.file.size() == Int64(endBefore))
        #expect(writer.end == endBefore && writer.lastSnapshot == 1)
        try LogHarness.commit(writer, [("after", [2])])
        opened.lock?.unlock()
        let (_, state) = try harness.open()
        #expect(state == ["kept": [1], "after": [2]])
    }

    @Test func streamedTransactionStagesAndReadsBack() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let harness = LogHarness(path: dir.file("db"), fs: fs)
        let (opened, _) = try harness.open()
        let writer = opened.writer
        writer.flushThreshold = 1000
        try writer.begin()
        var locations: [RecordLocation] = []
        for i in 0..<50 {
            let value = LogHarness.value(commit: 1, key: i, size: 100)
            locations.append(try value.withBytes { (raw) throws(StorageError) in
                try writer.appendValue(.object, rowid: UInt64(i), collection: "c", key: "k\(i)", value: raw, noMetadata: true, compress: false)
            })
        }
        // Early records were streamed to the file, the last ones are still staged.
        #expect(writer.stagedRecord(at: locations[0]) == nil)
        let staged = try #require(writer.stagedRecord(at: locations[49]))
        #expect(try SegmentReader.decodeValue(staged, offset: 0, path: "t").1 == LogHarness.value(commit: 1, key: 49, size: 100))
        _ = try writer.commit(snapshot: 1)
        opened.lock?.unlock()
        let (_, state) = try harness.open()
        #expect(state.count == 50)
        #expect(state["k7"] == LogHarness.value(commit: 1, key: 7, size: 100))
    }

    @Test func segmentsRollAtTheLimitAndRecoveryReadsThemAll() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        var harness = LogHarness(path: dir.file("db"), fs: fs)
        harness.segmentLimit = 2000
        let (opened, _) = try harness.open()
        var model: [String: [UInt8]] = [:]
        for n in 1...40 {
            let value = LogHarness.value(commit: n, key: 0, size: 150)
            try LogHarness.commit(opened.writer, [("k\(n % 13)", value)])
            model["k\(n % 13)"] = value
        }
        #expect(opened.writer.segmentNumber > 2)
        opened.lock?.unlock()
        let (again, state) = try harness.open()
        #expect(state == model)
        #expect(again.report.lastSnapshot == 40)
        #expect(again.segments.count == Int(opened.writer.segmentNumber))
        again.lock?.unlock()
    }
}
