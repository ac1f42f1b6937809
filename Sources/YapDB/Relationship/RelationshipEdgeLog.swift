import YapDBEngine

/// The net change a read-write transaction made to a relationship's edges — manual and
/// protocol edges alike — written into its commit as an extension data record (docs/format.md
/// §3 and §11, "Edge records"). Replaying the records of the commits after the extension's
/// roots, in commit order, rebuilds exactly the trees those commits left, rules included:
/// nothing is gathered again from objects for a commit that has a record.
///
/// The registered extension writes a record for every commit that changed an edge or a row it
/// asks for edges (even an empty one: `YapDatabaseRelationship.changesGatheredRows`), and so
/// does the commit that registers it (with what its catch-up changed). So a record covers its
/// commit and every commit before it; only the rows changed after the extension's last record
/// (`ExtensionCatchUp`, the claim's rows) are gathered again from their objects at the next
/// registration.
///
/// Payload (layout 2): the layout byte, a flags byte (bit 0: every edge was removed before the
/// changes — `removeAllObjectsInAllCollections()`, or a registration that started empty; bit 1:
/// the extension was unregistered — the next registration gathers every protocol edge again),
/// a varint count, then that many changes in key order: a byte (0 removed, 1 stored), the
/// edge's by-source key (its last byte says manual or protocol) as a varint length shared with
/// the previous change's key (0 for the first), a varint length and the bytes after that, and
/// for a stored edge its rules (2 bytes little-endian). Layout 1 (written before protocol edges
/// were logged) has manual edges only, whole keys (varint length and bytes) and bit 0 only; it
/// still decodes, and its extension then gathers every protocol edge again.
struct RelationshipEdgeLog: Equatable, Sendable {
    /// Every edge was removed before `changes`.
    var removedAll = false
    /// The extension was unregistered (implies `removedAll`): what comes next is gathered from
    /// the rows.
    var dropped = false
    /// Decoded from a layout-1 payload: protocol edge changes are not in it.
    var isLegacy = false
    /// Edge identity → its rules after the transaction (nil: removed).
    var changes: [StoredEdge: YDB_NodeDeleteRules?] = [:]

    static let layout: UInt8 = 2
    static let legacyLayout: UInt8 = 1
    static let flagRemovedAll: UInt8 = 1
    static let flagDropped: UInt8 = 2

    var isEmpty: Bool { !removedAll && !dropped && changes.isEmpty }

    /// Notes that `edge` is stored with its rules.
    mutating func stored(_ edge: StoredEdge) {
        changes[edge.identity] = .some(edge.rules)
    }

    /// Notes that `edge` (its identity) was removed.
    mutating func removed(_ edge: StoredEdge) {
        changes[edge.identity] = .some(nil)
    }

    /// Notes that every edge was removed: earlier changes no longer matter.
    mutating func removedEverything() {
        removedAll = true
        changes.removeAll()
    }

    /// The record's payload (layout 2).
    func encoded() -> [UInt8] {
        encodedPayloads(limit: Int.max)[0]
    }

    /// The record payloads (layout 2), each at most `limit` bytes when one change fits in it:
    /// the flags go with the first, the changes follow in key order. Several payloads in one
    /// commit replay as one.
    func encodedPayloads(limit: Int) -> [[UInt8]] {
        let flags = (removedAll || dropped ? Self.flagRemovedAll : 0) | (dropped ? Self.flagDropped : 0)
        let entries = changes.map { (key: RelationshipState.sourceKey($0.key), rules: $0.value) }
            .sorted { $0.key.lexicographicallyPrecedes($1.key) }
        var payloads: [[UInt8]] = []
        var body: [UInt8] = []
        var count = 0
        var first = true
        // The previous key of this payload: each key is written as the length it shares with
        // it and the rest (a node's edges share their source, name and most of the destination).
        var previous: [UInt8] = []
        func finish() {
            var payload: [UInt8] = [Self.layout, first ? flags : 0]
            payload.appendVarint(UInt64(count))
            payload.append(contentsOf: body)
            payloads.append(payload)
            body.removeAll(keepingCapacity: true)
            count = 0
            first = false
            previous = []
        }
        func change(_ key: [UInt8], _ rules: YDB_NodeDeleteRules?) -> [UInt8] {
            let shared = zip(previous, key).prefix { $0 == $1 }.count
            var change: [UInt8] = [rules == nil ? 0 : 1]
            change.appendVarint(UInt64(shared))
            change.appendVarint(UInt64(key.count - shared))
            change.append(contentsOf: key[shared...])
            if let rules { change.append(contentsOf: RelationshipState.rulesValue(rules)) }
            return change
        }
        for entry in entries {
            var bytes = change(entry.key, entry.rules)
            // 12: the layout and flags bytes and the longest count.
            if count > 0 && body.count + bytes.count + 12 > limit {
                finish()
                bytes = change(entry.key, entry.rules)
            }
            body.append(contentsOf: bytes)
            count += 1
            previous = entry.key
        }
        finish()
        return payloads
    }

    /// Decodes a payload read from the log (layout 2, or the manual-edge-only layout 1). Bytes
    /// that are not exactly one payload — an unknown layout or flag, a count or length past the
    /// end, a change kind above 1, a key that does not parse (or, in layout 1, is not a manual
    /// edge's), bytes left over — are `EngineError.damagedExtensionEntry`.
    static func decode(_ payload: [UInt8]) throws(EngineError) -> RelationshipEdgeLog {
        var log = RelationshipEdgeLog()
        let bad = EngineError.damagedExtensionEntry
        var failure: EngineError?
        payload.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            do throws(ByteReader.Overrun) {
                let layout = try reader.readU8()
                guard layout == Self.layout || layout == legacyLayout else { failure = bad; return }
                log.isLegacy = layout == legacyLayout
                let flags = try reader.readU8()
                let known = log.isLegacy ? flagRemovedAll : flagRemovedAll | flagDropped
                guard flags & ~known == 0 else { failure = bad; return }
                log.removedAll = flags & flagRemovedAll != 0
                log.dropped = flags & flagDropped != 0
                guard !log.dropped || log.removedAll else { failure = bad; return }
                let count = try reader.readLength(max: raw.count)
                var previous: [UInt8] = []
                for _ in 0..<count {
                    let kind = try reader.readU8()
                    guard kind <= 1 else { failure = bad; return }
                    // Layout 2: the length shared with the previous key (at most its length),
                    // then the rest; layout 1: the whole key.
                    let shared = log.isLegacy ? 0 : try reader.readLength(max: previous.count)
                    let rest = try reader.readBytes(try reader.readLength(max: raw.count))
                    let key = Array(previous[..<shared]) + Array(rest)
                    previous = key
                    let rules = kind == 1 ? try reader.readBytes(2) : nil
                    // A removal has no rules: parsed with a zero value.
                    let parsed = key.withUnsafeBytes { keyBytes in
                        withUnsafeBytes(of: UInt16(0)) { zero in
                            Result { () throws(EngineError) in try RelationshipState.parseSourceEntry(keyBytes, rules ?? zero) }
                        }
                    }
                    let edge: StoredEdge
                    switch parsed {
                    case .success(let value): edge = value
                    case .failure(let error): failure = error; return
                    }
                    guard edge.isManual || !log.isLegacy else { failure = bad; return }
                    log.changes[edge.identity] = kind == 1 ? .some(edge.rules) : .some(nil)
                }
                guard reader.isAtEnd else { failure = bad; return }
            } catch {
                failure = bad
            }
        }
        if let failure { throw failure }
        return log
    }

    /// Applies the change to `state`: removes every edge first when `removedAll`, then stores
    /// and removes the listed edges.
    func apply(to state: inout RelationshipState) throws(EngineError) {
        if removedAll { state.removeAll() }
        for (identity, rules) in changes {
            if let rules {
                var edge = identity
                edge.rules = rules
                try state.insert(edge)
            } else {
                try state.remove(identity)
            }
        }
    }
}
