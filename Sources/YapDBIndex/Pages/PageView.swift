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
    /// root (then any level up to `PageLayout.maximumLevel` is accepted). A keyed page's prefix
    /// lengths are read where they are used (`checkPrefixes`, `placeAgainstPrefix`), so a
    /// descent pays for them only on the pages it searches.
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
        let bodyStart = family == .keyed ? PageLayout.keyedBodyStart : PageLayout.headerSize
        guard count >= minimumCount, bodyStart + count * family.minimumEntryBytes(level: level) <= pageSize else {
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
    /// the header on), each checked as `childAt` checks it (keyed children start at `keyedBodyStart`). A sum of at most a page's children,
    /// each at most `PageLayout.maximumSubtreeCount`, cannot overflow.
    /// - Precondition: `k <= count`.
    @inline(__always)
    func countsBefore(_ k: Int, childSize: Int) throws(PageError) -> Int {
        var sum = 0, offset = childSize == PageLayout.keyedChildSize ? PageLayout.keyedBodyStart : PageLayout.headerSize
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
    /// Keyed pages: the bytes every key (leaf) or separator (branch) starts with, stored once
    /// at `prefixStart`, as the page says (unchecked: `checkPrefixes`).
    @inline(__always)
    var keyPrefix: Int { u16(PageLayout.keyPrefixOffset) }

    /// Keyed leaves: the bytes every value starts with, stored after the key prefix, as the
    /// page says (unchecked: `checkPrefixes`).
    @inline(__always)
    var valuePrefix: Int { u16(PageLayout.valuePrefixOffset) }

    /// Keyed pages: where the prefixes start, past the slots (the count check of `init` keeps
    /// it inside the page).
    @inline(__always)
    var prefixStart: Int {
        level == 0 ? PageLayout.keyedBodyStart &+ count &* PageLayout.slotSize
            : PageLayout.keyedBodyStart &+ count &* PageLayout.keyedChildSize &+ (count &- 1) &* PageLayout.slotSize
    }

    /// The first byte of the entries (leaf) or separators (branch): past the slots and the
    /// shared prefixes. Past the page's end when the prefix lengths are damaged, so every entry
    /// and separator fails its bounds check then: an entry that passes it proves the prefixes
    /// lie inside the page.
    @inline(__always)
    var keyedDataStart: Int { prefixStart &+ keyPrefix &+ valuePrefix }

    /// Throws `.badPrefix` unless the prefixes lie inside the page after the slots and a branch
    /// has no value prefix: what decoding a page checks first.
    func checkPrefixes() throws(PageError) {
        let key = keyPrefix, value = valuePrefix
        guard level == 0 || value == 0, prefixStart &+ key &+ value <= bytes.count else {
            throw .corrupt(page: id, reason: .badPrefix(key: key, value: value))
        }
    }

    /// The bytes every key (leaf) or separator (branch) of this page starts with. Inside the
    /// page once `checkPrefixes` passed or an entry of the page was found in bounds.
    @inline(__always)
    var sharedKeyPrefix: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base + prefixStart, count: keyPrefix) }

    /// The bytes every value of this leaf starts with (inside the page as `sharedKeyPrefix`).
    @inline(__always)
    var sharedValuePrefix: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base + (prefixStart &+ keyPrefix), count: valuePrefix) }

    /// The offset of leaf entry `i`, checked to leave room for its two lengths.
    @inline(__always)
    func leafEntryOffset(_ i: Int) throws(PageError) -> Int {
        let offset = u16(PageLayout.keyedBodyStart &+ i &* PageLayout.slotSize)
        guard offset >= keyedDataStart, offset &+ PageLayout.leafEntryHeader <= bytes.count else {
            throw .corrupt(page: id, reason: .slotOutOfRange(slot: i))
        }
        return offset
    }

    /// The stored parts of leaf entry `i`: its key and value without the page's shared
    /// prefixes.
    @inline(__always)
    func leafSuffixes(_ i: Int) throws(PageError) -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let offset = try leafEntryOffset(i)
        let keyLength = u16(offset), valueLength = u16(offset &+ 2)
        let keyStart = offset &+ PageLayout.leafEntryHeader
        let key = try slice(keyStart, keyLength, slot: i)
        let value = try slice(keyStart &+ keyLength, valueLength, slot: i)
        return (key, value)
    }

    /// Calls `body` with leaf entry `i`'s whole key and value: in place when the page shares
    /// no prefix, else put together in a temporary buffer. The bytes are valid only during
    /// the call.
    /// - Throws: `.slotOutOfRange` for an entry outside the page; `.overfilled` when the whole
    ///   entry would exceed `PageFormat.maximumEntrySize` (no page a writer made does).
    @inline(__always)
    func withLeafEntry<R>(
        _ i: Int, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(PageError) -> R
    ) throws(PageError) -> R {
        let (key, value) = try leafSuffixes(i)
        if keyPrefix == 0 && valuePrefix == 0 { return try body(key, value) }
        let keyCount = keyPrefix &+ key.count, valueCount = valuePrefix &+ value.count
        guard keyCount &+ valueCount <= PageFormat.maximumEntrySize(pageSize: bytes.count) else {
            throw .corrupt(page: id, reason: .overfilled)
        }
        let result: Result<R, PageError> = withUnsafeTemporaryAllocation(byteCount: keyCount &+ valueCount, alignment: 1) { buffer in
            let start = buffer.baseAddress.unsafelyUnwrapped
            Self.join(start, sharedKeyPrefix, key)
            Self.join(start + keyCount, sharedValuePrefix, value)
            return Result { () throws(PageError) -> R in
                try body(UnsafeRawBufferPointer(start: start, count: keyCount), UnsafeRawBufferPointer(start: start + keyCount, count: valueCount))
            }
        }
        return try result.get()
    }

    /// Calls `body` with leaf entry `i`'s whole value (in place unless the page shares a value
    /// prefix); the key is not put together.
    @inline(__always)
    func withLeafValue<R>(_ i: Int, _ body: (_ value: UnsafeRawBufferPointer) throws(PageError) -> R) throws(PageError) -> R {
        let value = try leafSuffixes(i).value
        if valuePrefix == 0 { return try body(value) }
        let valueCount = valuePrefix &+ value.count
        guard valueCount <= PageFormat.maximumEntrySize(pageSize: bytes.count) else { throw .corrupt(page: id, reason: .overfilled) }
        let result: Result<R, PageError> = withUnsafeTemporaryAllocation(byteCount: valueCount, alignment: 1) { buffer in
            let start = buffer.baseAddress.unsafelyUnwrapped
            Self.join(start, sharedValuePrefix, value)
            return Result { () throws(PageError) -> R in try body(UnsafeRawBufferPointer(start: start, count: valueCount)) }
        }
        return try result.get()
    }

    /// Copies `prefix` then `suffix` to `destination`.
    @inline(__always)
    private static func join(_ destination: UnsafeMutableRawPointer, _ prefix: UnsafeRawBufferPointer, _ suffix: UnsafeRawBufferPointer) {
        if let source = prefix.baseAddress, prefix.count > 0 { destination.copyMemory(from: source, byteCount: prefix.count) }
        if let source = suffix.baseAddress, suffix.count > 0 { (destination + prefix.count).copyMemory(from: source, byteCount: suffix.count) }
    }

    /// Branch child `i` of a keyed branch.
    @inline(__always)
    func keyedChild(_ i: Int) throws(PageError) -> (page: PageID, count: Int) {
        try childAt(PageLayout.keyedBodyStart &+ i &* PageLayout.keyedChildSize, slot: i)
    }

    /// The stored part of separator `i` of a keyed branch (without the page's shared prefix).
    @inline(__always)
    func separatorSuffix(_ i: Int) throws(PageError) -> UnsafeRawBufferPointer {
        let key = try keyBytes(slotOffset: separatorSlots &+ i &* PageLayout.slotSize,
                               header: PageLayout.separatorHeader, dataStart: keyedDataStart, slot: i)
        return UnsafeRawBufferPointer(start: key.start, count: key.count)
    }

    /// Where a keyed branch's separator slots start.
    @inline(__always)
    private var separatorSlots: Int { PageLayout.keyedBodyStart &+ count &* PageLayout.keyedChildSize }

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

    /// Where `key` stands against the page's shared key prefix: `.before` every key of the
    /// page, `.after` every key, or `.within` with the part of `key` after the prefix (to be
    /// compared with the stored suffixes). Every key of the page is the prefix plus its
    /// suffix, so memcmp order against `key` is the suffix's order against that remainder.
    /// - Throws: `.badPrefix` when the key prefix does not fit the page.
    @inline(__always)
    func placeAgainstPrefix(_ key: UnsafeRawBufferPointer) throws(PageError) -> PrefixPlace {
        let p = keyPrefix
        if p == 0 { return .within(key) }
        let start = prefixStart
        guard start &+ p <= bytes.count else { throw .corrupt(page: id, reason: .badPrefix(key: p, value: valuePrefix)) }
        let order = compareBytes(base + start, p, key.baseAddress ?? base, min(key.count, p))
        if order > 0 { return .before }
        if order < 0 { return .after }
        return .within(UnsafeRawBufferPointer(start: (key.baseAddress ?? base) + p, count: key.count &- p))
    }

    /// In a keyed leaf: the first index whose key is not less than `key`, and whether it equals.
    func leafSearch(_ key: UnsafeRawBufferPointer) throws(PageError) -> (index: Int, found: Bool) {
        let rest: UnsafeRawBufferPointer
        switch try placeAgainstPrefix(key) {
        case .before: return (0, false)
        case .after: return (count, false)
        case .within(let suffix): rest = suffix
        }
        let dataStart = keyedDataStart
        var low = 0, high = count
        while low < high {
            let mid = (low &+ high) &>> 1
            let order = try leafOrder(mid, dataStart: dataStart, rest)
            if order < 0 { low = mid &+ 1 } else if order > 0 { high = mid } else { return (mid, true) }
        }
        return (low, false)
    }

    /// In a keyed leaf: the memcmp order of entry `i`'s stored key suffix against `suffix` (a
    /// key with the page's shared prefix taken off, `placeAgainstPrefix`): negative when the
    /// entry's is less; `dataStart` is `keyedDataStart`. One step of `leafSearch`.
    @inline(__always)
    func leafOrder(_ i: Int, dataStart: Int, _ suffix: UnsafeRawBufferPointer) throws(PageError) -> Int {
        let entry = try keyBytes(slotOffset: PageLayout.keyedBodyStart &+ i &* PageLayout.slotSize,
                                 header: PageLayout.leafEntryHeader, dataStart: dataStart, slot: i)
        return compareBytes(entry.start, entry.count, suffix.baseAddress ?? base, suffix.count)
    }

    /// In a keyed leaf: where entry `i` starts, as its slot says — unchecked, for a cache hint
    /// only — or nil when the slot points outside the page.
    @inline(__always)
    func leafEntryStart(_ i: Int) -> UnsafeRawPointer? {
        let offset = u16(PageLayout.keyedBodyStart &+ i &* PageLayout.slotSize)
        return offset < bytes.count ? base + offset : nil
    }

    /// The address of byte `offset` of the page (for a cache hint).
    @inline(__always)
    func address(_ offset: Int) -> UnsafeRawPointer { base + offset }

    /// In a keyed branch: the child whose range holds `key` (the number of separators ≤ key).
    func branchSearch(_ key: UnsafeRawBufferPointer) throws(PageError) -> Int {
        let rest: UnsafeRawBufferPointer
        switch try placeAgainstPrefix(key) {
        case .before: return 0
        case .after: return count &- 1
        case .within(let suffix): rest = suffix
        }
        let dataStart = keyedDataStart, target = rest.baseAddress ?? base
        let slots = separatorSlots
        var low = 0, high = count &- 1
        while low < high {
            let mid = (low &+ high) &>> 1
            let separator = try keyBytes(slotOffset: slots &+ mid &* PageLayout.slotSize,
                                         header: PageLayout.separatorHeader, dataStart: dataStart, slot: mid)
            if compareBytes(separator.start, separator.count, target, rest.count) <= 0 { low = mid &+ 1 } else { high = mid }
        }
        return low
    }
}

/// Where a key stands against a keyed page's shared key prefix (`PageView.placeAgainstPrefix`).
enum PrefixPlace {
    /// Less than every key of the page.
    case before
    /// Greater than every key of the page.
    case after
    /// Starts with the prefix; the rest of the key.
    case within(UnsafeRawBufferPointer)
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
