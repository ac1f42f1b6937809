import Foundation
import Testing
@testable import YapDB

/// A search inside the read-write transaction sees exactly that transaction's writes, however
/// often it rewrote the same rows; a rolled-back transaction leaves nothing behind for the next
/// one. These hold whether the index is changed row by row or its changes wait in memory until
/// commit (or until the transaction reads the index).
@Suite(.serialized) struct FullTextSearchOwnWritesTests {
    static let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]

    /// A small deterministic generator (no seed-dependent flakiness).
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 33
        }
    }

    static func text(_ rng: inout Generator) -> String {
        (0..<(1 + Int(rng.next() % 5))).map { _ in words[Int(rng.next() % UInt64(words.count))] }.joined(separator: " ")
    }

    /// The keys whose text holds `word`, in key order.
    static func expected(_ model: [String: String], _ word: String) -> [String] {
        model.filter { $0.value.split(separator: " ").contains(Substring(word)) }.keys.sorted()
    }

    static func found(_ tx: YapDatabaseReadTransaction, _ query: String) -> [String] {
        FullTextSearchTests.keys(tx, query).sorted()
    }

    @Test func aSearchInTheWritingTransactionSeesExactlyItsWrites() throws {
        let fixture = try DatabaseFixture()
        #expect(FullTextSearchTests.register(fixture.database))
        let connection = fixture.database.newConnection()
        var rng = Generator(state: 23)
        var model: [String: String] = [:]
        // A committed starting state, so the transaction below rewrites rows the trees hold.
        try connection.write { tx in
            for index in 0..<40 {
                let key = "k\(index)", text = Self.text(&rng)
                tx.setObject(text, forKey: key, inCollection: nil)
                model[key] = text
            }
        }
        try connection.write { tx in
            for round in 0..<6 {
                // Many inserts, updates and removals of the same sixty keys.
                for _ in 0..<300 {
                    let key = "k\(rng.next() % 60)"
                    if rng.next() % 4 == 0 {
                        tx.removeObject(forKey: key, inCollection: nil)
                        model[key] = nil
                    } else {
                        let text = Self.text(&rng)
                        tx.setObject(text, forKey: key, inCollection: nil)
                        model[key] = text
                    }
                }
                for word in Self.words {
                    #expect(Self.found(tx, word) == Self.expected(model, word), "round \(round), \(word)")
                }
                // Further writes after a read must be seen by the next read too.
                let key = "k\(round)"
                tx.setObject("zulu alpha", forKey: key, inCollection: nil)
                model[key] = "zulu alpha"
                #expect(Self.found(tx, "zulu") == Self.expected(model, "zulu"))
                #expect(Self.found(tx, "\"zulu alpha\"") == Self.expected(model, "zulu"))
            }
        }
        connection.read { tx in
            for word in Self.words + ["zulu"] { #expect(Self.found(tx, word) == Self.expected(model, word)) }
        }
    }

    @Test func aRollbackLeavesNothingPending() throws {
        let fixture = try DatabaseFixture()
        #expect(FullTextSearchTests.register(fixture.database))
        let connection = fixture.database.newConnection()
        try connection.write { tx in
            tx.setObject("alpha bravo", forKey: "a", inCollection: nil)
            tx.setObject("charlie", forKey: "c", inCollection: nil)
        }
        try connection.write { tx in
            tx.setObject("zulu yankee", forKey: "z", inCollection: nil)
            tx.setObject("zulu charlie", forKey: "a", inCollection: nil)
            tx.removeObject(forKey: "c", inCollection: nil)
            #expect(Self.found(tx, "zulu") == ["a", "z"])
            tx.setObject("yankee", forKey: "y", inCollection: nil)
            tx.rollback()
        }
        // The next write transaction starts from the committed index only.
        try connection.write { tx in
            #expect(Self.found(tx, "zulu").isEmpty)
            #expect(Self.found(tx, "yankee").isEmpty)
            #expect(Self.found(tx, "alpha") == ["a"])
            #expect(Self.found(tx, "charlie") == ["c"])
            tx.setObject("delta", forKey: "d", inCollection: nil)
        }
        connection.read { tx in
            #expect(Self.found(tx, "zulu").isEmpty)
            #expect(Self.found(tx, "yankee").isEmpty)
            #expect(Self.found(tx, "alpha") == ["a"])
            #expect(Self.found(tx, "charlie") == ["c"])
            #expect(Self.found(tx, "delta") == ["d"])
        }
        try fixture.reopen { database in _ = FullTextSearchTests.register(database) }
        fixture.database.newConnection().read { tx in
            #expect(Self.found(tx, "zulu").isEmpty)
            #expect(Self.found(tx, "alpha") == ["a"])
            #expect(Self.found(tx, "delta") == ["d"])
        }
    }

    /// Bulk inserts wait in memory and are merged per term: over several postings blocks, onto
    /// a block an earlier transaction left, and past a read in the same transaction; the stored
    /// index equals one built from scratch.
    @Test func bulkInsertsMergeIntoTheSameIndexARebuildMakes() throws {
        let fixture = try DatabaseFixture()
        #expect(FullTextSearchTests.register(fixture.database))
        let connection = fixture.database.newConnection()
        var model: [String: String] = [:]
        var rng = Generator(state: 7)
        try connection.write { tx in
            for index in 0..<50 {
                let key = "a\(index)", text = "alpha " + Self.text(&rng)
                tx.setObject(text, forKey: key, inCollection: nil)
                model[key] = text
            }
        }
        try connection.write { tx in
            for index in 0..<700 {
                let key = "b\(index)", text = "alpha " + Self.text(&rng)
                tx.setObject(text, forKey: key, inCollection: nil)
                model[key] = text
                if index == 400 {
                    #expect(Self.found(tx, "alpha").count == 451)
                    #expect(Self.found(tx, "golf") == Self.expected(model, "golf"))
                }
            }
            // An update after inserts merges them first.
            tx.setObject("zulu", forKey: "b10", inCollection: nil)
            model["b10"] = "zulu"
        }
        #expect(try fixture.database.verify().isValid)
        connection.read { tx in
            for word in Self.words + ["zulu"] { #expect(Self.found(tx, word) == Self.expected(model, word)) }
        }
        try fixture.reopen { database in _ = FullTextSearchTests.register(database) }
        fixture.database.newConnection().read { tx in
            #expect(Self.found(tx, "alpha") == Self.expected(model, "alpha"))
            #expect(Self.found(tx, "zulu") == ["b10"])
        }
        #expect(try fixture.database.verify().isValid)
    }

    /// Postings merged when the pending memory passes its limit, and at the end, make the same
    /// index as the same rows indexed one by one.
    @Test func mergesPastTheMemoryLimitMatchRowByRowIndexing() throws {
        var deferred = FullTextState(versionTag: "1", signature: "s", columnCount: 1)
        deferred.pendingLimit = 4096
        var direct = FullTextState(versionTag: "1", signature: "s", columnCount: 1)
        var rng = Generator(state: 5)
        var merges = 0
        for rowid in UInt64(1)...700 {
            let tokens = Self.text(&rng).split(separator: " ").enumerated().map { (term: String($0.element), position: $0.offset) }
            let analysis = FullTextAnalysis(columns: [tokens], indexable: { _ in true })
            let before = deferred.pendingBytes
            try deferred.setRow(rowid, analysis, newest: true)
            if deferred.pendingBytes < before { merges += 1 }
            #expect(deferred.pendingBytes <= 4096)
            try direct.setRow(rowid, analysis)
        }
        #expect(merges > 3)
        // One more row after the loop's last merge (if the last row merged) waits.
        let last = FullTextAnalysis(columns: [[(term: "alpha", position: 0)]], indexable: { _ in true })
        try deferred.setRow(701, last, newest: true)
        try direct.setRow(701, last)
        #expect(deferred.hasPending)
        try deferred.mergePending()
        #expect(!deferred.hasPending)
        #expect(try deferred.differences(from: direct).isEmpty)
        for word in Self.words { #expect(try deferred.frequency(word) == direct.frequency(word)) }
    }
}
