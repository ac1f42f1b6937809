import Foundation
import Testing
@testable import YapDB
import YapDBEngine

/// The relationship's edge record payload (docs/format.md §11, "Edge records"): protocol and
/// manual edges round-trip, a change set split into several payloads replays as one, the
/// manual-only layout 1 still decodes, and every cut or damaged payload is a typed error.
@Suite struct RelationshipEdgeLogTests {
    static func edge(_ i: Int, manual: Bool) -> StoredEdge {
        StoredEdge(name: "n\(i % 3)", source: CollectionKeyPair(collection: "c", key: "s\(i)"),
                   destination: i % 4 == 0 ? .file(Array("/f\(i)".utf8)) : .node(CollectionKeyPair(collection: "d", key: "k\u{0}\(i)")),
                   isManual: manual, rules: YDB_NodeDeleteRules(rawValue: UInt16(i * 7 % 64)))
    }

    static func log() -> RelationshipEdgeLog {
        var log = RelationshipEdgeLog()
        log.removedEverything()
        for i in 0..<20 {
            if i % 5 == 0 { log.removed(edge(i, manual: i % 2 == 0)) } else { log.stored(edge(i, manual: i % 2 == 0)) }
        }
        return log
    }

    @Test func protocolAndManualEdgesRoundTrip() throws {
        let log = Self.log()
        let decoded = try RelationshipEdgeLog.decode(log.encoded())
        #expect(decoded == log)
        #expect(decoded.changes.keys.contains { !$0.isManual } && decoded.changes.keys.contains { $0.isManual })
        var dropped = RelationshipEdgeLog()
        dropped.removedEverything()
        dropped.dropped = true
        #expect(try RelationshipEdgeLog.decode(dropped.encoded()) == dropped)
        #expect(try RelationshipEdgeLog.decode(RelationshipEdgeLog().encoded()).isEmpty)
    }

    /// A node's edges share most of their keys: each is written after the bytes it shares with
    /// the one before.
    @Test func keysAreWrittenAfterThePrefixTheyShare() throws {
        var three = RelationshipEdgeLog()
        for i in 0..<3 {
            three.stored(StoredEdge(name: "parent", source: CollectionKeyPair(collection: "nodes", key: "node-1"),
                                    destination: .node(CollectionKeyPair(collection: "nodes", key: "parent-\(i)")), isManual: false, rules: []))
        }
        let keyBytes = three.changes.keys.reduce(0) { $0 + RelationshipState.sourceKey($1).count }
        let payload = three.encoded()
        #expect(payload.count < keyBytes * 2 / 3, "\(payload.count) bytes for \(keyBytes) bytes of keys")
        #expect(try RelationshipEdgeLog.decode(payload) == three)
    }

    @Test func aSplitChangeSetReplaysAsOne() throws {
        let log = Self.log()
        let payloads = log.encodedPayloads(limit: 64)
        #expect(payloads.count > 3)
        for payload in payloads { #expect(payload.count <= 64) }
        var whole = RelationshipState(versionTag: "")
        var split = whole
        try whole.insert(Self.edge(99, manual: true))
        try split.insert(Self.edge(99, manual: true))
        _ = try RelationshipEdgeLog.replay([log.encoded()], into: &whole)
        _ = try RelationshipEdgeLog.replay(payloads, into: &split)
        var a: [StoredEdge] = [], b: [StoredEdge] = []
        try whole.forEachEdge { a.append($0); return true }
        try split.forEachEdge { b.append($0); return true }
        #expect(a == b && a.count == 16, "removed all first, then 16 stored")
    }

    @Test func layoutOneStillDecodesAndAsksForAGather() throws {
        // Layout 1, bit 0, one manual edge stored with rules 3.
        var key = RelationshipState.sourceKey(Self.edge(1, manual: true))
        var payload: [UInt8] = [1, 1, 1, 1, UInt8(key.count)] + key + [3, 0]
        let decoded = try RelationshipEdgeLog.decode(payload)
        #expect(decoded.isLegacy && decoded.removedAll && decoded.changes.count == 1)
        var state = RelationshipState(versionTag: "")
        #expect(try RelationshipEdgeLog.replay([payload], into: &state), "protocol edges are gathered again after a layout-1 record")
        // A protocol edge, or the "dropped" flag, is not layout 1's.
        key = RelationshipState.sourceKey(Self.edge(1, manual: false))
        payload = [1, 0, 1, 1, UInt8(key.count)] + key + [3, 0]
        #expect(throws: EngineError.self) { try RelationshipEdgeLog.decode(payload) }
        #expect(throws: EngineError.self) { try RelationshipEdgeLog.decode([1, 3, 0]) }
    }

    /// Every prefix of a valid payload, and every single-byte change of it, decodes or throws
    /// `EngineError` — never traps; prefixes always throw.
    @Test func cutAndDamagedPayloadsAreTypedErrors() {
        let payload = Self.log().encoded()
        for length in 0..<payload.count {
            #expect(throws: EngineError.self) { try RelationshipEdgeLog.decode(Array(payload[..<length])) }
        }
        #expect(throws: EngineError.self) { try RelationshipEdgeLog.decode(payload + [0]) }
        for i in 0..<payload.count {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = payload
                damaged[i] ^= flip
                _ = try? RelationshipEdgeLog.decode(damaged)
            }
        }
    }
}
