#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import TestSupport
@testable import YapDBStorage

/// The recovery scan reads segments through a bounded window (docs/format.md §5): memory does
/// not grow with a segment's size, and records that span windows read as they did whole.
@Suite struct LogScannerWindowTests {
    let fs = PosixFileSystem.shared

    /// Scans the database at `path` (its header's UUID) with `windowSize`, without repair.
    static func scan(_ path: String, fs: any FileSystem, windowSize: Int) throws -> (ScanReport, [ScannedCommit]) {
        let main = try fs.open(path, mode: .readOnly)
        defer { main.close() }
        let uuid = try MainFile.open(at: path, file: main).header.uuid
        let files = DatabaseFiles(mainPath: path)
        var scanner = LogScanner(files: files, fileSystem: fs, uuid: uuid)
        scanner.windowSize = windowSize
        var commits: [ScannedCommit] = []
        let report = try scanner.scan(segments: try files.list(fs).segments, from: LogPosition(segment: 1, offset: UInt32(Format.headerSize)),
                                      baseSnapshot: 0, repair: false) { (commit) throws(StorageError) in commits.append(commit) }
        return (report, commits)
    }

    /// Bug: recovery read each segment whole (`readExactly(size)`): a segment extended to
    /// 1 GiB (sparse, by another program or a bad copy) allocated 1 GiB at open.
    @Test func aOneGiBSparseSegmentOpensWithinTheWindow() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let harness = LogHarness(path: dir.file("db"), fs: fs)
        let (opened, _) = try harness.open()
        for n in 0..<5 { try LogHarness.commit(opened.writer, [("k\(n)", LogHarness.value(commit: n, key: 0, size: 500))]) }
        let segment = opened.writer.files.segmentPath(opened.writer.segmentNumber)
        let end = opened.writer.end
        opened.lock?.unlock()
        let file = try fs.open(segment, mode: .readWrite)
        try file.truncate(to: 1 << 30)   // a hole: no disk space, 1 GiB of zeros when read
        file.close()
        let (again, state) = try harness.open()
        #expect(state.count == 5)
        #expect(again.report.lastSnapshot == 5)
        #expect(again.report.truncatedBytes == Int64(1 << 30) - Int64(end), "the zeros are a torn tail, cut at open")
        #expect(again.report.largestWindow <= LogScanner.defaultWindowSize, "held \(again.report.largestWindow) bytes at once")
        #expect(again.report.largestWindow > 0)
        again.lock?.unlock()
    }

    /// Records larger than the window, and transactions spanning windows, read as they do
    /// whole; damage inside a large record is still found.
    @Test func recordsSpanningWindowsReadAsWhole() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let harness = LogHarness(path: dir.file("db"), fs: fs)
        let (opened, _) = try harness.open()
        var random = SeededRandom(seed: 11)
        for n in 0..<12 {
            let values = (0..<3).map { k in ("k\(n)-\(k)", random.bytes(n % 3 == 0 ? 3000 : 40 + n * 7)) }
            try LogHarness.commit(opened.writer, values, compress: false)
        }
        let segment = opened.writer.files.segmentPath(opened.writer.segmentNumber)
        let end = Int(opened.writer.end)
        opened.lock?.unlock()
        let (whole, wholeCommits) = try Self.scan(dir.file("db"), fs: fs, windowSize: 1 << 20)
        for windowSize in [64, 100, 257, 1000] {
            let (windowed, commits) = try Self.scan(dir.file("db"), fs: fs, windowSize: windowSize)
            #expect(windowed.lastSnapshot == 12 && windowed.end == whole.end, "window \(windowSize)")
            #expect(commits.map(\.operations) == wholeCommits.map(\.operations), "window \(windowSize)")
            #expect(windowed.largestWindow <= max(windowSize, 3100), "window \(windowSize): \(windowed.largestWindow)")
        }
        // Flip a byte inside the last commit's large value: the last commit is a torn tail.
        let file = try fs.open(segment, mode: .readWrite)
        try file.write([0x5A], at: Int64(end - 200))
        file.close()
        let (damaged, commits) = try Self.scan(dir.file("db"), fs: fs, windowSize: 100)
        #expect(commits.count == 11 && damaged.tornAt != nil)
    }
}
