import Foundation
import YapDBEngine

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
/// The trees are the engine's `ExtensionTree`s. Errors: the trees' `EngineError` passes
/// through; a key that does not parse is `EngineError.damagedExtensionEntry`.
struct RelationshipState: Sendable {
    /// The tag the protocol edges were gathered with.
    var versionTag: String
    var bySource: ExtensionTree
    var byDestination: ExtensionTree
    /// Every change made to the trees since it was last taken: the commit writes it as its
    /// edge record (`RelationshipEdgeLog`), so a replay of the log rebuilds the trees exactly.
    /// Empty in a published state.
    var changeLog = RelationshipEdgeLog()

    /// The layout byte at the start of the root bytes.
    static let layout: UInt8 = 1

    /// An empty state in the default page format.
    init(versionTag: String) {
        self.versionTag = versionTag
        bySource = ExtensionTree()
        byDestination = ExtensionTree()
    }

    /// An empty state whose trees go on the index pages `keydir` is on.
    init(versionTag: String, emptyLike keydir: Keydir) {
        self.versionTag = versionTag
        bySource = ExtensionTree(emptyLike: keydir)
        byDestination = ExtensionTree(emptyLike: keydir)
    }

    /// An empty state on the pages of `claimed`'s index.
    init(versionTag: String, emptyIn claimed: ClaimedExtensionRoots) {
        self.versionTag = versionTag
        bySource = ExtensionTree(emptyIn: claimed)
        byDestination = ExtensionTree(emptyIn: claimed)
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
    func fits(_ edge: StoredEdge) -> Bool { Self.fits(edge, maximumEntrySize: bySource.maximumEntrySize) }

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

        mutating func escaped() throws(EngineError) -> [UInt8] {
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
            throw .damagedExtensionEntry
        }

        /// The next part as a string. A part with no escaped zero (the usual case) is read in
        /// place, with no copy of its bytes before the string's own.
        mutating func string() throws(EngineError) -> String {
            let start = at
            var end = start
            if let base = raw.baseAddress, start < raw.count,
               let zero = memchr(base + start, 0, raw.count - start) {
                end = base.distance(to: UnsafeRawPointer(zero))
            } else {
                throw .damagedExtensionEntry
            }
            if end + 1 < raw.count, raw[end + 1] == 0 {
                at = end + 2
                return try Self.utf8String(UnsafeRawBufferPointer(rebasing: raw[start..<end]))
            }
            let bytes = try escaped()
            let string = String(decoding: bytes, as: UTF8.self)
            guard string.utf8.elementsEqual(bytes) else { throw .damagedExtensionEntry }
            return string
        }

        /// `bytes` as a string; bytes that are not UTF-8 are a damaged entry. (`String(decoding:)`
        /// is specialized for a byte buffer; it repairs bad bytes, so a repaired string differs
        /// from its bytes.)
        static func utf8String(_ bytes: UnsafeRawBufferPointer) throws(EngineError) -> String {
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
            guard same else { throw .damagedExtensionEntry }
            return string
        }

        mutating func node() throws(EngineError) -> CollectionKeyPair {
            let collection = try string()
            return CollectionKeyPair(collection: collection, key: try string())
        }

        mutating func byte() throws(EngineError) -> UInt8 {
            guard at < raw.count else { throw .damagedExtensionEntry }
            at += 1
            return raw[at - 1]
        }

        mutating func destination() throws(EngineError) -> StoredEdge.Destination {
            switch try byte() {
            case 1: return .node(try node())
            case 2: return .file(try escaped())
            default: throw .damagedExtensionEntry
            }
        }

        mutating func manual() throws(EngineError) -> Bool {
            let flag = try byte()
            guard flag <= 1, at == raw.count else { throw .damagedExtensionEntry }
            return flag == 1
        }
    }

    static func rules(_ value: UnsafeRawBufferPointer) throws(EngineError) -> YDB_NodeDeleteRules {
        guard value.count == 2 else { throw .damagedExtensionEntry }
        return YDB_NodeDeleteRules(rawValue: UInt16(value[0]) | UInt16(value[1]) << 8)
    }

    static func parseSourceEntry(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(EngineError) -> StoredEdge {
        var p = Parser(raw: key)
        let source = try p.node()
        let name = try p.string()
        let destination = try p.destination()
        return StoredEdge(name: name, source: source, destination: destination, isManual: try p.manual(), rules: try rules(value))
    }

    static func parseDestinationEntry(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(EngineError) -> StoredEdge {
        var p = Parser(raw: key)
        let destination = try p.destination()
        let name = try p.string()
        let source = try p.node()
        return StoredEdge(name: name, source: source, destination: destination, isManual: try p.manual(), rules: try rules(value))
    }

    // MARK: Reads

    /// Calls `body` with each edge from `source` (named `name`, when given) until it returns false.
    /// The parts the query names are not read back from the keys.
    func forEachEdge(from source: CollectionKeyPair, name: String?, _ body: (StoredEdge) -> Bool) throws(EngineError) {
        var prefix: [UInt8] = []
        Self.appendNode(source, to: &prefix)
        if let name { Self.appendString(name, to: &prefix) }
        try walk(bySource, prefix: prefix, { (p: inout Parser, value) throws(EngineError) -> StoredEdge in
            let edgeName: String
            if let name { edgeName = name } else { edgeName = try p.string() }
            let destination = try p.destination()
            return StoredEdge(name: edgeName, source: source, destination: destination, isManual: try p.manual(), rules: try Self.rules(value))
        }, body)
    }

    /// Calls `body` with each edge to `destination` (named `name`, when given) until it returns
    /// false. The parts the query names are not read back from the keys.
    func forEachEdge(to destination: StoredEdge.Destination, name: String?, _ body: (StoredEdge) -> Bool) throws(EngineError) {
        var prefix: [UInt8] = []
        Self.appendDestination(destination, to: &prefix)
        if let name { Self.appendString(name, to: &prefix) }
        try walk(byDestination, prefix: prefix, { (p: inout Parser, value) throws(EngineError) -> StoredEdge in
            let edgeName: String
            if let name { edgeName = name } else { edgeName = try p.string() }
            let source = try p.node()
            return StoredEdge(name: edgeName, source: source, destination: destination, isManual: try p.manual(), rules: try Self.rules(value))
        }, body)
    }

    /// Calls `body` with every edge (in source order) until it returns false.
    func forEachEdge(_ body: (StoredEdge) -> Bool) throws(EngineError) {
        try walk(bySource, prefix: [], { (p: inout Parser, value) throws(EngineError) -> StoredEdge in
            try Self.parseSourceEntry(p.raw, value)
        }, body)
    }

    /// Calls `body` with each file edge (in destination order) until it returns false.
    func forEachFileEdge(_ body: (StoredEdge) -> Bool) throws(EngineError) {
        try walk(byDestination, prefix: [2], { (p: inout Parser, value) throws(EngineError) -> StoredEdge in
            try Self.parseDestinationEntry(p.raw, value)
        }, body)
    }

    /// Walks the entries of `tree` whose keys start with `prefix`; `parse` gets a parser placed
    /// just after the prefix (its bytes are the query's own, so they are not checked again).
    private func walk(_ tree: ExtensionTree, prefix: [UInt8],
                      _ parse: (inout Parser, UnsafeRawBufferPointer) throws(EngineError) -> StoredEdge,
                      _ body: (StoredEdge) -> Bool) throws(EngineError) {
        var failure: EngineError?
        let skip = prefix.count
        try tree.forEach(from: prefix.isEmpty ? nil : prefix, below: Self.prefixEnd(prefix)) { key, value in
            do throws(EngineError) {
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
    func storedRules(of edge: StoredEdge) throws(EngineError) -> YDB_NodeDeleteRules? {
        var rules: YDB_NodeDeleteRules?
        var failure: EngineError?
        try bySource.withValue(forKey: Self.sourceKey(edge)) { value in
            do throws(EngineError) { rules = try Self.rules(value) } catch { failure = error }
        }
        if let failure { throw failure }
        return rules
    }

    // MARK: Changes

    // Every change below is noted in `changeLog`.

    /// Stores `edge` (replacing the rules of an edge with its identity).
    mutating func insert(_ edge: StoredEdge) throws(EngineError) {
        let value = Self.rulesValue(edge.rules)
        _ = try bySource.upsert(Self.sourceKey(edge), value)
        _ = try byDestination.upsert(Self.destinationKey(edge), value)
        changeLog.stored(edge)
    }

    /// Removes `edge`, which was just read from these trees (no existence walk first).
    mutating func removeStored(_ edge: StoredEdge) throws(EngineError) {
        _ = try bySource.removeFound(Self.sourceKey(edge))
        _ = try byDestination.removeFound(Self.destinationKey(edge))
        changeLog.removed(edge)
    }

    /// Removes the edge with `edge`'s identity; returns whether it was stored.
    @discardableResult
    mutating func remove(_ edge: StoredEdge) throws(EngineError) -> Bool {
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

/// The relationship trees on index pages (`ExtensionTreesState`), written by the index
/// checkpoint with the key directory's pages.
///
/// Root bytes: the layout byte (1), the version tag (varint length + UTF-8), then the
/// `ExtensionTreeRoot` of `bySource` and of `byDestination`.
extension RelationshipState: ExtensionTreesState {
    var extensionTrees: [ExtensionTree] { [bySource, byDestination] }

    func rootBytes(_ roots: [ExtensionTreeRoot]) -> [UInt8] {
        var bytes: [UInt8] = [Self.layout]
        bytes.appendString(versionTag)
        for root in roots { root.append(to: &bytes) }
        return bytes
    }

    /// This state with `transform(i, tree)` applied to each tree (`trees` order).
    func mapExtensionTrees(_ transform: (Int, ExtensionTree) -> ExtensionTree) -> RelationshipState {
        var state = self
        state.bySource = transform(0, bySource)
        state.byDestination = transform(1, byDestination)
        return state
    }

    /// The two trees hold as many edges (the verifier compares them edge by edge).
    func validateState() throws(EngineError) {
        guard bySource.count == byDestination.count else { throw .damagedExtensionEntry }
    }

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
                guard let sources = ExtensionTreeRoot.read(raw, &cursor), let destinations = ExtensionTreeRoot.read(raw, &cursor),
                      cursor == raw.count, sources.count == destinations.count else { return }
                var state = RelationshipState(versionTag: tag, emptyIn: claimed)
                state.bySource = ExtensionTree(root: sources, in: claimed)
                state.byDestination = ExtensionTree(root: destinations, in: claimed)
                decoded = state
            } catch {
                return
            }
        }
        guard let decoded else { return nil }
        self = decoded
    }
}
