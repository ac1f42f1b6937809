// LeafEntries: the entries of a dirty keyed leaf, packed in one byte array.

/// The entries of a dirty `KeyedNode` leaf, in key order, packed in one byte array in the page's
/// entry form (UInt16 key length, UInt16 value length, key, value): `starts[i]` is where entry
/// `i` begins. Decoding a page is one copy of its bytes, not an allocation per key and value.
/// Replacing or removing an entry leaves its old bytes behind until the array is compacted
/// (when more than half of it is garbage); encoding writes only the live entries.
struct LeafEntries: Sendable {
    private(set) var bytes: [UInt8]
    private(set) var starts: ContiguousArray<Int>
    /// Bytes of the live entries (without slots).
    private(set) var liveBytes: Int

    init() {
        bytes = []
        starts = []
        liveBytes = 0
    }

    /// The entries of a checked leaf page, checked one by one: each inside the page, keys
    /// strictly ascending, each key + value at most `maximumEntrySize`.
    init(page view: PageView, maximumEntrySize: Int) throws(PageError) {
        bytes = Array(view.bytes)
        starts = []
        starts.reserveCapacity(view.count)
        liveBytes = 0
        var previous: UnsafeRawBufferPointer? = nil
        for i in 0..<view.count {
            let (key, value) = try view.leafEntry(i)
            if let previous, compareBytes(previous, key) >= 0 { throw .corrupt(page: view.id, reason: .keysOutOfOrder(slot: i)) }
            guard key.count + value.count <= maximumEntrySize else { throw .corrupt(page: view.id, reason: .overfilled) }
            previous = key
            starts.append(try view.leafEntryOffset(i))
            liveBytes += PageLayout.leafEntryHeader + key.count + value.count
        }
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

    /// Appends the bytes of an entry and returns where it starts.
    private mutating func appendEntry(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Int {
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
        starts.append(appendEntry(key, value))
    }

    /// Reserves room for about `bytes` bytes of entries and `count` slots.
    mutating func reserve(bytes: Int, count: Int) {
        self.bytes.reserveCapacity(bytes)
        starts.reserveCapacity(count)
    }

    /// Inserts an entry at `index` (the caller keeps the keys sorted).
    mutating func insert(_ key: [UInt8], _ value: [UInt8], at index: Int) {
        let start = key.withUnsafeBytes { k in value.withUnsafeBytes { appendEntry(k, $0) } }
        starts.insert(start, at: index)
    }

    /// Replaces the value of entry `index`; returns the old value.
    mutating func replaceValue(at index: Int, with value: [UInt8]) -> [UInt8] {
        let (key, old) = read(index) { (Array($0), Array($1)) }
        liveBytes -= PageLayout.leafEntryHeader + key.count + old.count
        let start = key.withUnsafeBytes { k in value.withUnsafeBytes { appendEntry(k, $0) } }
        starts[index] = start
        compactIfWasteful()
        return old
    }

    /// Removes entry `index`; returns its value.
    mutating func remove(at index: Int) -> [UInt8] {
        let (keyLength, old) = read(index) { ($0.count, Array($1)) }
        liveBytes -= PageLayout.leafEntryHeader + keyLength + old.count
        starts.remove(at: index)
        compactIfWasteful()
        return old
    }

    /// The entries in `range`, packed afresh.
    func slice(_ range: Range<Int>) -> LeafEntries {
        var out = LeafEntries()
        out.bytes.reserveCapacity(liveBytes)
        out.starts.reserveCapacity(range.count)
        for i in range {
            let start = read(i) { out.appendEntry($0, $1) }
            out.starts.append(start)
        }
        return out
    }

    /// Appends the entries of `other` (all greater than this leaf's keys).
    mutating func append(contentsOf other: LeafEntries) {
        for i in 0..<other.count {
            let start = other.read(i) { appendEntry($0, $1) }
            starts.append(start)
        }
    }

    /// Rewrites the bytes when more than half of them are garbage.
    private mutating func compactIfWasteful() {
        if bytes.count > 2 * liveBytes + 256 { self = slice(0..<count) }
    }
}

extension UnsafeRawBufferPointer {
    /// The little-endian UInt16 at `offset`.
    @inline(__always)
    func u16(_ offset: Int) -> UInt16 { UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self)) }
}
