import Foundation
import TestSupport
import YapDBQuery
@testable import YapDB

/// The row type of the secondary index model test: every field optional, so rows can leave
/// columns NULL or out of the index altogether.
struct IndexedItem: Codable, Equatable, Sendable {
    var age: Int?
    var score: Double?
    var name: String?
    var mixed: String?
    var raw: Data?

    /// Whether the handler sets nothing (the row is not in the index).
    var isEmpty: Bool { age == nil && score == nil && name == nil && mixed == nil && raw == nil }

    /// The handler's column values, as the model evaluator reads them.
    var columns: [String: SQLValue] {
        var result: [String: SQLValue] = [:]
        if let age { result["age"] = .integer(Int64(age)) }
        if let score { result["score"] = .real(score) }
        if let name { result["name"] = .text(name) }
        if let mixed { result["mixed"] = .text(mixed) }
        if let raw { result["raw"] = .blob([UInt8](raw)) }
        return result
    }
}

/// The index of the model test and the queries it asks.
enum SecondaryIndexModel {
    static let collections = ["a", "b", "c"]
    /// Rows of "c" are never indexed.
    static let allowed: Set<String> = ["a", "b"]
    static let columnTypes: [(String, YapDatabaseSecondaryIndexType)] =
        [("age", .integer), ("score", .real), ("name", .text), ("mixed", .numeric), ("raw", .blob)]

    static func makeIndex(versionTag: String) -> YapDatabaseSecondaryIndex {
        let setup = YapDatabaseSecondaryIndexSetup()
        for (name, type) in columnTypes { setup.addColumn(name, with: type) }
        let handler = YapDatabaseSecondaryIndexHandler.withObjectBlock { _, dict, _, _, object in
            guard let item = object as? IndexedItem else { return }
            if let age = item.age { dict["age"] = age }
            if let score = item.score { dict["score"] = score }
            if let name = item.name { dict["name"] = name }
            if let mixed = item.mixed { dict["mixed"] = mixed }
            if let raw = item.raw { dict["raw"] = raw }
        }
        let options = YapDatabaseSecondaryIndexOptions()
        options.allowedCollections = YapWhitelistBlacklist(whitelist: allowed)
        return YapDatabaseSecondaryIndex(setup: setup, handler: handler, versionTag: versionTag, options: options)
    }

    /// A second index, on the row's key alone: its handler never runs again for a changed
    /// object (a key block's default options), so every object write moves the row's
    /// object location in its entries without re-indexing (`SecondaryIndexState.moveObject`).
    static func makeKeyIndex() -> YapDatabaseSecondaryIndex {
        let setup = YapDatabaseSecondaryIndexSetup()
        setup.addColumn("key", with: .text)
        let handler = YapDatabaseSecondaryIndexHandler.withKeyBlock { _, dict, _, key in dict["key"] = key }
        let options = YapDatabaseSecondaryIndexOptions()
        options.allowedCollections = YapWhitelistBlacklist(whitelist: allowed)
        return YapDatabaseSecondaryIndex(setup: setup, handler: handler, versionTag: "1", options: options)
    }

    static func register(_ database: YapDatabase, versionTag: String = "1") {
        for collection in collections { database.registerCodableSerialization(IndexedItem.self, forCollection: collection) }
        precondition(database.register(makeIndex(versionTag: versionTag), withName: "idx"), "registration failed")
    }

    static var evaluator: QueryEvaluator {
        var columns: [String: ColumnType] = [:]
        for (name, type) in columnTypes { if let t = SecondaryIndexRow.columnType(type) { columns[name] = t } }
        // The `rowid` pseudo-column: each row's id, an INTEGER (the checks put it in each row).
        columns["rowid"] = .integer
        return QueryEvaluator(columns: columns)
    }

    // MARK: Random rows

    static let longPrefix = String(repeating: "p", count: 300)

    /// The key of row `n` (of 30): short, except `k29`, whose row key with a long text's
    /// column key does not fit one column entry (the entry carries no row key then).
    static func key(_ n: UInt64) -> String { n == 29 ? "k29" + String(repeating: "x", count: 750) : "k\(n)" }
    /// Longer than a tree entry: the row's values span several chunks.
    static let huge = String(repeating: "q", count: 1200)
    static let texts = ["", "a", "A", "ab", "abc", "B", "b", "ba", "5", "1.5", "é", "a\u{0}b", longPrefix, longPrefix + "a", longPrefix + "b"]
    static let mixed = ["12", "3.0", "x", "-4", "1e2", "abc", "12.5", " 7"]

    static func randomItem(_ rng: inout SeededRandom) -> IndexedItem {
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { rng.next() % 4 == 0 ? nil : value() }
        var item = IndexedItem()
        if rng.next() % 9 == 0 { return item }
        item.age = maybe(Int(rng.next() % 11) - 5)
        item.score = maybe([0.5, 1.0, 2.0, -1.5, 3.25, 1e300, -0.0][Int(rng.next() % 7)])
        item.name = maybe(texts[Int(rng.next() % UInt64(texts.count))])
        if rng.next() % 40 == 0 { item.name = huge + (rng.next() % 2 == 0 ? "" : "z") }
        item.mixed = maybe(mixed[Int(rng.next() % UInt64(mixed.count))])
        item.raw = rng.next() % 3 == 0 ? Data(rng.bytes(Int(rng.next() % 3))) : nil
        return item
    }

    // MARK: Random queries

    /// A random value for a parameter: numbers, texts that read as numbers or not, NULL, blobs.
    static func randomValue(_ rng: inout SeededRandom) -> SQLValue {
        switch rng.next() % 8 {
        case 0: return .null
        case 1, 2: return .integer(Int64(rng.next() % 11) - 5)
        case 3: return .real([0.5, 1.0, 2.0, -1.5, 3.25, 12.0][Int(rng.next() % 6)])
        case 4: return .text(mixed[Int(rng.next() % UInt64(mixed.count))])
        case 5: return .blob(rng.bytes(Int(rng.next() % 2)))
        default: return .text(texts[Int(rng.next() % UInt64(texts.count))])
        }
    }

    /// A random query text and its parameters, from the grammar: comparisons, IS [NOT] NULL,
    /// BETWEEN, IN (?), LIKE, NOT, AND, OR, parentheses, ORDER BY, LIMIT/OFFSET.
    static func randomQuery(_ rng: inout SeededRandom) -> (text: String, parameters: [QueryParameter]) {
        var parameters: [QueryParameter] = []
        func column() -> String {
            // Now and then the `rowid` pseudo-column (as the index spells it: these texts are
            // parsed without the index's columns).
            if rng.next() % 10 == 0 { return "rowid" }
            let name = columnTypes[Int(rng.next() % UInt64(columnTypes.count))].0
            return rng.next() % 5 == 0 ? "\"\(name)\"" : name
        }
        // A row id of the model's rows (they are small numbers), or a value of another kind.
        func rowid() -> SQLValue {
            switch rng.next() % 6 {
            case 0: return randomValue(&rng)
            case 1: return .text("\(rng.next() % 40)")
            case 2: return .real(Double(rng.next() % 40))
            default: return .integer(Int64(rng.next() % 40))
            }
        }
        func condition(_ depth: Int) -> String {
            let choice = depth > 2 ? rng.next() % 6 : rng.next() % 10
            switch choice {
            case 0, 1:
                let op = ["=", "==", "!=", "<>", "<", "<=", ">", ">="][Int(rng.next() % 8)]
                parameters.append(.value(randomValue(&rng)))
                return rng.next() % 4 == 0 ? "? \(op) \(column())" : "\(column()) \(op) ?"
            case 2: return "\(column()) IS \(rng.next() % 2 == 0 ? "" : "NOT ")NULL"
            case 3:
                parameters.append(.value(randomValue(&rng)))
                parameters.append(.value(randomValue(&rng)))
                return "\(column()) \(rng.next() % 4 == 0 ? "NOT " : "")BETWEEN ? AND ?"
            case 4:
                parameters.append(.list((0..<Int(rng.next() % 4)).map { _ in randomValue(&rng) }))
                return "\(column()) \(rng.next() % 4 == 0 ? "NOT " : "")IN (?)"
            case 5:
                let prefix = ["a", "A", "p", "", "1", "é", "ab"][Int(rng.next() % 7)]
                parameters.append(.value(.text(prefix + (rng.next() % 3 == 0 ? "_%" : "%"))))
                return "\(column()) LIKE ?"
            case 6: return "NOT (\(condition(depth + 1)))"
            case 7: return "(\(condition(depth + 1)) AND \(condition(depth + 1)))"
            case 8:
                // YapDatabase's documented form: `rowid IN (?)` with ids from `rowids(forKeys:)`.
                if rng.next() % 2 == 0 {
                    parameters.append(.list((0..<Int(rng.next() % 6)).map { _ in rowid() }))
                    return "rowid \(rng.next() % 4 == 0 ? "NOT " : "")IN (?)"
                }
                parameters.append(.value(rowid()))
                return rng.next() % 3 == 0 ? "? = rowid" : "rowid \(["=", "IS", ">", "<="][Int(rng.next() % 4)]) ?"
            default: return "(\(condition(depth + 1)) OR \(condition(depth + 1)))"
            }
        }
        var text = rng.next() % 8 == 0 ? "" : "WHERE \(condition(0))"
        if rng.next() % 2 == 0 {
            let terms = (0...Int(rng.next() % 2)).map { _ in column() + (rng.next() % 2 == 0 ? " DESC" : (rng.next() % 2 == 0 ? " ASC" : "")) }
            text += " ORDER BY " + terms.joined(separator: ", ")
        }
        if rng.next() % 3 == 0 {
            text += " LIMIT \(rng.next() % 6)"
            if rng.next() % 2 == 0 { text += " OFFSET \(rng.next() % 4)" }
        }
        return (text, parameters)
    }
}
