import YapDBIndex

/// The `pages` target: hostile index pages under the key directory's trees.
///
/// Input: byte 0 chooses the page size (256 or 512) and whether the source checks
/// checksums; bytes 1 and 2 name the pages that are the roots of the `rows` and `rowids`
/// trees (0: empty); the rest is cut into pages numbered from 1. Every read, walk, check and
/// change of the directory over those pages must end in a value or a typed `PageError`: a
/// trap, a hang or a huge allocation is a finding.
enum PagesTarget {
    static let name = "pages"

    /// An in-memory page source over the input's pages.
    struct Source: PageSource {
        let pages: [PageID: [UInt8]]
        let format: PageFormat
        let checksums: Bool

        /// The input's pages bound what a tree over them can claim (shared child pages).
        var pageCapacity: Int? { pages.count }

        func withPage(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> Void) throws(PageError) {
            guard let page = pages[id] else { throw .corrupt(page: id, reason: .missing) }
            let result: Result<Void, PageError> = page.withUnsafeBytes { bytes in
                Result { () throws(PageError) in
                    if checksums { try format.verify(bytes, id: id) }
                    try body(bytes)
                }
            }
            try result.get()
        }
    }

    /// Splits an input into (format, checksums, roots, pages).
    static func decode(_ bytes: [UInt8]) -> (PageFormat, Bool, PageID, PageID, [PageID: [UInt8]]) {
        let control = bytes.first ?? 0
        let format = PageFormat(pageSize: control & 1 == 0 ? 256 : 512)
        let rowsRoot = PageID(bytes.count > 1 ? bytes[1] : 0), rowidsRoot = PageID(bytes.count > 2 ? bytes[2] : 0)
        var pages: [PageID: [UInt8]] = [:]
        var offset = 3, id: PageID = 1
        while offset < bytes.count, id <= 255 {
            var page = Array(bytes[offset..<min(offset + format.pageSize, bytes.count)])
            if page.count < format.pageSize { page += [UInt8](repeating: 0, count: format.pageSize - page.count) }
            pages[id] = page
            offset += format.pageSize
            id += 1
        }
        return (format, control & 2 != 0, rowsRoot, rowidsRoot, pages)
    }

    static func run(_ data: UnsafeRawBufferPointer) {
        let (format, checksums, rowsRoot, rowidsRoot, pages) = decode(Array(data))
        let source = Source(pages: pages, format: format, checksums: checksums)
        guard var keydir = try? Keydir(rowsRoot: rowsRoot, rowidsRoot: rowidsRoot, format: format, source: source) else { return }
        _ = try? keydir.validate()
        var names: [String] = []
        _ = try? keydir.forEachCollection { name, _ in names.append(name); return names.count < 50 }
        var visited = 0
        _ = try? keydir.forEachRow { collection, key, entry in
            visited += 1
            _ = try? keydir.entry(collection: collection, key: key)
            _ = try? keydir.key(forRowid: entry.rowid)
            return visited < 2_000
        }
        for name in names.prefix(5) {
            _ = try? keydir.count(inCollection: name)
            _ = try? keydir.forEachKey(inCollection: name, reversed: true) { _, _ in true }
        }
        // Changes over hostile pages: typed errors or a directory that still checks out.
        let entry = KeydirEntry(rowid: 1 << 40, object: ValueLocation(segment: 1, offset: 64, length: 20))
        _ = try? keydir.set(entry, collection: names.first ?? "c", key: "fuzz")
        _ = try? keydir.remove(collection: names.first ?? "c", key: "fuzz")
        _ = try? keydir.removeCollection(names.last ?? "c")
        var written: [PageID: [UInt8]] = [:]
        var next: PageID = 1_000
        _ = keydir.flush(allocate: { () throws(Never) -> PageID in next += 1; return next },
                         write: { (id, bytes) throws(Never) in written[id] = Array(bytes) })
    }

    /// Seeds: real directories of a few shapes, written as pages.
    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        // The last two shapes keep one long collection name, so the pages share long key
        // prefixes and the row-id tree's leaves a value prefix (format §11).
        for (control, rows, oneCollection) in [(0, 3, false), (0, 60, false), (1, 200, false), (2, 120, false), (3, 40, false), (0, 0, false),
                                               (0, 90, true), (3, 160, true)] as [(UInt8, Int, Bool)] {
            let format = PageFormat(pageSize: control & 1 == 0 ? 256 : 512)
            var keydir = Keydir(format: format)
            for i in 0..<rows {
                let metadata: ValueLocation? = i % 3 == 0 ? ValueLocation(segment: 2, offset: UInt32(i), length: 9) : nil
                let entry = KeydirEntry(rowid: UInt64(i + 1), object: ValueLocation(segment: 1, offset: UInt32(64 + i * 30), length: 30),
                                        metadata: metadata)
                let collection = oneCollection ? "conversations" : i % 4 == 0 ? "a\u{0}b" : "c\(i % 3)"
                _ = try? keydir.set(entry, collection: collection, key: "key-\(i * 7919 % 1000)")
            }
            var pages: [PageID: [UInt8]] = [:]
            var next: PageID = 0
            let flush = keydir.flush(allocate: { () throws(Never) -> PageID in next += 1; return next },
                                     write: { (id, bytes) throws(Never) in pages[id] = Array(bytes) })
            guard next < 255 else { continue }
            var seed: [UInt8] = [control, UInt8(flush.rows.root), UInt8(flush.rowids.root)]
            for id in pages.keys.sorted() { seed += pages[id]! }
            seeds.append(seed)
            if rows == 120, let dag = sharedPagesSeed(seed, format: format) { seeds.append(dag) }
        }
        return seeds
    }

    /// `seed` with its rows tree replaced by a DAG (reliability finding F21): a branch whose
    /// children all point at its first child, with copies stacked above it, each pointing
    /// every child at the one below, so a few pages claim millions of entries. Nil when the
    /// seed has no branch of three children or no room for the stack.
    static func sharedPagesSeed(_ seed: [UInt8], format: PageFormat) -> [UInt8]? {
        var (_, _, _, rowidsRoot, pages) = decode(seed)
        guard let branch = pages.keys.sorted().first(where: { id in
            pages[id]![PageLayout.kindOffset] == PageKind.keyedBranch.rawValue && pages[id]![PageLayout.countOffset] >= 3
        }) else { return nil }
        func u64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
            bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian }
        }
        func store(_ value: UInt64, at offset: Int, in bytes: inout [UInt8]) {
            withUnsafeBytes(of: value.littleEndian) { for (i, byte) in $0.enumerated() { bytes[offset + i] = byte } }
        }
        var bytes = pages[branch]!
        let width = Int(bytes[PageLayout.countOffset]), first = PageLayout.keyedBodyStart, size = PageLayout.keyedChildSize
        var below = u64(bytes, first), belowCount = u64(bytes, first + 8)
        var top = branch, next = (pages.keys.max() ?? 0) + 1
        for _ in 0..<12 where next < 255 {
            for slot in 0..<width {
                store(below, at: first + slot * size, in: &bytes)
                store(belowCount, at: first + slot * size + 8, in: &bytes)
            }
            store(belowCount * UInt64(width), at: PageLayout.subtreeCountOffset, in: &bytes)
            bytes.withUnsafeMutableBytes { format.seal($0) }
            pages[top] = bytes
            (below, belowCount) = (top, belowCount * UInt64(width))
            top = next
            next += 1
            bytes[PageLayout.levelOffset] += 1
        }
        var dag: [UInt8] = [seed[0], UInt8(below), UInt8(rowidsRoot)]
        for id in 1...(pages.keys.max() ?? 0) { dag += pages[id] ?? [UInt8](repeating: 0, count: format.pageSize) }
        return dag
    }
}
