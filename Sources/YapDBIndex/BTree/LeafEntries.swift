// LeafEntries: the entries of a dirty keyed leaf, packed in one byte array.

/// The entries of a dirty `KeyedNode` leaf, in key order, packed in one byte array (UInt16 key
/// length, UInt16 value length, key, value — whole keys and values, without the page's shared
/// prefixes): `starts[i]` is where entry `i` begins. Decoding a page is one pass over its
/// entries, not an allocation per key and value. Replacing or removing an entry leaves its old
/// bytes behind until the array is compacted (when more than half of it is garbage); encoding
/// writes only the live entries.
struct LeafEntries: Sendable {
    private(set) var bytes: [UInt8]
    private(set) var starts: ContiguousArray<Int>
    /// Bytes of the live entries (without slots).
    private(set) var liveBytes: Int
    /// A length every value starts with the same bytes for: exact after a decode, a slice or
    /// appends, and a lower bound after removals (which can only lengthen the shared part).
    /// Encoding stores it when it is at least `PageLayout.minimumValuePrefix`.
    private(set) var valuePrefix: Int

    init() {
        bytes = []
        starts = []
        liveBytes = 0
        valuePrefix = 0
    }

    /// The entries of a checked leaf page, checked one by one: each inside the page, keys
    /// strictly ascending, each key + value at most `maximumEntrySize`.
    init(page view: PageView, maximumEntrySize: Int) throws(PageError) {
        self.init()
        try view.checkPrefixes()
        bytes.reserveCapacity(view.bytes.count + view.count * (view.keyPrefix + view.valuePrefix))
        starts.reserveCapacity(view.count)
        for i in 0..<view.count {
            try view.withLeafEntry(i) { (key, value) throws(PageError) in
                if let last = starts.last {
                    let order = bytes.withUnsafeBytes { raw in
                        compareBytes(UnsafeRawBufferPointer(rebasing: raw[(last + PageLayout.leafEntryHeader)...].prefix(Int(raw.u16(last)))), key)
                    }
                    if order >= 0 { throw .corrupt(page: view.id, reason: .keysOutOfOrder(slot: i)) }
                }
                guard key.count + value.count <= maximumEntrySize else { throw .corrupt(page: view.id, reason: .overfilled) }
                append(key, value)
            }
        }
        // What the page stored (0 when its writer shared none): the size then comes out as the
        // page's, and a later encoding stores the same.
        valuePrefix = view.valuePrefix
    }

    var count: Int { starts.count }
    var isEmpty: Bool { starts.isEmpty }

    /// Page bytes of entry `i` with its slot.
    func pageBytes(_ i: Int) -> Int {
        bytes.withUnsafeBytes { raw in
            let start = starts[i]
            return PageLayout.slotSize + PageLayout.leafEntryHeader + Int(raw.u16(start)) + Int(raw.u16(start + 2))
        }
    }

    /// Calls `body` with the key and value of entry `i`.
    @inline(__always)
    func withEntry<R>(_ i: Int, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(PageError) -> R) throws(PageError) -> R {
        let result: Result<R, PageError> = bytes.withUnsafeBytes { raw in
            let start = starts[i]
            let keyLength = Int(raw.u16(start)), valueLength = Int(raw.u16(start + 2))
            let keyStart = start + PageLayout.leafEntryHeader
            let key = UnsafeRawBufferPointer(rebasing: raw[keyStart..<(keyStart + keyLength)])
            let value = UnsafeRawBufferPointer(rebasing: raw[(keyStart + keyLength)..<(keyStart + keyLength + valueLength)])
            return Result { () throws(PageError) -> R in try body(key, value) }
        }
        return try result.get()
    }

    /// Calls `body` with the key and value of entry `i` (a body that cannot throw).
    @inline(__always)
    func read<R>(_ i: Int, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> R) -> R {
        bytes.withUnsafeBytes { raw in
            let start = starts[i]
            let keyLength = Int(raw.u16(start)), valueLength = Int(raw.u16(start + 2))
            let keyStart = start + PageLayout.leafEntryHeader
            return body(UnsafeRawBufferPointer(rebasing: raw[keyStart..<(keyStart + keyLength)]),
                        UnsafeRawBufferPointer(rebasing: raw[(keyStart + keyLength)..<(keyStart + keyLength + valueLength)]))
        }
    }

    /// A copy of key `i`.
    func key(_ i: Int) -> [UInt8] { read(i) { key, _ in Array(key) } }

    /// A copy of value `i`.
    func value(_ i: Int) -> [UInt8] { read(i) { _, value in Array(value) } }

    /// The first index whose key is not less than `key`, and whether it is equal.
    func search(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        bytes.withUnsafeBytes { raw in
            var low = 0, high = starts.count
            while low < high {
                let mid = (low + high) >> 1
                let start = starts[mid] + PageLayout.leafEntryHeader
                let order = compareBytes(UnsafeRawBufferPointer(rebasing: raw[start..<(start + Int(raw.u16(start - 4)))]), key)
                if order < 0 { low = mid + 1 } else if order > 0 { high = mid } else { return (mid, true) }
            }
            return (low, false)
        }
    }

    /// The number of leading bytes all keys share: the first and last keys' (keys ascend).
    var keyPrefix: Int {
        guard let first = starts.first, let last = starts.last else { return 0 }
        return bytes.withUnsafeBytes { raw in
            commonPrefixLength(raw.baseAddress.unsafelyUnwrapped + first + PageLayout.leafEntryHeader, Int(raw.u16(first)),
                               raw.baseAddress.unsafelyUnwrapped + last + PageLayout.leafEntryHeader, Int(raw.u16(last)))
        }
    }

    /// The value prefix an encoding stores: `valuePrefix` when it is worth it, else 0.
    var storedValuePrefix: Int { valuePrefix >= PageLayout.minimumValuePrefix ? valuePrefix : 0 }

    /// Bytes each entry saves by the shared prefixes (`keyPrefix` and `storedValuePrefix`).
    var sharedPerEntry: Int { keyPrefix + storedValuePrefix }

    /// The size of these entries encoded as a leaf page: the header and prefix lengths, the
    /// slots, the shared prefixes once and each entry without them.
    var encodedSize: Int {
        guard count > 0 else { return PageLayout.keyedBodyStart }
        return PageLayout.keyedBodyStart + count * PageLayout.slotSize + liveBytes - (count - 1) * sharedPerEntry
    }

    /// `encodedSize` after appending `key` (greater than every key) and `value`.
    func encodedSize(appending key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Int {
        let n = count + 1, live = liveBytes + PageLayout.leafEntryHeader + key.count + value.count
        guard let first = starts.first else { return PageLayout.keyedBodyStart + PageLayout.slotSize + live }
        let (p, v) = bytes.withUnsafeBytes { raw -> (Int, Int) in
            let base = raw.baseAddress.unsafelyUnwrapped, keyLength = Int(raw.u16(first))
            let p = commonPrefixLength(base + first + PageLayout.leafEntryHeader, keyLength, key.baseAddress ?? base, key.count)
            let v = commonPrefixLength(base + first + PageLayout.leafEntryHeader + keyLength, min(Int(raw.u16(first + 2)), valuePrefix),
                                       value.baseAddress ?? base, value.count)
            return (p, v)
        }
        let stored = v >= PageLayout.minimumValuePrefix ? v : 0
        return PageLayout.keyedBodyStart + n * PageLayout.slotSize + live - (n - 1) * (p + stored)
    }

    /// Appends the bytes of an entry and returns where it starts; `valuePrefix` shrinks to what
    /// the value shares with entry `reference` (nil: the entry is the only one).
    private mutating func appendEntry(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, sharingWith reference: Int?) -> Int {
        if let reference {
            let shared = bytes.withUnsafeBytes { raw in
                let start = starts[reference], keyLength = Int(raw.u16(start))
                let base = raw.baseAddress.unsafelyUnwrapped
                return commonPrefixLength(base + start + PageLayout.leafEntryHeader + keyLength, min(Int(raw.u16(start + 2)), valuePrefix),
                                          value.baseAddress ?? base, value.count)
            }
            valuePrefix = min(valuePrefix, shared)
        } else {
            valuePrefix = value.count
        }
        let start = bytes.count
        bytes.append(UInt8(truncatingIfNeeded: key.count)); bytes.append(UInt8(truncatingIfNeeded: key.count >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value.count)); bytes.append(UInt8(truncatingIfNeeded: value.count >> 8))
        bytes.append(contentsOf: key)
        bytes.append(contentsOf: value)
        liveBytes += PageLayout.leafEntryHeader + key.count + value.count
        return start
    }

    /// Adds an entry after the last one (the caller keeps the keys sorted: a bottom-up build).
    mutating func append(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        starts.append(appendEntry(key, value, sharingWith: starts.isEmpty ? nil : 0))
    }

    /// Reserves room for about `bytes` bytes of entries and `count` slots.
    mutating func reserve(bytes: Int, count: Int) {
        self.bytes.reserveCapacity(bytes)
        starts.reserveCapacity(count)
    }

    /// Inserts an entry at `index` (the caller keeps the keys sorted).
    mutating func insert(_ key: [UInt8], _ value: [UInt8], at index: Int) {
        let reference: Int? = starts.isEmpty ? nil : 0
        let start = key.withUnsafeBytes { k in value.withUnsafeBytes { appendEntry(k, $0, sharingWith: reference) } }
        starts.insert(start, at: index)
    }

    /// Replaces the value of entry `index`; returns the old value.
    mutating func replaceValue(at index: Int, with value: [UInt8]) -> [UInt8] {
        let (key, old) = read(index) { (Array($0), Array($1)) }
        liveBytes -= PageLayout.leafEntryHeader + key.count + old.count
        let reference: Int? = count == 1 ? nil : (index == 0 ? 1 : 0)
        let start = key.withUnsafeBytes { k in value.withUnsafeBytes { appendEntry(k, $0, sharingWith: reference) } }
        starts[index] = start
        compactIfWasteful()
        return old
    }

    /// Removes entry `index`; returns its value.
    mutating func remove(at index: Int) -> [UInt8] {
        let (keyLength, old) = read(index) { ($0.count, Array($1)) }
        liveBytes -= PageLayout.leafEntryHeader + keyLength + old.count
        starts.remove(at: index)
        if starts.isEmpty { valuePrefix = 0 }
        compactIfWasteful()
        return old
    }

    /// The entries in `range`, packed afresh.
    func slice(_ range: Range<Int>) -> LeafEntries {
        var out = LeafEntries()
        out.bytes.reserveCapacity(liveBytes)
        out.starts.reserveCapacity(range.count)
        for i in range {
            let reference: Int? = out.starts.isEmpty ? nil : 0
            let start = read(i) { out.appendEntry($0, $1, sharingWith: reference) }
            out.starts.append(start)
        }
        return out
    }

    /// Appends the entries of `other` (all greater than this leaf's keys).
    mutating func append(contentsOf other: LeafEntries) {
        for i in 0..<other.count {
            let reference: Int? = starts.isEmpty ? nil : 0
            let start = other.read(i) { appendEntry($0, $1, sharingWith: reference) }
            starts.append(start)
        }
    }

    /// Rewrites the bytes when more than half of them are garbage.
    private mutating func compactIfWasteful() {
        if bytes.count > 2 * liveBytes + 256 { self = slice(0..<count) }
    }
}

/// The number of leading bytes the `aCount` bytes at `a` and the `bCount` bytes at `b` share.
@inline(__always)
func commonPrefixLength(_ a: UnsafeRawPointer, _ aCount: Int, _ b: UnsafeRawPointer, _ bCount: Int) -> Int {
    let common = min(aCount, bCount)
    var i = 0
    while i &+ 8 <= common, a.loadUnaligned(fromByteOffset: i, as: UInt64.self) == b.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
        i &+= 8
    }
    while i < common, a.load(fromByteOffset: i, as: UInt8.self) == b.load(fromByteOffset: i, as: UInt8.self) { i &+= 1 }
    return i
}

/// The number of leading bytes `a` and `b` share.
func commonPrefixLength(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a.withUnsafeBytes { x in
        b.withUnsafeBytes { y in
            guard let p = x.baseAddress, let q = y.baseAddress else { return 0 }
            return commonPrefixLength(p, x.count, q, y.count)
        }
    }
}

extension UnsafeRawBufferPointer {
    /// The little-endian UInt16 at `offset`.
    @inline(__always)
    func u16(_ offset: Int) -> UInt16 { UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self)) }
}
