import Foundation
import Testing
import TestSupport
import YapDBIndex
import YapDBFullText
@testable import YapDB

/// A merge of pending postings writes each term's new rows as new blocks after its last one, and
/// writes a term's short trailing blocks again together once the state's `tailLimit` of them
/// pile up (FullTextState+Merge.swift). Checked here on in-memory trees: the index always equals
/// one built in a single merge, a term's block count stays bounded whatever the commit sizes, and
/// the tail count in the term's entry is only a hint.
@Suite struct FullTextAppendMergeTests {
    static let tokenizer = FTSTokenizer(.default)

    static func analysis(_ text: String, _ state: FullTextState) -> FullTextAnalysis {
        let document = FTSDocument(texts: [text], tokenizer: tokenizer)
        return FullTextAnalysis(columns: document.columns.map { $0.map { ($0.term, $0.position) } }, indexable: state.isIndexable)
    }

    /// Rows 1 ... `texts.count` in commits of `sizes` rows (a merge after each, as `willCommit` does;
    /// the last size repeats).
    static func build(_ texts: [String], commits sizes: [Int], tailLimit: Int = FullTextState.defaultTailLimit) throws -> FullTextState {
        var state = FullTextState(versionTag: "1", signature: "s", columnCount: 1)
        state.tailLimit = tailLimit
        var row = 0, commit = 0
        while row < texts.count {
            let size = sizes[min(commit, sizes.count - 1)]
            for _ in 0..<size where row < texts.count {
                row += 1
                try state.setRow(UInt64(row), analysis(texts[row - 1], state), newest: true)
            }
            try state.mergePending()
            commit += 1
        }
        return state
    }

    static func count(_ state: FullTextState, _ query: String) throws -> Int {
        try FullTextSearcher(state: state, query: FTSQuery.parse(query, columnNames: ["a"], tokenizer: tokenizer)).count()
    }

    /// The blocks may be cut differently; the rows, counts and positions are the same.
    static func expectSame(_ state: FullTextState, as texts: [String]) throws {
        let whole = try build(texts, commits: [texts.count])
        let problems = try state.differences(from: whole)
        #expect(problems.isEmpty, "\(problems)")
    }

    /// The most blocks a term of `rows` rows may have: settled blocks are at least 7/8 full.
    static func bound(rows: Int, tailLimit: Int) -> Int { rows / (FullTextPostingBlock.maximumEntries * 7 / 8) + 1 + tailLimit }

    /// Tail limits to check: the default and a longer tail (the merge of several blocks).
    static let tailLimits = [FullTextState.defaultTailLimit, 4]

    @Test(arguments: tailLimits)
    func aTermInEveryCommitKeepsFewBlocks(tailLimit: Int) throws {
        // 150 commits of 2 rows: without merges "common" would have 150 blocks.
        let texts = (1...300).map { $0 % 5 == 0 ? "common thing" : "common" }
        var state = FullTextState(versionTag: "1", signature: "s", columnCount: 1)
        state.tailLimit = tailLimit
        for row in 1...300 {
            try state.setRow(UInt64(row), Self.analysis(texts[row - 1], state), newest: true)
            guard row % 2 == 0 else { continue }
            try state.mergePending()
            // Only "common" and "thing": count "common"'s blocks as all blocks but "thing"'s.
            #expect(state.postings.count <= Self.bound(rows: row, tailLimit: tailLimit) + Self.bound(rows: row / 5, tailLimit: tailLimit),
                    "after row \(row)")
        }
        #expect(try Self.count(state, "common") == 300)
        #expect(try Self.count(state, "\"common thing\"") == 60)
        #expect(state.positions.count == state.postings.count)
        try Self.expectSame(state, as: texts)
    }

    @Test(arguments: tailLimits)
    func aLargeCommitAfterSmallOnesMergesTheTail(tailLimit: Int) throws {
        let texts = (1...700).map { "frequent w\($0 % 37) " + ($0 % 3 == 0 ? "x y" : "y x") }
        // Small commits, then one that fills several blocks, then small ones again.
        let state = try Self.build(texts, commits: [1, 1, 1, 2, 3, 300, 1, 1, 1, 1, 1, 1, 50], tailLimit: tailLimit)
        #expect(try Self.count(state, "frequent") == 700)
        #expect(try Self.count(state, "\"x y\"") == 233)
        #expect(try Self.count(state, "w3 NOT w4") == 19)
        var blocks = 0
        let prefix = FullTextState.termPrefix(try #require(try state.termID("frequent")))
        try state.postings.forEach { key, _ in
            if key.count == FullTextState.postingsKeySize, key.starts(with: prefix) { blocks += 1 }
            return true
        }
        #expect(blocks <= Self.bound(rows: 700, tailLimit: tailLimit))
        try Self.expectSame(state, as: texts)
    }

    @Test(arguments: tailLimits)
    func updatesAndRemovalsAmongAppendedBlocks(tailLimit: Int) throws {
        var texts = (1...200).map { "alpha w\($0 % 11) beta" }
        var state = try Self.build(texts, commits: [3, 1, 7, 2], tailLimit: tailLimit)
        for row in stride(from: 5, through: 200, by: 7) {
            texts[row - 1] = "gamma w\(row % 11)"
            try state.setRow(UInt64(row), Self.analysis(texts[row - 1], state))
        }
        for row in stride(from: 2, through: 200, by: 13) { try state.removeRow(UInt64(row)) }
        // More commits after the edits.
        for row in 201...260 {
            texts.append("alpha beta")
            try state.setRow(UInt64(row), Self.analysis(texts[row - 1], state), newest: true)
            if row % 3 == 0 { try state.mergePending() }
        }
        try state.mergePending()
        var rebuilt = FullTextState(versionTag: "1", signature: "s", columnCount: 1)
        let removed = Set(stride(from: 2, through: 200, by: 13).map { UInt64($0) })
        for row in 1...260 where !removed.contains(UInt64(row)) {
            try rebuilt.setRow(UInt64(row), Self.analysis(texts[row - 1], rebuilt), newest: true)
        }
        try rebuilt.mergePending()
        let problems = try state.differences(from: rebuilt)
        #expect(problems.isEmpty, "\(problems)")
        #expect(try Self.count(state, "alpha") == rebuilt.documentCount - (try Self.count(rebuilt, "gamma")))
    }

    /// A forged tail count (larger than the blocks there are, or huge) costs a merge, never a
    /// wrong answer or a trap.
    @Test(arguments: tailLimits)
    func aWrongTailCountIsHarmless(tailLimit: Int) throws {
        let texts = (1...40).map { "alpha \($0 % 2 == 0 ? "beta" : "gamma")" }
        var state = try Self.build(Array(texts[0..<20]), commits: [2], tailLimit: tailLimit)
        for forged in [0, 3, 1_000, Int(UInt16.max)] {
            let key = Array("alpha".utf8)
            guard let entry = try state.termEntry(key) else {
                Issue.record("no entry for alpha")
                return
            }
            _ = try state.terms.upsert(key, FullTextState.encodeTermEntry(.init(count: entry.count, id: entry.id, tail: forged)))
            let row = state.documentCount + 1
            try state.setRow(UInt64(row), Self.analysis(texts[row - 1], state), newest: true)
            try state.mergePending()
        }
        #expect(try Self.count(state, "alpha") == 24)
        try Self.expectSame(state, as: Array(texts[0..<24]))
    }

    /// Postings and positions are filed under the term's 4-byte id, whatever the term's length;
    /// a block under an id that names no term is reported by verify's checks.
    @Test func postingsAreKeyedByTermID() throws {
        let long = String(repeating: "long", count: 40)
        var state = try Self.build((1...50).map { "\(long) short w\($0 % 4)" }, commits: [7])
        var keySizes: Set<Int> = []
        try state.postings.forEach { key, _ in keySizes.insert(key.count); return true }
        #expect(keySizes == [FullTextState.postingsKeySize])
        keySizes = []
        try state.positions.forEach { key, _ in keySizes.insert(key.count); return true }
        #expect(keySizes == [FullTextState.postingsKeySize + 1])
        #expect(try Self.count(state, long) == 50)
        #expect(try Self.count(state, "\"\(long) short\"") == 50)
        #expect(try Self.count(state, "lo*") == 50)
        var problems: [String] = []
        _ = try state.allPostings(checking: &problems)
        #expect(problems.isEmpty)
        _ = try state.postings.upsert(FullTextState.postingsKey(9_999, lastRowid: 3), FullTextPostingBlock(
            postings: [FullTextPosting(rowid: 3, hits: [(0, 1)])], minimumLength: 1).encoded())
        _ = try state.allPostings(checking: &problems)
        #expect(problems.contains { $0.contains("names no term") })
    }
}
