// PageView: a bounds-checked view of one page's bytes, as handed out by a PageSource. Every
// length, offset and count is checked against the page size before use.

/// The two families of trees; each has a leaf kind and a branch kind.
enum TreeFamily: Sendable {
    case keyed, rows

    /// The kind byte of a page at `level` of this family.
    func kind(level: Int) -> PageKind {
        switch self {
        case .keyed: return level == 0 ? .keyedLeaf : .keyedBranch
        case .rows: return level == 0 ? .rowLeaf : .rowBranch
        }
    }

    /// The least bytes one entry (leaf) or child (branch) takes, to bound the count.
    func minimumEntryBytes(level: Int) -> Int {
        switch self {
        case .keyed:
            return level == 0 ? PageLayout.slotSize + PageLayout.leafEntryHeader
                : PageLayout.keyedChildSize + PageLayout.slotSize + PageLayout.separatorHeader
        case .rows: return level == 0 ? PageLayout.rowSize : PageLayout.rowChildSize
        }
    }
}

/// A page whose header has been checked: the kind and level match what the walk expects, the
/// count fits the page and the subtree count fits an `Int`.
struct PageView {
    let bytes: UnsafeRawBufferPointer
    let id: PageID
    /// Entries (leaf) or children (branch).
    let count: Int
    let level: Int
    /// Entries in the subtree, from the header.
    let subtreeCount: Int

    /// Checks the header of page `id`. `level` is the level the parent implies, or nil for a
    /// root (then any level up to `PageLayout.maximumLevel` is accepted).
    init(_ bytes: UnsafeRawBufferPointer, id: PageID, pageSize: Int, family: TreeFamily, level expected: Int?) throws(PageError) {
        guard bytes.count == pageSize else { throw .corrupt(page: id, reason: .wrongSize(bytes.count)) }
        let level = Int(bytes[PageLayout.levelOffset])
        if let expected, level != expected { throw .corrupt(page: id, reason: .badLevel(expected: expected, found: level)) }
        guard level <= PageLayout.maximumLevel else {
            throw .corrupt(page: id, reason: .badLevel(expected: PageLayout.maximumLevel, found: level))
        }
        let kind = bytes[PageLayout.kindOffset]
        guard kind == family.kind(level: level).rawValue else { throw .corrupt(page: id, reason: .badKind(found: kind)) }
        let count = Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: PageLayout.countOffset, as: UInt16.self)))
        let minimumCount = level == 0 ? 1 : 2
        guard count >= minimumCount, PageLayout.headerSize + count * family.minimumEntryBytes(level: level) <= pageSize else {
            throw .corrupt(page: id, reason: .badCount(count))
        }
        let subtree = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: PageLayout.subtreeCountOffset, as: UInt64.self))
        guard subtree <= UInt64(PageLayout.maximumSubtreeCount), level == 0 ? Int(subtree) == count : Int(subtree) >= count else {
            throw .corrupt(page: id, reason: .subtreeCountMismatch(expected: count, found: Int(clamping: subtree)))
        }
        self.bytes = bytes
        self.id = id
        self.count = count
        self.level = level
        self.subtreeCount = Int(subtree)
    }

    /// Throws `.countBeyondCapacity` unless this (root) page's subtree count fits in `pages`
    /// leaves of `family`, each as full as a page can be (`PageSource.pageCapacity`).
    func requireCapacity(pages: Int, family: TreeFamily) throws(PageError) {
        let perLeaf = (bytes.count - PageLayout.headerSize) / family.minimumEntryBytes(level: 0)
        let (capacity, overflow) = max(0, pages).multipliedReportingOverflow(by: perLeaf)
        guard overflow || subtreeCount <= capacity else {
            throw .corrupt(page: id, reason: .countBeyondCapacity(claimed: subtreeCount, capacity: capacity))
        }
    }

    /// Throws unless the header's subtree count is `expected` (what the parent recorded).
    func requireSubtreeCount(_ expected: Int) throws(PageError) {
        guard subtreeCount == expected else {
            throw .corrupt(page: id, reason: .subtreeCountMismatch(expected: expected, found: subtreeCount))
        }
    }

    @inline(__always)
    func u16(_ offset: Int) -> Int { Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))) }

    @inline(__always)
    func u64(_ offset: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }

    /// The bytes `offset..<offset + length`, or a `.slotOutOfRange(slot)` error.
    @inline(__always)
    func slice(_ offset: Int, _ length: Int, slot: Int) throws(PageError) -> UnsafeRawBufferPointer {
        guard offset + length <= bytes.count else { throw .corrupt(page: id, reason: .slotOutOfRange(slot: slot)) }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)])
    }

    /// The sum of the subtree counts of branch children `0..<k` (`childSize` bytes each, from
    /// the header on), each checked as `childAt` checks it. A sum of at most a page's children,
    /// each at most `PageLayout.maximumSubtreeCount`, cannot overflow.
    /// - Precondition: `k <= count`.
    @inline(__always)
    func countsBefore(_ k: Int, childSize: Int) throws(PageError) -> Int {
        var sum = 0, offset = PageLayout.headerSize
        for slot in 0..<k {
            let page = u64(offset), count = u64(offset &+ 8)
            guard page != .none else { throw .corrupt(page: id, reason: .nullChild(slot: slot)) }
            guard count &- 1 < UInt64(PageLayout.maximumSubtreeCount) else {
                throw .corrupt(page: id, reason: .subtreeCountMismatch(expected: 1, found: Int(clamping: count)))
            }
            sum &+= Int(count)
            offset &+= childSize
        }
        return sum
    }

    /// A child's page id and subtree count, at `offset`; a null page, or a count of zero or
    /// beyond `PageLayout.maximumSubtreeCount`, is corruption.
    @inline(__always)
    func childAt(_ offset: Int, slot: Int) throws(PageError) -> (page: PageID, count: Int) {
        let page = u64(offset), count = u64(offset + 8)
        guard page != .none else { throw .corrupt(page: id, reason: .nullChild(slot: slot)) }
        guard count >= 1, count <= UInt64(PageLayout.maximumSubtreeCount) else {
            throw .corrupt(page: id, reason: .subtreeCountMismatch(expected: 1, found: Int(clamping: count)))
        }
        return (page, Int(count))
    }
}

// MARK: - Keyed pages

extension PageView {
    /// The start of the entry (leaf) or separator (branch) data: past the slots.
    var keyedDataStart: Int {
        level == 0 ? PageLayout.headerSize + count * PageLayout.slotSize
            : PageLayout.headerSize + count * PageLayout.keyedChildSize + (count - 1) * PageLayout.slotSize
    }

    /// The offset of leaf entry `i`, checked to leave room for its two lengths.
    @inline(__always)
    func leafEntryOffset(_ i: Int) throws(PageError) -> Int {
        let offset = u16(PageLayout.headerSize + i * PageLayout.slotSize)
        guard offset >= keyedDataStart, offset + PageLayout.leafEntryHeader <= bytes.count else {
            throw .corrupt(page: id, reason: .slotOutOfRange(slot: i))
        }
        return offset
    }

    /// Leaf entry `i`: its key and value bytes.
    @inline(__always)
    func leafEntry(_ i: Int) throws(PageError) -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let offset = try leafEntryOffset(i)
        let keyLength = u16(offset), valueLength = u16(offset + 2)
        let keyStart = offset + PageLayout.leafEntryHeader
        let key = try slice(keyStart, keyLength, slot: i)
        let value = try slice(keyStart + keyLength, valueLength, slot: i)
        return (key, value)
    }

    /// Branch child `i` of a keyed branch.
    @inline(__always)
    func keyedChild(_ i: Int) throws(PageError) -> (page: PageID, count: Int) {
        try childAt(PageLayout.headerSize + i * PageLayout.keyedChildSize, slot: i)
    }

    /// Separator `i` of a keyed branch (the least key of child `i + 1`'s range).
    @inline(__always)
    func separator(_ i: Int) throws(PageError) -> UnsafeRawBufferPointer {
        let key = try keyBytes(slotOffset: PageLayout.headerSize + count * PageLayout.keyedChildSize + i * PageLayout.slotSize,
                               header: PageLayout.separatorHeader, dataStart: keyedDataStart, slot: i)
        return UnsafeRawBufferPointer(start: key.start, count: key.count)
    }

    /// The first byte of the page (a page is never empty: `init` checked its size).
    @inline(__always)
    private var base: UnsafeRawPointer { bytes.baseAddress.unsafelyUnwrapped }

    /// The key bytes of an entry (leaf: `header` = `leafEntryHeader`) or separator (branch:
    /// `separatorHeader`) whose slot is at `slotOffset`, as a start and a length, checked to
    /// lie inside the page after `dataStart` (`keyedDataStart`, passed in by the searches,
    /// which compute it once). Slot `slot` names it in errors.
    @inline(__always)
    private func keyBytes(slotOffset: Int, header: Int, dataStart: Int, slot: Int) throws(PageError) -> (start: UnsafeRawPointer, count: Int) {
        let offset = u16(slotOffset)
        guard offset >= dataStart, offset &+ header <= bytes.count else { throw .corrupt(page: id, reason: .slotOutOfRange(slot: slot)) }
        let length = u16(offset), start = offset &+ header
        guard start &+ length <= bytes.count else { throw .corrupt(page: id, reason: .slotOutOfRange(slot: slot)) }
        return (base + start, length)
    }

    /// In a keyed leaf: the first index whose key is not less than `key`, and whether it equals.
    func leafSearch(_ key: UnsafeRawBufferPointer) throws(PageError) -> (index: Int, found: Bool) {
        let dataStart = keyedDataStart
        var low = 0, high = count
        while low < high {
            let mid = (low &+ high) &>> 1
            let order = try leafOrder(mid, dataStart: dataStart, key)
            if order < 0 { low = mid &+ 1 } else if order > 0 { high = mid } else { return (mid, true) }
        }
        return (low, false)
    }

    /// In a keyed leaf: the memcmp order of entry `i`'s key against `key` (negative when the
    /// entry's is less); `dataStart` is `keyedDataStart`. One step of `leafSearch`.
    @inline(__always)
    func leafOrder(_ i: Int, dataStart: Int, _ key: UnsafeRawBufferPointer) throws(PageError) -> Int {
        let entry = try keyBytes(slotOffset: PageLayout.headerSize &+ i &* PageLayout.slotSize,
                                 header: PageLayout.leafEntryHeader, dataStart: dataStart, slot: i)
        return compareBytes(entry.start, entry.count, key.baseAddress ?? base, key.count)
    }

    /// In a keyed leaf: where entry `i` starts, as its slot says — unchecked, for a cache hint
    /// only — or nil when the slot points outside the page.
    @inline(__always)
    func leafEntryStart(_ i: Int) -> UnsafeRawPointer? {
        let offset = u16(PageLayout.headerSize &+ i &* PageLayout.slotSize)
        return offset < bytes.count ? base + offset : nil
    }

    /// The address of byte `offset` of the page (for a cache hint).
    @inline(__always)
    func address(_ offset: Int) -> UnsafeRawPointer { base + offset }

    /// In a keyed branch: the child whose range holds `key` (the number of separators ≤ key).
    func branchSearch(_ key: UnsafeRawBufferPointer) throws(PageError) -> Int {
        let dataStart = keyedDataStart, target = key.baseAddress ?? base
        let slots = PageLayout.headerSize &+ count &* PageLayout.keyedChildSize
        var low = 0, high = count &- 1
        while low < high {
            let mid = (low &+ high) &>> 1
            let separator = try keyBytes(slotOffset: slots &+ mid &* PageLayout.slotSize,
                                         header: PageLayout.separatorHeader, dataStart: dataStart, slot: mid)
            if compareBytes(separator.start, separator.count, target, key.count) <= 0 { low = mid &+ 1 } else { high = mid }
        }
        return low
    }
}

// MARK: - Row pages

extension PageView {
    /// Row id `i` of a row leaf (the count check in `init` keeps it inside the page).
    @inline(__always)
    func rowid(_ i: Int) -> UInt64 { u64(PageLayout.headerSize + i * PageLayout.rowSize) }

    /// Child `i` of a row branch: page, subtree count and the subtree's first row id.
    @inline(__always)
    func rowChild(_ i: Int) throws(PageError) -> (page: PageID, count: Int, first: UInt64) {
        let offset = PageLayout.headerSize + i * PageLayout.rowChildSize
        let (page, count) = try childAt(offset, slot: i)
        return (page, count, u64(offset + 16))
    }
}

/// memcmp order of two byte strings: negative, zero or positive.
@inline(__always)
func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    guard let x = a.baseAddress, let y = b.baseAddress else { return a.count - b.count }
    return compareBytes(x, a.count, y, b.count)
}

/// memcmp order of the `aCount` bytes at `a` and the `bCount` bytes at `b`: eight bytes at a
/// time, then four, then one; reads nothing past either end.
@inline(__always)
func compareBytes(_ a: UnsafeRawPointer, _ aCount: Int, _ b: UnsafeRawPointer, _ bCount: Int) -> Int {
    let common = min(aCount, bCount)
    var i = 0
    while i &+ 8 <= common {
        let x = a.loadUnaligned(fromByteOffset: i, as: UInt64.self), y = b.loadUnaligned(fromByteOffset: i, as: UInt64.self)
        if x != y { return UInt64(bigEndian: x) < UInt64(bigEndian: y) ? -1 : 1 }
        i &+= 8
    }
    if i &+ 4 <= common {
        let x = a.loadUnaligned(fromByteOffset: i, as: UInt32.self), y = b.loadUnaligned(fromByteOffset: i, as: UInt32.self)
        if x != y { return UInt32(bigEndian: x) < UInt32(bigEndian: y) ? -1 : 1 }
        i &+= 4
    }
    while i < common {
        let x = a.load(fromByteOffset: i, as: UInt8.self), y = b.load(fromByteOffset: i, as: UInt8.self)
        if x != y { return x < y ? -1 : 1 }
        i &+= 1
    }
    return aCount &- bCount
}
