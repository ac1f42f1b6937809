import YapDBIndex
import YapDBStorage

/// The net change a read-write transaction made to a relationship's manual edges, written into
/// its commit as one extension data record (docs/format.md §3 and §11, "Relationship manual
/// edge records"), so that manual edges — which no row can give back — are part of their
/// commit: after a crash they are all there or not at all, like the rows.
///
/// At registration after a reopen the extension replays the records of the commits since its
/// roots were written, in commit order, before it catches up with the rows.
///
/// Payload: the byte 1 (layout), a flags byte (bit 0: every edge was removed first — a
/// `removeAllObjectsInAllCollections()` or the extension's state dropped; other bits zero), a
/// varint count, then that many changes in key order: a byte (0 removed, 1 stored), the edge's
/// by-source key (varint length and bytes, manual byte 1), and for a stored edge its rules (2
/// bytes little-endian).
struct RelationshipManualEdgeLog: Equatable {
    /// Every edge was removed before `changes` (manual and protocol edges alike).
    var removedAll = false
    /// Edge identity → its rules after the transaction (nil: removed).
    var changes: [StoredEdge: YDB_NodeDeleteRules?] = [:]

    static let layout: UInt8 = 1
    static let flagRemovedAll: UInt8 = 1

    var isEmpty: Bool { !removedAll && changes.isEmpty }

    /// Notes that manual edge `edge` is stored with its rules.
    mutating func stored(_ edge: StoredEdge) {
        guard edge.isManual else { return }
        changes[edge.identity] = .some(edge.rules)
    }

    /// Notes that manual edge `edge` was removed (protocol edges are ignored).
    mutating func removed(_ edge: StoredEdge) {
        guard edge.isManual else { return }
        changes[edge.identity] = .some(nil)
    }

    /// Notes that every edge was removed: earlier changes no longer matter.
    mutating func removedEverything() {
        removedAll = true
        changes.removeAll()
    }

    /// The record's payload.
    func encoded() -> [UInt8] {
        var bytes: [UInt8] = [Self.layout, removedAll ? Self.flagRemovedAll : 0]
        let entries = changes.map { (key: RelationshipState.sourceKey($0.key), rules: $0.value) }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        bytes.appendVarint(UInt64(entries.count))
        for entry in entries {
            bytes.append(entry.rules == nil ? 0 : 1)
            bytes.appendVarint(UInt64(entry.key.count))
            bytes.append(contentsOf: entry.key)
            if let rules = entry.rules { bytes.append(contentsOf: RelationshipState.rulesValue(rules)) }
        }
        return bytes
    }

    /// Decodes a payload read from the log. Bytes that are not exactly one payload — a wrong
    /// layout or flag, a count or length past the end, a key that does not parse or is not a
    /// manual edge's, bytes left over — are `PageError.corrupt(page: .none, reason: .badEntry)`.
    static func decode(_ payload: [UInt8]) throws(PageError) -> RelationshipManualEdgeLog {
        var log = RelationshipManualEdgeLog()
        let bad = PageError.corrupt(page: .none, reason: .badEntry)
        var failure: PageError?
        payload.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            do throws(ByteReader.Overrun) {
                guard try reader.readU8() == layout else { failure = bad; return }
                let flags = try reader.readU8()
                guard flags & ~flagRemovedAll == 0 else { failure = bad; return }
                log.removedAll = flags & flagRemovedAll != 0
                let count = try reader.readLength(max: raw.count)
                for _ in 0..<count {
                    let kind = try reader.readU8()
                    guard kind <= 1 else { failure = bad; return }
                    let length = try reader.readLength(max: raw.count)
                    let key = Array(try reader.readBytes(length))
                    let rules: [UInt8] = kind == 1 ? Array(try reader.readBytes(2)) : [0, 0]
                    let parsed = key.withUnsafeBytes { keyBytes in
                        rules.withUnsafeBytes { value in
                            Result { () throws(PageError) in try RelationshipState.parseSourceEntry(keyBytes, value) }
                        }
                    }
                    let edge: StoredEdge
                    switch parsed {
                    case .success(let value): edge = value
                    case .failure(let error): failure = error; return
                    }
                    guard edge.isManual else { failure = bad; return }
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
    /// and removes the listed manual edges.
    func apply(to state: inout RelationshipState) throws(PageError) {
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
