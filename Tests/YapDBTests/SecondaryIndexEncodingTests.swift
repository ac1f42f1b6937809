import Foundation
import Testing
import TestSupport
import YapDBIndex
import YapDBEngine
import YapDBQuery
@testable import YapDB

/// The column trees' key encoding orders values exactly as `SQLValue.compare` (SQLite's order):
/// NULL, numbers (integers and reals interleaved by exact value), text, blobs.
@Suite struct SecondaryIndexEncodingTests {
    static let limit = 16

    static func key(_ value: SQLValue) -> [UInt8] { SecondaryIndexRow.orderedKey(value, limit: limit) }

    /// Values around the places an encoding gets wrong: integer/real boundaries near 2^53 and
    /// 2^63, subnormals, signed zeros, infinities, texts with NULs and shared prefixes.
    static var tricky: [SQLValue] {
        var values: [SQLValue] = [.null, .integer(0), .real(0), .real(-0.0), .integer(1), .real(1), .integer(-1), .real(-1),
                                  .real(0.5), .real(-0.5), .integer(.max), .integer(.min), .integer(.max - 1), .integer(.min + 1),
                                  .real(0x1p63), .real(-0x1p63), .real(0x1p62), .integer(1 << 53), .integer((1 << 53) + 1),
                                  .real(0x1p53), .real(0x1p53 + 2), .real(.infinity), .real(-.infinity),
                                  .real(.leastNonzeroMagnitude), .real(-.leastNonzeroMagnitude), .real(.greatestFiniteMagnitude),
                                  .real(-.greatestFiniteMagnitude), .real(.leastNormalMagnitude), .real(2.5), .integer(2), .integer(3),
                                  .text(""), .text("a"), .text("a\u{0}"), .text("a\u{0}b"), .text("ab"), .text("b"), .text("é"),
                                  .text("5"), .blob([]), .blob([0]), .blob([0, 0]), .blob([1]), .blob([0xFF])]
        values.append(.integer(Int64(1) << 62))
        values.append(.real(Double(Int64.max)))
        return values
    }

    static func sign(_ x: Int) -> Int { x < 0 ? -1 : (x > 0 ? 1 : 0) }

    @Test func trickyValuesOrderAsSQLiteCompares() {
        let values = Self.tricky
        for a in values {
            for b in values {
                let byKey = Self.sign(compareBytes(Self.key(a), Self.key(b)))
                #expect(byKey == Self.sign(SQLValue.compare(a, b)), "\(a) vs \(b)")
            }
        }
    }

    @Test func randomValuesOrderAsSQLiteCompares() {
        var rng = SeededRandom(seed: 0x5EC1)
        var values: [SQLValue] = []
        for _ in 0..<600 {
            switch rng.next() % 6 {
            case 0: values.append(.integer(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 63)))
            case 1: values.append(.real(checking: Double(bitPattern: rng.next())))
            case 2: values.append(.real(Double(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 63))))
            case 3: values.append(.integer(Int64(rng.next() % 20) - 10))
            case 4: values.append(.text(String(decoding: rng.bytes(Int(rng.next() % 6)).map { $0 % 4 + 0x60 }, as: UTF8.self)))
            default: values.append(.blob(rng.bytes(Int(rng.next() % 4)).map { $0 % 3 }))
            }
        }
        for a in values {
            for b in values.prefix(80) {
                #expect(Self.sign(compareBytes(Self.key(a), Self.key(b))) == Self.sign(SQLValue.compare(a, b)), "\(a) vs \(b)")
            }
        }
    }

    /// Texts longer than the limit keep their order against every value they differ from
    /// within the limit; texts sharing the cut prefix encode equally and are flagged truncated.
    @Test func truncatedTextsKeepTheirPlace() {
        let long = String(repeating: "m", count: Self.limit)
        let values: [SQLValue] = [.text(long), .text(long + "a"), .text(long + "b"), .text(String(long.dropLast()) + "n"),
                                  .text(String(long.dropLast())), .text(long + "\u{0}"), .blob(Array(long.utf8) + [1])]
        for a in values {
            for b in values {
                let keyA = Self.key(a), keyB = Self.key(b)
                let order = compareBytes(keyA, keyB)
                if a == b {
                    #expect(order == 0)
                } else if order == 0 {
                    #expect(keyA.withUnsafeBytes { OrderedKeyEncoding.isTruncated($0) }, "\(a) and \(b) encode equally")
                } else {
                    #expect(Self.sign(order) == Self.sign(SQLValue.compare(a, b)), "\(a) vs \(b)")
                }
            }
        }
        #expect(Self.key(.text(long)).withUnsafeBytes { !OrderedKeyEncoding.isTruncated($0) })
        #expect(Self.key(.text(long + "\u{0}")).withUnsafeBytes { OrderedKeyEncoding.isTruncated($0) })
    }

    /// Numbers read back from their keys exactly; non-numbers and -2^63 (shared by an integer
    /// and a real) do not.
    @Test func numbersReadBackFromTheirKeys() {
        for value in Self.tricky {
            let key = Self.key(value)
            let decoded = key.withUnsafeBytes { OrderedKeyEncoding.decodeNumber($0) }
            switch value {
            case .integer(.min), .real(-0x1p63):
                #expect(decoded == nil)
            case let .integer(i):
                #expect(decoded == .integer(i), "\(value)")
            case let .real(r):
                if r == r.rounded(.towardZero) && abs(r) < 0x1p63 {
                    #expect(decoded == .integer(Int64(r)), "\(value)")
                } else {
                    #expect(decoded == .real(r), "\(value)")
                }
            default:
                #expect(decoded == nil, "\(value)")
            }
            // In a column, the key gives the stored value.
            for type in [YapDatabaseSecondaryIndexType.integer, .real, .numeric] {
                let stored = SecondaryIndexRow.columnValue(value, type: type)
                let read = Self.key(stored).withUnsafeBytes { SecondaryIndexRow.number(fromKey: $0, type: type) }
                if let read { #expect(read == stored, "\(value) in a \(type) column") }
            }
        }
    }

    /// A key is the value's encoding then the row id: equal values order by row id, and the
    /// row id reads back.
    @Test func rowidSuffixOrdersTiesAndReadsBack() {
        var a = Self.key(.integer(7)), b = Self.key(.real(7))
        OrderedKeyEncoding.appendRowid(9, to: &a)
        OrderedKeyEncoding.appendRowid(300, to: &b)
        #expect(compareBytes(a, b) < 0)
        #expect(b.withUnsafeBytes { OrderedKeyEncoding.rowid(ofKey: $0) } == 300)
        #expect(compareBytes(OrderedKeyEncoding.afterPrefix(Self.key(.integer(7))), b) > 0)
    }

    /// An entry's key classified in one call (`entryValue(ofKey:)`, what `MIN`/`MAX` at a
    /// tree's edge read): NULL, a number with its row id, a whole text or blob (and -2^63) sent
    /// to the row, a cut text marked; a key too short for a row id is not trapped on.
    @Test func entryKeysSayWhatTheirValueIs() {
        let long: [SQLValue] = [.text(String(repeating: "x", count: 40)), .blob([UInt8](repeating: 7, count: 40))]
        for (i, value) in (Self.tricky + long).enumerated() {
            var key = Self.key(value)
            let rowid = UInt64(1_000 + i)
            OrderedKeyEncoding.appendRowid(rowid, to: &key)
            let found = key.withUnsafeBytes { OrderedKeyEncoding.entryValue(ofKey: $0) }
            let number = Self.key(value).withUnsafeBytes { OrderedKeyEncoding.decodeNumber($0) }
            switch (value, found) {
            case (.null, .null): break
            case let (.integer, .number(decoded, row)), let (.real, .number(decoded, row)):
                #expect(decoded == number && row == rowid, "\(value)")
            case let (.integer(.min), .stored(row)), let (.real(-0x1p63), .stored(row)):
                #expect(row == rowid)
            case let (.text(text), .stored(row)):
                #expect(text.utf8.count <= Self.limit && row == rowid, "\(value)")
            case let (.blob(blob), .stored(row)):
                #expect(blob.count <= Self.limit && row == rowid, "\(value)")
            case let (.text(text), .truncated):
                #expect(text.utf8.count > Self.limit, "\(value)")
            case let (.blob(blob), .truncated):
                #expect(blob.count > Self.limit, "\(value)")
            default:
                Issue.record("\(value) classified as \(found)")
            }
        }
        for short: [UInt8] in [[], [0x12], [0x12, 1, 2], [0x20, 0x61]] {
            let found = short.withUnsafeBytes { OrderedKeyEncoding.entryValue(ofKey: $0) }
            guard case .stored(rowid: .max) = found else {
                Issue.record("\(short) classified as \(found), not as a row no one has")
                continue
            }
        }
    }

    /// Stored row values survive the round trip, and damaged bytes are refused, not trapped on.
    @Test func rowValuesRoundTrip() {
        let values = Self.tricky
        let bytes = SecondaryIndexRow.encode(values)
        #expect(SecondaryIndexRow.decode(bytes, columnCount: values.count) == values)
        #expect(SecondaryIndexRow.decode(Array(bytes.dropLast()), columnCount: values.count) == nil)
        #expect(SecondaryIndexRow.decode(bytes + [0], columnCount: values.count) == nil)
        #expect(SecondaryIndexRow.decode([9], columnCount: 1) == nil)
    }

    /// A row whose values do not fit one tree entry is stored in chunks, read back whole, and
    /// removed without a trace; a long text's key is cut to the limit.
    @Test func longRowsSpanChunksAndLeaveNothingBehind() throws {
        var state = SecondaryIndexState(versionTag: "t", signature: "s", columnCount: 2)
        let long = SQLValue.text(String(repeating: "x", count: 3 * state.chunkSize))
        try state.setRow(7, rowKey: RowKey.encode(collection: "c", key: "7"), object: Self.somewhere, values: [long, .integer(1)])
        try state.setRow(8, rowKey: RowKey.encode(collection: "c", key: "8"), object: Self.somewhere, values: [.text("short"), .null])
        #expect(state.rows.count == 4 + 1, "four chunks for the long row, one for the short one")
        #expect(try state.values(ofRow: 7) == [long, .integer(1)])
        #expect(try state.values(ofRow: 8) == [.text("short"), .null])
        #expect(state.rowCount == 2)
        #expect(try state.removeRow(7))
        #expect(try state.values(ofRow: 7) == nil)
        #expect(state.rows.count == 1 && state.columns.allSatisfy { $0.count == 1 })
        #expect(try !state.removeRow(7))
        try state.validatePages()
    }

    /// An object location for rows whose object is not read.
    static let somewhere = ValueLocation(segment: 1, offset: 64, length: 40)

    /// The parts of a column entry's value held in `bytes`.
    static func parts(_ bytes: [UInt8]) throws(EngineError) -> (object: ValueLocation, rowKey: [UInt8])? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: bytes)
        return try SecondaryIndexState.entryParts(UnsafeRawBufferPointer(buffer)).map { ($0.object, Array($0.rowKey)) }
    }

    /// Column entries carry the object's location and the row's key when they fit one entry
    /// with the key, and nothing when they do not (the row id is looked up then); a moved
    /// object rewrites the location in every column.
    @Test func columnEntriesCarryTheObjectLocationAndRowKeyWhenTheyFit() throws {
        var state = SecondaryIndexState(versionTag: "t", signature: "s", columnCount: 2)
        let limit = state.rows.maximumEntrySize
        let short = RowKey.encode(collection: "c", key: "short")
        let long = RowKey.encode(collection: "c", key: String(repeating: "k", count: limit))
        // Fits with the key alone, but not with the location as well.
        let keyCount = state.columnKey(.integer(7), rowid: 3).count
        let edge = RowKey.encode(collection: "c", key: String(repeating: "e", count: limit - keyCount - 3 - SecondaryIndexState.locationSize + 1))
        #expect(keyCount + edge.count <= limit && keyCount + edge.count + SecondaryIndexState.locationSize > limit)
        let first = ValueLocation(segment: 3, offset: 0x0102_0304, length: 77)
        let moved = ValueLocation(segment: 0xFFFF_FFFF, offset: 9, length: 0x8000_0001)
        try state.setRow(1, rowKey: short, object: first, values: [.integer(5), .text("a")])
        try state.setRow(2, rowKey: long, object: first, values: [.integer(6), .text("b")])
        try state.setRow(3, rowKey: edge, object: first, values: [.integer(7), .real(7.0)])
        func carried(_ column: Int) throws -> [UInt64: [UInt8]] {
            var result: [UInt64: [UInt8]] = [:]
            try state.columns[column].forEach { key, value in
                result[OrderedKeyEncoding.rowid(ofKey: key)] = Array(value)
                return true
            }
            return result
        }
        func parts(_ bytes: [UInt8]?) throws -> (object: ValueLocation, rowKey: [UInt8])? {
            guard let bytes else { return nil }
            return try Self.parts(bytes)
        }
        for column in 0..<2 {
            let entries = try carried(column)
            #expect(try parts(entries[1])?.object == first && parts(entries[1])?.rowKey == short)
            #expect(entries[2] == [] && entries[3] == [])
        }
        #expect(try state.moveObject(ofRow: 1, rowKey: short, to: moved))
        #expect(try !state.moveObject(ofRow: 9, rowKey: short, to: moved), "row 9 is not indexed")
        for column in 0..<2 {
            let entries = try carried(column)
            #expect(try parts(entries[1])?.object == moved && parts(entries[1])?.rowKey == short)
            #expect(entries[2] == [] && entries[3] == [])
        }
        #expect(try state.values(ofRow: 1) == [.integer(5), .text("a")])
        try state.validatePages()
    }

    /// A column entry's value too short for a location and a row key is damage, not a trap.
    @Test func shortColumnEntryValuesAreDamage() throws {
        for count in 1..<(SecondaryIndexState.locationSize + 2) {
            let bytes = [UInt8](repeating: 1, count: count)
            #expect(throws: EngineError.self) { _ = try Self.parts(bytes) }
        }
        #expect(try Self.parts([]) == nil)
        let value = SecondaryIndexState.entryValue(object: Self.somewhere, rowKey: [0, 1], keyCount: 10, limit: 100)
        #expect(value.count == SecondaryIndexState.locationSize + 2)
        let parts = try Self.parts(value)
        #expect(parts?.object == Self.somewhere && parts?.rowKey == [0, 1])
    }

    /// Numbers as a handler's `NSMutableDictionary` hands them back (`NSNumber`) keep their
    /// kind: reals stay reals, unsigned values past Int64 become reals, Bool is 0 or 1.
    @Test func numbersFromTheHandlersDictionaryKeepTheirKind() {
        let dict = NSMutableDictionary()
        dict["i"] = Int64(-5)
        dict["d"] = 2.5
        dict["u"] = UInt64.max
        dict["b"] = true
        func value(_ key: String, _ type: YapDatabaseSecondaryIndexType) -> SQLValue {
            SecondaryIndexRow.columnValue(dict[key] as Any, type: type)
        }
        #expect(value("i", .numeric) == .integer(-5))
        #expect(value("d", .numeric) == .real(2.5))
        #expect(value("d", .integer) == .real(2.5), "INTEGER affinity keeps a real that is not whole")
        #expect(value("u", .numeric) == .real(Double(UInt64.max)))
        #expect(value("b", .integer) == .integer(1))
        #expect(SecondaryIndexRow.columnValue(NSNumber(value: Int8(-3)), type: .integer) == .integer(-3))
        #expect(SecondaryIndexRow.columnValue(NSNumber(value: Float(1.5)), type: .real) == .real(1.5))
    }

    /// The handler's dictionary keeps values as the handler set them, and each becomes the
    /// column value a plain `NSMutableDictionary` (which bridges them) led to.
    @Test func theHandlersDictionaryGivesTheValuesAPlainDictionaryGave() {
        let values: [Any] = [Int64(-5), 2.5, UInt64.max, true, false, Int8(-3), UInt32(9), Float(1.5), 7 as NSNumber,
                             "text", "text" as NSString, Data([1, 2]), Date(timeIntervalSinceReferenceDate: 12.5),
                             NSNull(), Decimal(string: "1.25")!, Int.min]
        let types: [YapDatabaseSecondaryIndexType] = [.integer, .real, .numeric, .text, .blob]
        for value in values {
            let plain = NSMutableDictionary()
            plain["c"] = value
            let ours = SecondaryIndexHandlerDictionary()
            ours["c"] = value
            for type in types {
                let expected = SecondaryIndexRow.columnValue(plain["c"] as Any, type: type)
                #expect(SecondaryIndexRow.columnValue(ours.value(named: "c") as Any, type: type) == expected, "\(value) in a \(type) column")
            }
        }
    }

    /// What a handler may do with its dictionary works as on an `NSMutableDictionary`: either
    /// spelling of a text key names one entry; other keys are kept apart (not columns).
    @Test func theHandlersDictionaryWorksAsAnNSMutableDictionary() {
        let dict = SecondaryIndexHandlerDictionary()
        dict["a"] = 1
        dict.setObject("x", forKey: "b" as NSString)
        dict[5 as NSNumber] = "five"
        #expect(dict.count == 3)
        #expect(dict["b"] as? String == "x")
        #expect(dict.object(forKey: "a" as NSString) as? Int == 1)
        #expect(dict.value(named: "b") as? String == "x")
        #expect(dict[5 as NSNumber] as? String == "five")
        #expect(dict.allKeys.compactMap { $0 as? String }.sorted() == ["a", "b"])
        dict["a"] = 2
        #expect(dict["a"] as? Int == 2 && dict.count == 3)
        dict["a"] = nil
        dict.removeObject(forKey: 5 as NSNumber)
        #expect(dict.count == 1 && dict["a"] == nil && dict[5 as NSNumber] == nil)
        dict["c"] = 3.5
        var seen: [String: Any] = [:]
        for (key, value) in dict { seen[key as! String] = value }
        #expect(seen.count == 2 && seen["b"] as? String == "x" && seen["c"] as? Double == 3.5)
        #expect(Set(dict.allKeys.map { $0 as! String }) == ["b", "c"])
        let copy = dict.copy() as? NSDictionary
        #expect(copy?.count == 2 && copy?["b"] as? String == "x")
        let mutable = dict.mutableCopy() as? NSMutableDictionary
        mutable?["d"] = 4
        #expect(mutable?.count == 3 && dict.count == 2)
        dict.removeAllObjects()
        #expect(dict.count == 0 && dict.allKeys.isEmpty)
    }

    /// Many text keys (past the short list the dictionary walks) are all found, after
    /// replacements and removals too.
    @Test func theHandlersDictionaryFindsManyKeys() {
        let dict = SecondaryIndexHandlerDictionary()
        for i in 0..<200 { dict["k\(i)"] = i }
        for i in stride(from: 0, to: 200, by: 3) { dict["k\(i)"] = -i }
        for i in stride(from: 1, to: 200, by: 7) { dict.removeObject(forKey: "k\(i)") }
        dict["late"] = 1_000
        var expected: [String: Int] = ["late": 1_000]
        for i in 0..<200 where i % 7 != 1 { expected["k\(i)"] = i % 3 == 0 ? -i : i }
        #expect(dict.count == expected.count)
        for (key, value) in expected {
            #expect(dict.value(named: key) as? Int == value, "\(key)")
            #expect(dict[key] as? Int == value, "\(key)")
        }
        #expect(dict["k1"] == nil && dict.value(named: "k8") == nil)
    }

    /// The handler's values become column values with the column's affinity.
    @Test func handlerValuesTakeTheColumnAffinity() {
        #expect(SecondaryIndexRow.columnValue("12", type: .integer) == .integer(12))
        #expect(SecondaryIndexRow.columnValue(3.0, type: .integer) == .integer(3))
        #expect(SecondaryIndexRow.columnValue(3, type: .real) == .real(3))
        #expect(SecondaryIndexRow.columnValue(12, type: .text) == .text("12"))
        #expect(SecondaryIndexRow.columnValue(true, type: .integer) == .integer(1))
        #expect(SecondaryIndexRow.columnValue(Double.nan, type: .real) == .null)
        #expect(SecondaryIndexRow.columnValue(NSNull(), type: .text) == .null)
        #expect(SecondaryIndexRow.columnValue(Data([1, 2]), type: .blob) == .blob([1, 2]))
        #expect(SecondaryIndexRow.columnValue("x", type: .numeric) == .text("x"))
    }
}
