import ArgumentParser
import YapDBIndex
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `yapdb-measure index`: the paged B+tree alone — inserts with periodic flushes, then point
/// lookups on the clean tree whose pages sit in one contiguous region (as a memory map would).
struct MeasureIndex: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "index", abstract: "Measure the paged index trees in memory.")

    @Option(help: "Entries to insert.") var entries = 1_000_000
    @Option(help: "Page size in bytes.") var pageSize = 4096
    @Option(help: "Insert this many entries between flushes.") var flushEvery = 100_000
    @Option(help: "Lookups to time.") var lookups = 1_000_000
    @Flag(help: "Time with the thread's CPU clock instead of the wall clock (for a loaded machine).") var cpuTime = false

    func run() throws {
        if cpuTime { measureClock = CLOCK_THREAD_CPUTIME_ID }
        let format = PageFormat(pageSize: pageSize)
        let pages = RegionPageSource(pageSize: pageSize, capacity: 4 * entries * 64 / pageSize + 1024)
        var rng = FastRandom(seed: 11)
        let keys = (0..<entries).map { _ in Array(String(format16: Int(rng.next() % 1_000_000_000_000)).utf8) }
        let value = KeydirEntry(rowid: 123_456, object: ValueLocation(segment: 3, offset: 1_000_000, length: 140), metadata: nil).pageEncoded

        var tree = PagedBTree(format: format, source: pages)
        var start = now()
        var flushSeconds = 0.0, written = 0
        for (i, key) in keys.enumerated() {
            try tree.upsert(key, value)
            if (i + 1) % flushEvery == 0 || i + 1 == keys.count {
                let flushStart = now()
                let flush = tree.flush(allocate: { () throws(Never) in pages.allocate() }, write: { (id, bytes) throws(Never) in pages.write(id, bytes) })
                flush.publish()
                written += flush.pagesWritten
                tree = try PagedBTree(rootPage: flush.root, format: format, source: pages)
                flushSeconds += now() - flushStart
            }
        }
        let insertSeconds = now() - start
        print("insert \(tree.count) entries (random order, flush every \(flushEvery)): \(fmt(insertSeconds / Double(entries) * 1e9)) ns/entry; flushes \(fmt(flushSeconds)) s, \(written) pages written, \(pages.allocated) pages, height \(tree.height)")

        let order = (0..<lookups).map { _ in Int(rng.next() % UInt64(entries)) }
        var found = 0
        start = now()
        for i in order {
            if try tree.entry(forKey: keys[i]) != nil { found += 1 }
        }
        let lookupSeconds = now() - start
        print("lookup (clean tree, \(pageSize)-byte pages in one region): \(fmt(lookupSeconds / Double(lookups) * 1e9)) ns/lookup (\(found) found)")

        start = now()
        var total = 0
        for i in order.prefix(100_000) { try tree.withElement(at: i) { key, _ in total &+= key.count } }
        print("element(at:): \(fmt((now() - start) / Double(min(lookups, 100_000)) * 1e9)) ns (\(total))")

        var rows = PagedRowTree(format: format, source: pages)
        start = now()
        for rowid in 0..<UInt64(entries) { try rows.append(rowid) }
        print("row tree append: \(fmt((now() - start) / Double(entries) * 1e9)) ns/row")
    }
}

/// Pages in one contiguous region, like a memory-mapped index file: `withPage` hands out the
/// bytes without copying and without a lock. `@unchecked Sendable`: the measurement writes pages
/// and reads them from one thread only.
final class RegionPageSource: PageSource, @unchecked Sendable {
    let pageSize: Int
    let region: UnsafeMutableRawBufferPointer
    private(set) var allocated = 0

    init(pageSize: Int, capacity: Int) {
        self.pageSize = pageSize
        region = .allocate(byteCount: pageSize * capacity, alignment: 4096)
    }

    deinit { region.deallocate() }

    func allocate() -> PageID {
        allocated += 1
        precondition(allocated * pageSize <= region.count, "RegionPageSource: region full")
        return PageID(allocated)
    }

    func write(_ id: PageID, _ bytes: UnsafeRawBufferPointer) {
        UnsafeMutableRawBufferPointer(rebasing: region[(Int(id) - 1) * pageSize..<Int(id) * pageSize]).copyMemory(from: bytes)
    }

    func withPage(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> Void) throws(PageError) {
        guard id >= 1, Int(id) <= allocated else { throw .corrupt(page: id, reason: .missing) }
        return try body(UnsafeRawBufferPointer(rebasing: region[(Int(id) - 1) * pageSize..<Int(id) * pageSize]))
    }
}
