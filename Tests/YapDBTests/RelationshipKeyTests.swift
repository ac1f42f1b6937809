import Foundation
import Testing
@testable import YapDB
import YapDBEngine

/// The relationship trees' key codec (docs/format.md §11): parts with zero bytes and non-ASCII
/// text come back as they went in, whether the query names a part (it is not read back) or not,
/// and bytes that are not UTF-8 are a damaged entry, not a trap.
@Suite struct RelationshipKeyTests {

    static let awkward = ["", "a", "zero\u{0}inside", "\u{0}", "\u{0}\u{0}end", "ünïcødé ✓", "🙂", String(repeating: "x", count: 100)]

    func edges() -> [StoredEdge] {
        var out: [StoredEdge] = []
        for (i, text) in Self.awkward.enumerated() {
            let other = Self.awkward[(i + 3) % Self.awkward.count]
            out.append(StoredEdge(name: text, source: CollectionKeyPair(collection: other, key: "s\(i)" + text),
                                  destination: .node(CollectionKeyPair(collection: text, key: other + "d")),
                                  isManual: i % 2 == 0, rules: YDB_NodeDeleteRules(rawValue: UInt16(i * 37))))
            out.append(StoredEdge(name: "file" + text, source: CollectionKeyPair(collection: "c", key: text + "\(i)"),
                                  destination: .file(Array(text.utf8) + [0, 0xFF, 0, UInt8(i)]),
                                  isManual: true, rules: .deleteDestinationIfSourceDeleted))
        }
        return out
    }

    func state(with edges: [StoredEdge]) throws -> RelationshipState {
        var state = RelationshipState(versionTag: "")
        for edge in edges { try state.insert(edge) }
        return state
    }

    @Test func everyQueryFormReadsBackTheStoredEdges() throws {
        let all = edges()
        let state = try state(with: all)
        #expect(state.count == all.count)
        var walked: [StoredEdge] = []
        try state.forEachEdge { walked.append($0); return true }
        #expect(Set(walked) == Set(all))
        for edge in all {
            for name in [edge.name, nil] as [String?] {
                var from: [StoredEdge] = []
                try state.forEachEdge(from: edge.source, name: name) { from.append($0); return true }
                #expect(from.contains(edge), "from \(edge.source), name \(String(describing: name))")
                #expect(from.allSatisfy { $0.source == edge.source && (name == nil || $0.name == name) })
                var to: [StoredEdge] = []
                try state.forEachEdge(to: edge.destination, name: name) { to.append($0); return true }
                #expect(to.contains(edge), "to \(edge.destination), name \(String(describing: name))")
                #expect(to.allSatisfy { $0.destination == edge.destination && (name == nil || $0.name == name) })
            }
            #expect(try state.storedRules(of: edge) == edge.rules)
        }
        var files: [StoredEdge] = []
        try state.forEachFileEdge { files.append($0); return true }
        #expect(Set(files) == Set(all.filter { if case .file = $0.destination { true } else { false } }))
    }

    @Test func removingStoredEdgesEmptiesBothTrees() throws {
        let all = edges()
        var state = try state(with: all)
        for edge in all.reversed() { try state.removeStored(edge) }
        #expect(state.bySource.count == 0)
        #expect(state.byDestination.count == 0)
    }

    @Test func bytesThatAreNotUTF8AreADamagedEntry() throws {
        // A source key of 0xC3 0x28 (an invalid two-byte sequence) and one of 0xF0 0x9F 0x98 (a
        // truncated four-byte sequence that a repairing decoder turns into three bytes again).
        for bad in [[0xC3, 0x28], [0xF0, 0x9F, 0x98], [0xFF]] as [[UInt8]] {
            var key: [UInt8] = []
            RelationshipState.appendString("c", to: &key)
            bad.withUnsafeBytes { RelationshipState.appendEscaped($0, to: &key) }
            RelationshipState.appendString("n", to: &key)
            RelationshipState.appendDestination(.node(CollectionKeyPair(collection: "d", key: "k")), to: &key)
            key.append(0)
            let value = RelationshipState.rulesValue([])
            var failure: EngineError?
            key.withUnsafeBytes { k in
                value.withUnsafeBytes { v in
                    do throws(EngineError) { _ = try RelationshipState.parseSourceEntry(k, v) } catch { failure = error }
                }
            }
            #expect(failure != nil, "bytes \(bad)")
        }
    }
}
