// PageLayout: the byte layout of index pages (docs/format.md, "Index pages") — the one home of
// its offsets and sizes — and PageFormat, the page size and checksum a tree is created with.

/// The kinds of index page; the value is the page's kind byte.
package enum PageKind: UInt8, Sendable {
    /// A leaf of a key-ordered tree: sorted (key, value) byte strings.
    case keyedLeaf = 0x4C  // "L"
    /// A branch of a key-ordered tree: children with subtree counts, and separator keys.
    case keyedBranch = 0x42  // "B"
    /// A leaf of an order-statistic row tree: row ids in position order.
    case rowLeaf = 0x6C  // "l"
    /// A branch of an order-statistic row tree: children with subtree counts and first row ids.
    case rowBranch = 0x62  // "b"
}

/// Offsets and sizes of the page layout. All integers are little-endian.
package enum PageLayout {
    // Header, every page kind.
    /// UInt32: CRC32C of bytes `checksummedFrom..<pageSize`.
    package static let checksumOffset = 0
    /// The first byte the checksum covers.
    package static let checksummedFrom = 4
    /// UInt8: `PageKind`.
    package static let kindOffset = 4
    /// UInt8: 0 for a leaf; a branch is one more than its children.
    package static let levelOffset = 5
    /// UInt16: entries (leaf) or children (branch) in this page.
    package static let countOffset = 6
    /// UInt64: entries in the subtree rooted at this page.
    package static let subtreeCountOffset = 8
    /// Bytes before the first entry.
    package static let headerSize = 16

    /// The largest subtree count a page may record (2^48): sums of a page's children then
    /// cannot overflow an `Int`, whatever the bytes say.
    package static let maximumSubtreeCount = 1 << 48

    /// The highest level a page may have (a tree of height 33); deeper is corruption.
    package static let maximumLevel = 32

    // Keyed pages, both kinds: after the header, the prefix lengths (UInt16 key prefix,
    // UInt16 value prefix; a branch's value prefix is 0), then the body.
    /// UInt16: bytes every key (leaf) or separator (branch) of the page starts with, stored once.
    package static let keyPrefixOffset = 16
    /// UInt16: bytes every value of a leaf starts with, stored once (0 in a branch).
    package static let valuePrefixOffset = 18
    /// The first byte of a keyed page's body (slots or children).
    package static let keyedBodyStart = 20
    /// The least shared value prefix a writer stores (a shorter one is not worth the copy a
    /// reader then makes to hand out the value whole).
    package static let minimumValuePrefix = 4

    // Keyed leaf: `count` UInt16 slots at `keyedBodyStart`, each the offset of an entry; then
    // the key prefix and the value prefix; then the entries (UInt16 key-suffix length, UInt16
    // value-suffix length, key suffix, value suffix).
    /// Bytes per slot.
    package static let slotSize = 2
    /// Bytes before a leaf entry's key: key length and value length.
    package static let leafEntryHeader = 4

    // Keyed branch: `count` children of (UInt64 page, UInt64 subtree count) at `keyedBodyStart`,
    // then `count - 1` UInt16 separator slots, each the offset of (UInt16 length, suffix bytes),
    // then the separators' shared prefix, then the separators.
    /// Bytes per keyed-branch child.
    package static let keyedChildSize = 16
    /// Bytes before a separator's key: its length.
    package static let separatorHeader = 2

    // Row leaf: `count` UInt64 row ids at `headerSize`.
    /// Bytes per row id.
    package static let rowSize = 8
    // Row branch: `count` children of (UInt64 page, UInt64 subtree count, UInt64 first row id).
    /// Bytes per row-branch child.
    package static let rowChildSize = 24

    /// The smallest and largest page sizes.
    package static let pageSizes = 256...65536
}

/// The page size and checksum of a tree, fixed when the tree is created.
///
/// Threading: a value; safe to send anywhere.
package struct PageFormat: Sendable {
    /// Bytes per page: a power of two in `PageLayout.pageSizes`.
    package let pageSize: Int
    /// The page checksum (CRC32C).
    package let checksum: PageChecksum

    /// A format of `pageSize` bytes per page.
    /// - Precondition: `isValid(pageSize:)` (a size read from disk is checked with it first).
    package init(pageSize: Int = 4096, checksum: PageChecksum = .crc32c) {
        precondition(Self.isValid(pageSize: pageSize), "PageFormat: page size \(pageSize) is not a power of two in \(PageLayout.pageSizes)")
        self.pageSize = pageSize
        self.checksum = checksum
    }

    /// Whether `pageSize` is a power of two in `PageLayout.pageSizes`.
    package static func isValid(pageSize: Int) -> Bool {
        PageLayout.pageSizes.contains(pageSize) && pageSize & (pageSize - 1) == 0
    }

    /// Bytes available after the header.
    var payloadSize: Int { pageSize - PageLayout.headerSize }

    /// The largest key + value of a keyed-tree entry: a leaf entry (with its slot and header)
    /// takes at most a quarter of the payload, so any split leaves both halves within a page.
    package var maximumEntrySize: Int { Self.maximumEntrySize(pageSize: pageSize) }

    /// `maximumEntrySize` for pages of `pageSize` bytes.
    @inline(__always)
    static func maximumEntrySize(pageSize: Int) -> Int {
        (pageSize &- PageLayout.headerSize) / 4 &- PageLayout.slotSize &- PageLayout.leafEntryHeader
    }

    /// The least payload bytes of a keyed node other than the root (an eighth of the payload).
    var minimumKeyedPayload: Int { payloadSize / 8 }

    /// Row ids per row leaf.
    var rowLeafCapacity: Int { payloadSize / PageLayout.rowSize }

    /// Children per row branch.
    var rowBranchCapacity: Int { payloadSize / PageLayout.rowChildSize }

    /// The stored checksum of `page` matches its bytes.
    package func checksumMatches(_ page: UnsafeRawBufferPointer) -> Bool {
        guard page.count == pageSize else { return false }
        let stored = page.loadUnaligned(fromByteOffset: PageLayout.checksumOffset, as: UInt32.self)
        return UInt32(littleEndian: stored) == checksum.compute(UnsafeRawBufferPointer(rebasing: page[PageLayout.checksummedFrom...]))
    }

    /// Throws `.corrupt(page:reason:)` unless `page` is one page whose checksum matches: what a
    /// page source calls before it first hands out a page.
    package func verify(_ page: UnsafeRawBufferPointer, id: PageID) throws(PageError) {
        guard page.count == pageSize else { throw .corrupt(page: id, reason: .wrongSize(page.count)) }
        guard checksumMatches(page) else { throw .corrupt(page: id, reason: .checksumMismatch) }
    }

    /// Writes the checksum of `page` into its header.
    package func seal(_ page: UnsafeMutableRawBufferPointer) {
        let crc = checksum.compute(UnsafeRawBufferPointer(rebasing: page[PageLayout.checksummedFrom...]))
        page.storeBytes(of: crc.littleEndian, toByteOffset: PageLayout.checksumOffset, as: UInt32.self)
    }
}
