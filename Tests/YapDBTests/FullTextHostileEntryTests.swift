import Foundation
import Testing
import TestSupport
import YapDBIndex
import YapDBFullText
@testable import YapDB

/// Hostile bytes in a full-text index's entries (a damaged or forged page that still passes its
/// checksum): every decoder and every query over them ends in a value or a typed `PageError`,
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
        #expect(throws: PageError.self) { try huge.withUnsafeBytes { raw in try FullTextPostingBlock.header(of: raw) } }
        // A block filed under a row id it does not hold.
        var state = try Self.state()
        _ = try state.postings.upsert(FullTextState.postingsKey("alpha", lastRowid: 2), FullTextPostingBlock(
            postings: [FullTextPosting(rowid: 1, hits: [(0, 1)])], minimumLength: 1).encoded())
        let query = try FTSQuery.parse("alpha", columnNames: ["a", "b"], tokenizer: Self.tokenizer)
        let searcher = FullTextSearcher(state: state, query: query)
        _ = try? searcher.count()
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
