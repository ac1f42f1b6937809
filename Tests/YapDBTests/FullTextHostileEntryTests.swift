import Foundation
import Testing
import TestSupport
import YapDBIndex
import YapDBFullText
@testable import YapDB
import YapDBEngine

/// Hostile bytes in a full-text index's entries (a damaged or forged page that still passes its
/// checksum): every decoder and every query over them ends in a value or a typed `EngineError`,
/// never a trap, a hang or a huge allocation.
@Suite struct FullTextHostileEntryTests {
    static let tokenizer = FTSTokenizer(.default)

    /// A real index of a few rows, on in-memory trees.
    static func state() throws -> FullTextState {
        var state = FullTextState(versionTag: "1", signature: "s", columnCount: 2)
        let texts: [[String?]] = [["alpha beta", "gamma"], ["beta beta alpha", nil], ["gamma delta", "alpha"]]
        for (i, row) in texts.enumerated() {
            let document = FTSDocument(texts: row, tokenizer: tokenizer)
            try state.setRow(UInt64(i + 1), FullTextAnalysis(columns: document.columns.map { $0.map { ($0.term, $0.position) } },
                                                             indexable: state.isIndexable))
        }
        return state
    }

    @Test func decodersRefuseRandomBytes() {
        var rng = SeededRandom(seed: 7)
        for round in 0..<20_000 {
            let length = Int(rng.next() % 64)
            var bytes = rng.bytes(length)
            // Start some inputs with plausible headers, so the decoders get past the first field.
            if round % 2 == 0, !bytes.isEmpty { bytes[0] = UInt8(rng.next() % 5) }
            bytes.withUnsafeBytes { raw in
                _ = try? FullTextPostingBlock(decoding: raw, columnCount: 2)
                _ = try? FullTextPostingBlock.header(of: raw)
                var ids: [UInt64] = []
                _ = try? FullTextPostingBlock.rowids(of: raw, into: &ids)
                #expect(ids.count <= FullTextPostingBlock.maximumEntries)
                _ = try? FullTextPositions.decode(raw, columnCount: 2, maximumPosition: 100)
                var ranges: [Range<Int>] = []
                _ = try? FullTextBlockPositions.ranges(of: raw, count: Int(rng.next() % 130), into: &ranges)
                #expect(ranges.count <= 130 && ranges.allSatisfy { $0.upperBound <= raw.count })
            }
        }
    }

    @Test func aBlockRoundTripsAndAHugeCountIsRefused() throws {
        let block = FullTextPostingBlock(postings: [FullTextPosting(rowid: 5, hits: [(0, 2)]), FullTextPosting(rowid: 9, hits: [(0, 1), (1, 3)])],
                                         minimumLength: 4)
        let decoded = try block.encoded().withUnsafeBytes { raw in try FullTextPostingBlock(decoding: raw, columnCount: 2) }
        #expect(decoded.postings == block.postings && decoded.minimumLength == 4 && decoded.maximumCount == 4)
        // A count of 2^40 rows: refused before anything is allocated.
        var huge: [UInt8] = []
        huge.appendVarint(1 << 40)
        #expect(throws: EngineError.self) { try huge.withUnsafeBytes { raw in try FullTextPostingBlock.header(of: raw) } }
        // A block filed under a row id it does not hold.
        var state = try Self.state()
        _ = try state.postings.upsert(FullTextState.postingsKey(try #require(try state.termID("alpha")), lastRowid: 2), FullTextPostingBlock(
            postings: [FullTextPosting(rowid: 1, hits: [(0, 1)])], minimumLength: 1).encoded())
        let query = try FTSQuery.parse("alpha", columnNames: ["a", "b"], tokenizer: Self.tokenizer)
        let searcher = FullTextSearcher(state: state, query: query)
        _ = try? searcher.count()
    }

    /// A block's positions entry: one row per posting, each behind its length. Wrong lengths,
    /// a wrong number of rows, a missing entry: a typed error, never a trap.
    @Test func blockPositionsRefuseBadLengths() throws {
        let rows: [[UInt8]] = [[0, 1, 3], [1, 2, 0, 4], []]
        let bytes = FullTextBlockPositions.encode(rows)
        #expect(try FullTextBlockPositions.split(bytes, count: 3) == rows)
        #expect(throws: EngineError.self) { try FullTextBlockPositions.split(bytes, count: 2) }   // bytes left over
        #expect(throws: EngineError.self) { try FullTextBlockPositions.split(bytes, count: 4) }   // a row missing
        var long = bytes
        long[0] = 0x7F   // a length past the end
        #expect(throws: EngineError.self) { try FullTextBlockPositions.split(long, count: 3) }
        var huge: [UInt8] = []
        huge.appendVarint(1 << 40)
        #expect(throws: EngineError.self) { try FullTextBlockPositions.split(huge, count: 1) }
        // A block whose positions entry is gone: phrase queries and removals fail typed.
        var state = try Self.state()
        var keys: [[UInt8]] = []
        try state.positions.forEach { key, _ in keys.append(Array(key)); return true }
        for key in keys { _ = try state.positions.remove(key) }
        let query = try FTSQuery.parse("\"beta alpha\"", columnNames: ["a", "b"], tokenizer: Self.tokenizer)
        #expect(throws: EngineError.self) { try FullTextSearcher(state: state, query: query).count() }
        #expect(throws: EngineError.self) { try state.removeRow(2) }
    }

    /// Positions live one entry per postings block (not per row), and a phrase reads each
    /// term's positions a block at a time.
    @Test func positionsAreOneEntryPerBlock() throws {
        var state = FullTextState(versionTag: "1", signature: "s", columnCount: 1)
        for i in 1...300 {
            let document = FTSDocument(texts: [i % 3 == 0 ? "alpha beta gamma" : "beta alpha"], tokenizer: Self.tokenizer)
            try state.setRow(UInt64(i), FullTextAnalysis(columns: document.columns.map { $0.map { ($0.term, $0.position) } },
                                                         indexable: state.isIndexable), newest: true)
        }
        try state.mergePending()
        #expect(state.positions.count == state.postings.count)
        #expect(state.postings.count < 12)
        let query = try FTSQuery.parse("\"alpha beta\"", columnNames: ["a"], tokenizer: Self.tokenizer)
        #expect(try FullTextSearcher(state: state, query: query).count() == 100)
        var problems: [String] = []
        let all = try state.allPostings(checking: &problems)
        #expect(problems.isEmpty && all["alpha"]?.count == 300)
        // Removing rows rewrites blocks with their positions; a rebuild agrees.
        for i in stride(from: 3, through: 300, by: 6) { try state.removeRow(UInt64(i)) }
        #expect(try FullTextSearcher(state: state, query: query).count() == 50)
        #expect(try FullTextSearcher(state: state, query: FTSQuery.parse("\"beta alpha\"", columnNames: ["a"], tokenizer: Self.tokenizer)).count() == 200)
        problems = []
        _ = try state.allPostings(checking: &problems)
        #expect(problems.isEmpty)
    }

    @Test func appendingToABlockEqualsEncodingItWhole() throws {
        var rng = SeededRandom(seed: 3)
        var postings = [FullTextPosting(rowid: 3, hits: [(1, 2)])]
        var bytes = FullTextPostingBlock(postings: postings, minimumLength: 9).encoded()
        var minimum = 9
        while postings.count < FullTextPostingBlock.maximumEntries {
            let hits: [(column: Int, count: Int)] = rng.next() % 2 == 0 ? [(0, Int(1 + rng.next() % 5))] : [(0, 1), (2, Int(1 + rng.next() % 300))]
            let posting = FullTextPosting(rowid: postings.last!.rowid + 1 + rng.next() % 1000, hits: hits)
            let length = Int(rng.next() % 50)
            bytes = try #require(try FullTextPostingBlock.appending(posting, after: postings.last!.rowid, length: length, to: bytes))
            postings.append(posting)
            minimum = min(minimum, length)
            #expect(bytes == FullTextPostingBlock(postings: postings, minimumLength: minimum).encoded())
        }
        // A full block takes no more.
        #expect(try FullTextPostingBlock.appending(FullTextPosting(rowid: 1 << 50, hits: [(0, 1)]), after: postings.last!.rowid,
                                                   length: 1, to: bytes) == nil)
    }

    @Test func queriesOverDamagedEntriesGiveTypedErrors() throws {
        var rng = SeededRandom(seed: 11)
        let queries = ["alpha", "alpha beta", "\"beta alpha\"", "al*", "a:gamma", "NEAR(alpha gamma, 2)", "beta NOT gamma", "^gamma"]
        var errors = 0
        for round in 0..<400 {
            var state = try Self.state()
            // Damage one entry of one tree.
            let trees = [\FullTextState.terms, \FullTextState.postings, \FullTextState.positions, \FullTextState.documents]
            let path = trees[round % trees.count]
            var keys: [[UInt8]] = []
            try state[keyPath: path].forEach { key, _ in keys.append(Array(key)); return true }
            let key = keys[Int(rng.next() % UInt64(keys.count))]
            _ = try state[keyPath: path].upsert(key, rng.bytes(Int(rng.next() % 24)))
            for text in queries {
                let query = try FTSQuery.parse(text, columnNames: ["a", "b"], tokenizer: Self.tokenizer)
                let searcher = FullTextSearcher(state: state, query: query)
                do {
                    _ = try searcher.count()
                    _ = try searcher.ranked(weights: [1, 2], limit: 2)
                    _ = try searcher.ranked(weights: [], limit: nil)
                    _ = try searcher.matches(2)
                } catch {
                    errors += 1
                }
            }
            // Changes over damaged entries fail with a typed error too.
            do {
                try state.removeRow(UInt64(1 + rng.next() % 3))
                _ = try state.differences(from: Self.state())
            } catch {
                errors += 1
            }
        }
        #expect(errors > 0)
    }
}
