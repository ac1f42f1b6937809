import Foundation
import Testing
import YapDB
import TestSupport

/// `YapDatabaseOptions.dirtyPageBudget` through the public API: one large read-write
/// transaction that feeds a view and a full-text index spills their changed pages (and the key
/// directory's) to the index files part way, and every reader sees exactly what it would have
/// without a budget — before the commit, after it, and after a crash and a reopen.
@Suite struct DirtyPageBudgetClientTests {
    final class Fixture: @unchecked Sendable {
        let directory = TemporaryDirectory("yapdb-dirty-budget")
        var path: String { directory.file("test.yapdb") }
        var database: YapDatabase!

        init() throws { try open() }

        func open() throws {
            let options = YapDatabaseOptions()
            options.checkpointThreshold = 0
            options.dirtyPageBudget = 8 << 10   // 16 pages of 512 bytes
            database = try YapDatabase.open(path: path, options: options, indexPageSize: 512)
            #expect(database.register(ViewPagesTests.view(), withName: "v"))
            #expect(FullTextSearchTests.register(database))
        }

        deinit {
            try? database?.close()
            directory.remove()
        }
    }

    static let words = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel"]

    static func text(_ n: Int) -> String { "\(words[n % 8]) \(words[(n / 8) % 8]) number\(n % 50)" }

    @Test func aLargeTransactionWithAViewAndFullTextSearchSpillsAndReadsBackEverything() throws {
        let fixture = try Fixture()
        var model: [Int: Int] = [:]
        let reader = fixture.database.newConnection()
        let before = reader.read { tx in ViewPagesTests.contents(tx) }
        fixture.database.newConnection().readWrite { tx in
            for n in 0..<3_000 {
                tx.setObject(n * 7 % 3_001, forKey: "k\(n)", inCollection: "c")
                tx.setObject(Self.text(n), forKey: "t\(n)", inCollection: "texts")
                model[n] = n * 7 % 3_001
                if n == 2_000 {
                    #expect(reader.read { ViewPagesTests.contents($0) } == before, "readers see the snapshot before")
                }
            }
            #expect(ViewPagesTests.contents(tx) == ViewPagesTests.expected(model))
        }
        #expect(fixture.database.spillCount > 2, "the transaction spilled (\(fixture.database.spillCount) times)")
        func check(_ database: YapDatabase) {
            database.newConnection().read { tx in
                #expect(ViewPagesTests.contents(tx) == ViewPagesTests.expected(model))
                #expect(Set(FullTextSearchTests.keys(tx, "apple")) == Set((0..<3_000).filter { $0 % 8 == 0 || ($0 / 8) % 8 == 0 }.map { "t\($0)" }))
                #expect(Set(FullTextSearchTests.keys(tx, "number7")) == Set((0..<3_000).filter { $0 % 50 == 7 }.map { "t\($0)" }))
            }
        }
        check(fixture.database)
        fixture.database.abandon()
        fixture.database = nil
        try fixture.open()
        check(fixture.database)
    }
}
