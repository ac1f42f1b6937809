import Foundation
import Testing
import YapDBIndex
import YapDBStorage
@testable import YapDB
import YapDBEngine

/// A row taken out of (or put into) a postings block by editing the block's bytes and its
/// positions entry gives the same bytes as the block re-encoded without (with) it, wherever the
/// row sits; in a
/// database, removals and updates at the start, middle and end of blocks (and of a block's only
/// row) leave an index equal to a rebuild, with words and phrases still found.
@Suite struct FullTextRowRemovalTests {
    /// A block of `count` rows whose row id gaps cross varint sizes, each with its positions.
    static func block(_ count: Int) -> FullTextPostingBlock {
        var postings: [FullTextPosting] = [], positions: [[UInt8]] = []
        var rowid: UInt64 = 5
        for i in 0..<count {
            rowid += [1, 200, 3, 20_000, 1, 127, 128][i % 7]
            let hits = i % 3 == 0 ? [(column: 0, count: 1 + i % 4), (column: 2, count: 1)] : [(column: 1, count: 1 + i % 5)]
            postings.append(FullTextPosting(rowid: rowid, hits: hits))
            positions.append(FullTextPositions.encode(hits.map { (column: $0.column, positions: Array(1...$0.count)) }))
        }
        return FullTextPostingBlock(postings: postings, minimumLength: 3, positions: positions)
    }

    @Test func cuttingAnyRowMatchesTheReencodedBlock() throws {
        for count in [1, 2, 3, 9, 128] {
            let whole = Self.block(count)
            let bytes = whole.encoded(), positions = FullTextBlockPositions.encode(whole.positions)
            for index in 0..<count {
                let rowid = whole.postings[index].rowid
                let cut = try #require(try bytes.withBytes { raw throws(EngineError) in
                    try FullTextPostingBlock.removing(rowid, from: raw, columnCount: 3)
                })
                #expect(cut.index == index && cut.count == count)
                var rest = whole
                rest.postings.remove(at: index)
                rest.positions.remove(at: index)
                guard count > 1 else {
                    #expect(cut.bytes == nil)
                    continue
                }
                // Same bytes as a fresh encoding: the largest count is exact again, the length
                // bound unchanged.
                #expect(cut.bytes == rest.encoded(), "row \(index) of \(count)")
                #expect(cut.last == rest.lastRowid)
                let rows = try FullTextBlockPositions.removing(row: index, of: count, from: positions)
                #expect(rows == FullTextBlockPositions.encode(rest.positions), "positions of row \(index) of \(count)")
            }
            // A row id the block does not hold: nothing to cut.
            let absent = try bytes.withBytes { raw throws(EngineError) in
                try FullTextPostingBlock.removing(whole.postings[0].rowid + 1, from: raw, columnCount: 3)
            }
            #expect(absent == nil)
        }
    }

    @Test func puttingARowAnywhereMatchesTheReencodedBlock() throws {
        for count in [1, 2, 9, 127, 128] {
            let whole = Self.block(count)
            let bytes = whole.encoded(), positions = FullTextBlockPositions.encode(whole.positions)
            // A row before the first, between every two rows (where there is a gap), after the last.
            var places = [whole.postings[0].rowid - 1, whole.postings[count - 1].rowid + 300]
            for i in 1..<count where whole.postings[i].rowid - whole.postings[i - 1].rowid > 1 { places.append(whole.postings[i].rowid - 1) }
            for rowid in places {
                let posting = FullTextPosting(rowid: rowid, hits: [(column: 1, count: 9)])
                let rowPositions = FullTextPositions.encode([(column: 1, positions: Array(1...9))])
                let edit = try bytes.withBytes { raw throws(EngineError) in
                    try FullTextPostingBlock.inserting(posting, length: 2, into: raw, columnCount: 3)
                }
                guard count < FullTextPostingBlock.maximumEntries else {
                    #expect(edit == nil, "a full block takes no row")
                    continue
                }
                let made = try #require(edit)
                var grown = whole
                let index = grown.postings.firstIndex { $0.rowid > rowid } ?? count
                grown.postings.insert(posting, at: index)
                grown.positions.insert(rowPositions, at: index)
                grown.minimumLength = 2
                #expect(made.index == index && made.count == count)
                #expect(made.bytes == grown.encoded(), "row \(rowid) into \(count)")
                let rows = try FullTextBlockPositions.inserting(rowPositions, at: index, of: count, into: positions)
                #expect(rows == FullTextBlockPositions.encode(grown.positions))
            }
            // A row id the block holds: left to the decoding path.
            if count < FullTextPostingBlock.maximumEntries {
                let present = try bytes.withBytes { raw throws(EngineError) in
                    try FullTextPostingBlock.inserting(whole.postings[count - 1], length: 9, into: raw, columnCount: 3)
                }
                #expect(present == nil)
            }
        }
    }

    @Test func hostileBytesAreAnErrorNotATrap() throws {
        let whole = Self.block(9), bytes = whole.encoded(), first = whole.postings[0].rowid
        for end in [1, 4, 8, bytes.count - 1] {
            let short = Array(bytes[0..<end])
            #expect(throws: EngineError.self) {
                try short.withBytes { raw throws(EngineError) in _ = try FullTextPostingBlock.removing(first, from: raw, columnCount: 3) }
            }
        }
        // A column past the index's.
        #expect(throws: EngineError.self) {
            try bytes.withBytes { raw throws(EngineError) in _ = try FullTextPostingBlock.removing(first, from: raw, columnCount: 2) }
        }
        #expect(throws: EngineError.self) { _ = try FullTextBlockPositions.removing(row: 0, of: 3, from: [5, 1]) }
        let posting = FullTextPosting(rowid: first + 1, hits: [(column: 0, count: 1)])
        for end in [1, 4, bytes.count - 1] {
            let short = Array(bytes[0..<end])
            #expect(throws: EngineError.self) {
                try short.withBytes { raw throws(EngineError) in _ = try FullTextPostingBlock.inserting(posting, length: 1, into: raw, columnCount: 3) }
            }
        }
    }

    static func text(_ i: Int) -> String {
        "alpha bravo w\(i % 11) charlie" + (i == 150 ? " solo" : "")
    }

    @Test func removalsAndUpdatesAcrossBlocksMatchARebuild() throws {
        let fixture = try DatabaseFixture()
        #expect(FullTextSearchTests.register(fixture.database))
        let connection = fixture.database.newConnection()
        var model: [String: String] = [:]
        // 400 rows in one transaction: "alpha", "bravo" and "charlie" fill several full blocks
        // (at most 128 rows each), "solo" is a block of one row.
        try connection.write { tx in
            for i in 0..<400 {
                tx.setObject(Self.text(i), forKey: "k\(i)", inCollection: nil)
                model["k\(i)"] = Self.text(i)
            }
        }
        func check(_ step: String) throws {
            connection.read { tx in
                for query in ["alpha", "charlie", "w3", "solo", "\"alpha bravo\"", "\"bravo w5 charlie\"", "\"bravo alpha\"", "omega"] {
                    let phrase = query.hasPrefix("\"") ? String(query.dropFirst().dropLast()) : query
                    let expected = model.filter { ($0.value + " ").contains(phrase + " ") }.keys.sorted()
                    #expect(FullTextSearchTests.keys(tx, query).sorted() == expected, "\(step): \(query)")
                }
            }
            let report = try fixture.database.verify()
            #expect(report.isValid, "\(step): \(report.problems)")
        }
        try check("built")
        // The first, a middle and the last rows of the first blocks, the last row of all, and
        // the only row of "solo"'s block; one transaction each.
        for i in [0, 60, 127, 128, 129, 255, 256, 399, 150] {
            try connection.write { tx in tx.removeObject(forKey: "k\(i)", inCollection: nil) }
            model["k\(i)"] = nil
            try check("removed k\(i)")
        }
        // Updates (a removal and an insert of the same row) at block edges and in the middle,
        // one of them giving "solo" back to a row.
        for (i, text) in [(1, "bravo alpha"), (200, "charlie solo"), (398, "alpha bravo w5 charlie"), (300, "delta")] {
            try connection.write { tx in tx.setObject(text, forKey: "k\(i)", inCollection: nil) }
            model["k\(i)"] = text
            try check("updated k\(i)")
        }
        // Many removals in one transaction, every third row: blocks shrink by several rows.
        try connection.write { tx in
            for i in stride(from: 2, to: 400, by: 3) {
                tx.removeObject(forKey: "k\(i)", inCollection: nil)
                model["k\(i)"] = nil
            }
        }
        try check("every third removed")
    }
}
