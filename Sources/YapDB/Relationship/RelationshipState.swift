import Foundation
import YapDBIndex
import YapDBEngine
import YapDBStorage

/// One stored edge, as the trees hold it: ends by collection and key (never by row id).
struct StoredEdge: Hashable, Sendable {
    enum Destination: Hashable, Sendable {
        /// A row.
        case node(CollectionKeyPair)
        /// A file, as the options' serializer stored it.
        case file([UInt8])
    }

    var name: String
    var source: CollectionKeyPair
    var destination: Destination
    var isManual: Bool
    var rules: YDB_NodeDeleteRules

    /// The edge's identity (everything but its rules): what `add(_:)` replaces and the trees key.
    var identity: StoredEdge {
        var copy = self
        copy.rules = []
        return copy
    }

    var destinationNode: CollectionKeyPair? {
        if case .node(let pair) = destination { return pair }
        return nil
    }
}

/// A relationship extension's edges at one snapshot: two keyed trees holding the same edges,
/// one ordered by source and one by destination. An immutable value stored in the snapshot with
/// the rows (a change copies only the touched paths), so every snapshot reads its own edges.
///
/// Key layout (docs/format.md §11, "Relationship trees"); `S(x)` is a string escaped so that
/// keys sort by their parts and no part is a prefix of another (each 0x00 byte becomes 0x00 0xFF,
/// then 0x00 0x00 ends it); `D` is the destination: 0x01 `S(collection)` `S(key)` for a row,
/// 0x02 `S(file bytes)` for a file; `M` is one byte, 0 for a protocol edge and 1 for a manual one.
/// - `bySource`: `S(source collection) S(source key) S(name) D M`
/// - `byDestination`: `D S(name) S(source collection) S(source key) M`
/// Values (both trees): the rules, 2 bytes little-endian.
///
/// Errors: the trees' `PageError` passes through; a key that does not parse is
/// `.corrupt(page: .none, reason: .badEntry)`.
struct RelationshipState: Sendable {
    /// The tag the protocol edges were gathered with.
    var versionTag: String
    var bySource: PagedBTree
    var byDestination: PagedBTree
    /// Every change made to the trees since it was last taken: the commit writes it as its
    /// edge record (`RelationshipEdgeLog`), so a replay of the log rebuilds the trees exactly.
    /// Empty in a published state.
    var changeLog = RelationshipEdgeLog()

    /// The layout byte at the start of the root bytes.
    static let layout: UInt8 = 1

    init(versionTag: String, format: PageFormat, source: any PageSource = EmptyPageSource()) {
        self.versionTag = versionTag
        bySource = PagedBTree(format: format, source: source)
        byDestination = PagedBTree(format: format, source: source)
    }

    /// The number of edges.
    var count: Int { bySource.count }

    // MARK: Keys

    /// Appends `S(bytes)`: the bytes, each 0x00 as 0x00 0xFF, then 0x00 0x00. One copy when they
    /// hold no zero byte (the usual case).
    static func appendEscaped(_ bytes: UnsafeRawBufferPointer, to key: inout [UInt8]) {
        if let base = bytes.baseAddress, memchr(base, 0, bytes.count) != nil {
            appendEscapedByteByByte(bytes, to: &key)
            return
        }
        key.append(contentsOf: bytes)
        key.append(0)
        key.append(0)
    }

    private static func appendEscapedByteByByte(_ bytes: UnsafeRawBufferPointer, to key: inout [UInt8]) {
        for byte in bytes {
            key.append(byte)
            if byte == 0 { key.append(0xFF) }
        }
        key.append(0)
        key.append(0)
    }

    static func appendString(_ string: String, to key: inout [UInt8]) {
        var string = string
        string.withUTF8 { appendEscaped(UnsafeRawBufferPointer($0), to: &key) }
    }

    static func appendNode(_ pair: CollectionKeyPair, to key: inout [UInt8]) {
        appendString(pair.collection, to: &key)
        appendString(pair.key, to: &key)
    }

    static func appendDestination(_ destination: StoredEdge.Destination, to key: inout [UInt8]) {
        switch destination {
        case .node(let pair):
            key.append(1)
            appendNode(pair, to: &key)
        case .file(let bytes):
            key.append(2)
            bytes.withUnsafeBytes { appendEscaped($0, to: &key) }
        }
    }

    /// Room for an edge's key without growing (escaped zero bytes aside).
    static func keyCapacity(_ edge: StoredEdge) -> Int {
        var count = edge.source.collection.utf8.count + edge.source.key.utf8.count + edge.name.utf8.count + 8
        switch edge.destination {
        case .node(let pair): count += pair.collection.utf8.count + pair.key.utf8.count + 4
        case .file(let bytes): count += bytes.count + 2
        }
        return count + 1
    }

    static func sourceKey(_ edge: StoredEdge) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(keyCapacity(edge))
        appendNode(edge.source, to: &key)
        appendString(edge.name, to: &key)
        appendDestination(edge.destination, to: &key)
        key.append(edge.isManual ? 1 : 0)
        return key
    }

    static func destinationKey(_ edge: StoredEdge) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(keyCapacity(edge))
        appendDestination(edge.destination, to: &key)
        appendString(edge.name, to: &key)
        appendNode(edge.source, to: &key)
        key.append(edge.isManual ? 1 : 0)
        return key
    }

    static func rulesValue(_ rules: YDB_NodeDeleteRules) -> [UInt8] {
        [UInt8(truncatingIfNeeded: rules.rawValue), UInt8(truncatingIfNeeded: rules.rawValue >> 8)]
    }

    /// Whether `edge` fits a tree entry (its key — both trees' keys have the same length — plus
    /// the rules), counted without building the key.
    func fits(_ edge: StoredEdge) -> Bool { Self.fits(edge, maximumEntrySize: bySource.format.maximumEntrySize) }

    /// `fits` for trees whose entries hold at most `maximumEntrySize` bytes.
    static func fits(_ edge: StoredEdge, maximumEntrySize: Int) -> Bool {
        func escapedCount<C: Collection<UInt8>>(_ bytes: C) -> Int { bytes.count + bytes.reduce(0) { $0 + ($1 == 0 ? 1 : 0) } + 2 }
        var count = escapedCount(edge.source.collection.utf8) + escapedCount(edge.source.key.utf8) + escapedCount(edge.name.utf8) + 2
        switch edge.destination {
        case .node(let pair): count += escapedCount(pair.collection.utf8) + escapedCount(pair.key.utf8)
        case .file(let bytes): count += escapedCount(bytes)
        }
        return count + 2 <= maximumEntrySize
    }

    /// The smallest key above every key that starts with `prefix` (nil: none).
    static func prefixEnd(_ prefix: [UInt8]) -> [UInt8]? {
        var end = prefix
        while let last = end.last {
            if last < 0xFF {
                end[end.count - 1] = last + 1
                return end
            }
            end.removeLast()
        }
        return nil
    }

    // MARK: Parsing (keys come from pages: checked, never trusted)

    struct Parser {
        let raw: UnsafeRawBufferPointer
        var at = 0

        mutating func escaped() throws(PageError) -> [UInt8] {
            var out: [UInt8] = []
            while at < raw.count {
                let byte = raw[at]
                at += 1
                if byte != 0 {
                    out.append(byte)
                    continue
                }
                guard at < raw.count else { break }
                let next = raw[at]
                at += 1
                if next == 0 { return out }
                guard next == 0xFF else { break }
                out.append(0)
            }
            throw .corrupt(page: .none, reason: .badEntry)
        }

        /// The next part as a string. A part with no escaped zero (the usual case) is read in
        /// place, with no copy of its bytes before the string's own.
        mutating func string() throws(PageError) -> String {
            let start = at
            var end = start
            if let base = raw.baseAddress, start < raw.count,
               let zero = memchr(base + start, 0, raw.count - start) {
                end = base.distance(to: UnsafeRawPointer(zero))
            } else {
                throw .corrupt(page: .none, reason: .badEntry)
            }
            if end + 1 < raw.count, raw[end + 1] == 0 {
                at = end + 2
                return try Self.utf8String(UnsafeRawBufferPointer(rebasing: raw[start..<end]))
            }
            let bytes = try escaped()
            let string = String(decoding: bytes, as: UTF8.self)
            guard string.utf8.elementsEqual(bytes) else { throw .corrupt(page: .none, reason: .badEntry) }
            return string
        }

        /// `bytes` as a string; bytes that are not UTF-8 are a damaged entry. (`String(decoding:)`
        /// is specialized for a byte buffer; it repairs bad bytes, so a repaired string differs
        /// from its bytes.)
        static func utf8String(_ bytes: UnsafeRawBufferPointer) throws(PageError) -> String {
            guard !bytes.isEmpty else { return "" }
            let utf8 = bytes.assumingMemoryBound(to: UInt8.self)
            // ASCII (the usual key) decodes unchanged: no comparison needed.
            var high: UInt8 = 0
            for byte in utf8 { high |= byte }
            if high < 0x80 { return String(decoding: utf8, as: UTF8.self) }
            var string = String(decoding: utf8, as: UTF8.self)
            let same = string.withUTF8 { utf8 in
                utf8.count == bytes.count && memcmp(utf8.baseAddress!, bytes.baseAddress!, bytes.count) == 0
            }
            guard same else { throw .corrupt(page: .none, reason: .badEntry) }
            return string
        }

        mutating func node() throws(PageError) -> CollectionKeyPair {
            let collection = try string()
            return CollectionKeyPair(collection: collection, key: try string())
        }

        mutating func byte() throws(PageError) -> UInt8 {
            guard at < raw.count else { throw .corrupt(page: .none, reason: .badEntry) }
            at += 1
            return raw[at - 1]
        }

        mutating func destination() throws(PageError) -> StoredEdge.Destination {
            switch try byte() {
            case 1: return .node(try node())
            case 2: return .file(try escaped())
            default: throw .corrupt(page: .none, reason: .badEntry)
            }
        }

        mutating func manual() throws(PageError) -> Bool {
            let flag = try byte()
            guard flag <= 1, at == raw.count else { throw .corrupt(page: .none, reason: .badEntry) }
            return flag == 1
        }
    }

    static func rules(_ value: UnsafeRawBufferPointer) throws(PageError) -> YDB_NodeDeleteRules {
        guard value.count == 2 else { throw .corrupt(page: .none, reason: .badEntry) }
        return YDB_NodeDeleteRules(rawValue: UInt16(value[0]) | UInt16(value[1]) << 8)
    }

    static func parseSourceEntry(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(PageError) -> StoredEdge {
        var p = Parser(raw: key)
        let source = try p.node()
        let name = try p.string()
        let destination = try p.destination()
        return StoredEdge(name: name, source: source, destination: destination, isManual: try p.manual(), rules: try rules(value))
    }

    static func parseDestinationEntry(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(PageError) -> StoredEdge {
        var p = Parser(raw: key)
        let destination = try p.destination()
        let name = try p.string()
        let source = try p.node()
        return StoredEdge(name: name, source: source, destination: destination, isManual: try p.manual(), rules: try rules(value))
    }

    // MARK: Reads

    /// Calls `body` with each edge from `source` (named `name`, when given) until it returns false.
    /// The parts the query names are not read back from the keys.
    func forEachEdge(from source: CollectionKeyPair, name: String?, _ body: (StoredEdge) -> Bool) throws(PageError) {
        var prefix: [UInt8] = []
        Self.appendNode(source, to: &prefix)
        if let name { Self.appendString(name, to: &prefix) }
        try walk(bySource, prefix: prefix, { (p: inout Parser, value) throws(PageError) -> StoredEdge in
            let edgeName: String
            if let name { edgeName = name } else { edgeName = try p.string() }
            let destination = try p.destination()
            return StoredEdge(name: edgeName, source: source, destination: destination, isManual: try p.manual(), rules: try Self.rules(value))
        }, body)
    }

    /// Calls `body` with each edge to `destination` (named `name`, when given) until it returns
    /// false. The parts the query names are not read back from the keys.
    func forEachEdge(to destination: StoredEdge.Destination, name: String?, _ body: (StoredEdge) -> Bool) throws(PageError) {
        var prefix: [UInt8] = []
        Self.appendDestination(destination, to: &prefix)
        if let name { Self.appendString(name, to: &prefix) }
        try walk(byDestination, prefix: prefix, { (p: inout Parser, value) throws(PageError) -> StoredEdge in
            let edgeName: String
            if let name { edgeName = name } else { edgeName = try p.string() }
            let source = try p.node()
            return StoredEdge(name: edgeName, source: source, destination: destination, isManual: try p.manual(), rules: try Self.rules(value))
        }, body)
    }

    /// Calls `body` with every edge (in source order) until it returns false.
    func forEachEdge(_ body: (StoredEdge) -> Bool) throws(PageError) {
        try walk(bySource, prefix: [], { (p: inout Parser, value) throws(PageError) -> StoredEdge in
            try Self.parseSourceEntry(p.raw, value)
        }, body)
    }

    /// Calls `body` with each file edge (in destination order) until it returns false.
    func forEachFileEdge(_ body: (StoredEdge) -> Bool) throws(PageError) {
        try walk(byDestination, prefix: [2], { (p: inout Parser, value) throws(PageError) -> StoredEdge in
            try Self.parseDestinationEntry(p.raw, value)
        }, body)
    }

    /// Walks the entries of `tree` whose keys start with `prefix`; `parse` gets a parser placed
    /// just after the prefix (its bytes are the query's own, so they are not checked again).
    private func walk(_ tree: PagedBTree, prefix: [UInt8],
                      _ parse: (inout Parser, UnsafeRawBufferPointer) throws(PageError) -> StoredEdge,
                      _ body: (StoredEdge) -> Bool) throws(PageError) {
        var failure: PageError?
        let upper = Self.prefixEnd(prefix).map { KeyBound($0, inclusive: false) }
        let skip = prefix.count
        try tree.forEachInKeyRange(from: prefix.isEmpty ? nil : KeyBound(prefix), to: upper) { key, value in
            do throws(PageError) {
                var parser = Parser(raw: key, at: skip)
                return body(try parse(&parser, value))
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
    }

    /// The stored rules of an edge with `edge`'s identity, or nil when there is none.
    func storedRules(of edge: StoredEdge) throws(PageError) -> YDB_NodeDeleteRules? {
        var rules: YDB_NodeDeleteRules?
        var failure: PageError?
        try bySource.withValue(forKey: Self.sourceKey(edge)) { value in
            do throws(PageError) { rules = try Self.rules(value) } catch { failure = error }
        }
        if let failure { throw failure }
        return rules
    }

    // MARK: Changes

    // Every change below is noted in `changeLog`.

    /// Stores `edge` (replacing the rules of an edge with its identity).
    mutating func insert(_ edge: StoredEdge) throws(PageError) {
        let value = Self.rulesValue(edge.rules)
        _ = try bySource.upsert(Self.sourceKey(edge), value)
        _ = try byDestination.upsert(Self.destinationKey(edge), value)
        changeLog.stored(edge)
    }

    /// Removes `edge`, which was just read from these trees (no existence walk first).
    mutating func removeStored(_ edge: StoredEdge) throws(PageError) {
        _ = try bySource.removeFound(Self.sourceKey(edge))
        _ = try byDestination.removeFound(Self.destinationKey(edge))
        changeLog.removed(edge)
    }

    /// Removes the edge with `edge`'s identity; returns whether it was stored.
    @discardableResult
    mutating func remove(_ edge: StoredEdge) throws(PageError) -> Bool {
        guard try bySource.remove(Self.sourceKey(edge)) != nil else { return false }
        _ = try byDestination.remove(Self.destinationKey(edge))
        changeLog.removed(edge)
        return true
    }

    /// Removes every edge. O(1).
    mutating func removeAll() {
        bySource.removeAll()
        byDestination.removeAll()
        changeLog.removedEverything()
    }
}

/// The relationship trees on index pages (`KeyedTreesExtensionState`), written by the index
/// checkpoint with the key directory's pages.
///
/// Root bytes: the layout byte (1), the version tag (varint length + UTF-8), then the
/// `PagedTreeRoot` of `bySource` and of `byDestination`.
extension RelationshipState: KeyedTreesExtensionState {
    var trees: [PagedBTree] { [bySource, byDestination] }

    func rootBytes(_ roots: [PagedTreeRoot]) -> [UInt8] {
        var bytes: [UInt8] = [Self.layout]
        bytes.appendString(versionTag)
        for root in roots { root.append(to: &bytes) }
        return bytes
    }

    /// This state with `transform(i, tree)` applied to each tree (`trees` order).
    func mapTrees(_ transform: (Int, PagedBTree) -> PagedBTree) -> RelationshipState {
        var state = self
        state.bySource = transform(0, bySource)
        state.byDestination = transform(1, byDestination)
        return state
    }

    func validatePages() throws(PageError) {
        try validateTrees()
        guard bySource.count == byDestination.count else { throw .corrupt(page: .none, reason: .badEntry) }
    }

    var unwrittenPageCount: Int { treesUnwrittenPageCount }

    func writtenPageCount() throws(PageError) -> Int { try treesWrittenPageCount() }

    /// Opens the state a claim hands back (reading no page); nil when the bytes are not a
    /// relationship extension's roots.
    init?(claimed: ClaimedExtensionRoots) {
        var decoded: RelationshipState?
        claimed.rootBytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            do throws(ByteReader.Overrun) {
                guard try reader.readU8() == Self.layout else { return }
                let tag = try reader.readString()
                var cursor = reader.position
                guard let sources = PagedTreeRoot.read(raw, &cursor), let destinations = PagedTreeRoot.read(raw, &cursor),
                      cursor == raw.count, sources.count == destinations.count else { return }
                var state = RelationshipState(versionTag: tag, format: claimed.format, source: claimed.source)
                state.bySource = PagedBTree(root: sources, format: claimed.format, source: claimed.source)
                state.byDestination = PagedBTree(root: destinations, format: claimed.format, source: claimed.source)
                decoded = state
            } catch {
                return
            }
        }
        guard let decoded else { return nil }
        self = decoded
    }
}
