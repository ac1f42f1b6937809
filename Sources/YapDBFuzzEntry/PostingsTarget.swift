import YapDB
import YapDBIndex

/// The `postings` target: hostile index pages under a full-text index's trees.
///
/// Input: byte 0 chooses the page size (bit 0: 256 or 512), whether the source checks
/// checksums (bit 1) and the column count (bits 2–3, plus one); bytes 1 to 4 name the root
/// pages of the `terms`, `postings`, `positions` and `documents` trees (0: empty); the rest is
/// cut into pages numbered from 1. Every query form, verification and change over them must end
/// in a value or a typed error (`FullTextPagesProbe`): a trap, a hang or a huge allocation is a
/// finding.
enum PostingsTarget {
    static let name = "postings"

    static func run(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        let control = bytes.first ?? 0
        let format = PageFormat(pageSize: control & 1 == 0 ? 256 : 512)
        let roots = (1...4).map { PageID($0 < bytes.count ? bytes[$0] : 0) }
        var pages: [PageID: [UInt8]] = [:]
        var offset = 5, id: PageID = 1
        while offset < bytes.count, id <= 255 {
            var page = Array(bytes[offset..<min(offset + format.pageSize, bytes.count)])
            if page.count < format.pageSize { page += [UInt8](repeating: 0, count: format.pageSize - page.count) }
            pages[id] = page
            offset += format.pageSize
            id += 1
        }
        let source = PagesTarget.Source(pages: pages, format: format, checksums: control & 2 != 0)
        FullTextPagesProbe.exercise(roots: roots, columnCount: Int((control >> 2) & 3) + 1, format: format, source: source)
    }

    /// Seeds: real full-text indexes of a few shapes, written as pages.
    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        for (control, rows) in [(0, 3), (1, 40), (2 | 4, 20), (3 | 8, 30), (1 | 12, 10), (0, 0)] as [(UInt8, Int)] {
            let format = PageFormat(pageSize: control & 1 == 0 ? 256 : 512)
            guard let (roots, pages) = FullTextPagesProbe.writtenIndex(rows: rows, columnCount: Int((control >> 2) & 3) + 1, format: format),
                  pages.count < 255 else { continue }
            var seed: [UInt8] = [control] + roots.map { UInt8(truncatingIfNeeded: $0) }
            for id in pages.keys.sorted() { seed += pages[id]! }
            seeds.append(seed)
        }
        return seeds
    }
}
