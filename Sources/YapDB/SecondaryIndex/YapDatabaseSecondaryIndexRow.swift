import Foundation
import YapDBQuery
import YapDBEngine

/// The adapter between the handler's values, the query module's `SQLValue` and the bytes the
/// index stores: a handler value becomes a column value (after the column's affinity); a row's
/// column values are stored as bytes; a value becomes a column tree key.
enum SecondaryIndexRow {
    /// The query module's column type of an index column type (nil: BLOB, no affinity).
    static func columnType(_ type: YapDatabaseSecondaryIndexType) -> ColumnType? {
        switch type {
        case .integer: .integer
        case .real: .real
        case .numeric: .numeric
        case .text: .text
        case .blob: nil
        }
    }

    /// `raw` (what the handler put in the dictionary) as a value of a column of type `type`.
    static func columnValue(_ raw: Any, type: YapDatabaseSecondaryIndexType) -> SQLValue {
        let value = sqlValue(raw)
        guard let columnType = columnType(type) else { return value }
        return value.applying(columnType)
    }

    /// `raw` as a value, converted as query parameters are (`YapDatabaseQuery.sqlValue(of:)`:
    /// numbers, `Bool` as 0 or 1, text, bytes, `Date` as seconds since the reference date);
    /// `nil`, `NSNull` and any other type as NULL.
    static func sqlValue(_ raw: Any?) -> SQLValue {
        guard let raw else { return .null }
        // By exact type: a failing `as? SQLValue` on a bridged number searches conformances.
        if ObjectIdentifier(type(of: raw)) == ObjectIdentifier(SQLValue.self) { return raw as! SQLValue }
        return YapDatabaseQuery.sqlValue(of: raw) ?? .null
    }

    /// The stored value a column key holds, when the key alone tells it: a number in an
    /// INTEGER or NUMERIC column (whole numbers inside the 64-bit range are stored as integers,
    /// the rest as reals) or a REAL column (every number a real). Nil otherwise: other types,
    /// or a number the key cannot tell the class of.
    static func number(fromKey key: UnsafeRawBufferPointer, type: YapDatabaseSecondaryIndexType) -> SQLValue? {
        OrderedKeyEncoding.decodeNumber(key).flatMap { value(of: $0, type: type) }
    }

    /// A number decoded from a key, as a column of `type` holds it (a REAL column holds
    /// integers as reals); nil for a column whose key cannot tell the number's class (BLOB, no
    /// affinity: 3 and 3.0 share a key) or that holds no numbers (TEXT).
    static func value(of number: OrderedKeyEncoding.DecodedNumber, type: YapDatabaseSecondaryIndexType) -> SQLValue? {
        guard type == .integer || type == .numeric || type == .real else { return nil }
        switch (number, type) {
        case let (.integer(value), .real): return .real(Double(value))
        case let (.integer(value), _): return .integer(value)
        case let (.real(value), _): return .real(value)
        }
    }

    // MARK: Stored row values

    enum Kind {
        static let null: UInt8 = 0, integer: UInt8 = 1, real: UInt8 = 2, text: UInt8 = 3, blob: UInt8 = 4
    }

    /// A row's values as bytes: per value a kind byte, then 8 bytes (little-endian integer or
    /// real bit pattern) or a varint length and the bytes (text, blob).
    static func encode(_ values: [SQLValue]) -> [UInt8] {
        var bytes: [UInt8] = []
        for value in values {
            switch value {
            case .null: bytes.append(Kind.null)
            case .integer(let v): bytes.append(Kind.integer); bytes.appendLE(UInt64(bitPattern: v))
            case .real(let v): bytes.append(Kind.real); bytes.appendLE(v.bitPattern)
            case .text(let v): bytes.append(Kind.text); bytes.appendString(v)
            case .blob(let v): bytes.append(Kind.blob); bytes.appendVarint(UInt64(v.count)); bytes.append(contentsOf: v)
            }
        }
        return bytes
    }

    /// Decodes `encode`'s bytes; nil when they are not `columnCount` well-formed values.
    static func decode(_ bytes: [UInt8], columnCount: Int, reservingExtra extra: Int = 0) -> [SQLValue]? {
        bytes.withUnsafeBytes { raw -> [SQLValue]? in
            var reader = ByteReader(raw)
            var values: [SQLValue] = []
            values.reserveCapacity(columnCount + extra)
            do throws(ByteReader.Overrun) {
                for _ in 0..<columnCount {
                    switch try reader.readU8() {
                    case Kind.null: values.append(.null)
                    case Kind.integer: values.append(.integer(Int64(bitPattern: try reader.readU64())))
                    case Kind.real:
                        let value = Double(bitPattern: try reader.readU64())
                        guard !value.isNaN else { return nil }
                        values.append(.real(value))
                    case Kind.text:
                        let length = try reader.readLength(max: reader.remaining)
                        guard let text = String(validating: try reader.readBytes(length).bindMemory(to: UInt8.self), as: UTF8.self) else { return nil }
                        values.append(.text(text))
                    case Kind.blob:
                        let length = try reader.readLength(max: reader.remaining)
                        values.append(.blob(Array(try reader.readBytes(length))))
                    default: return nil
                    }
                }
            } catch {
                return nil
            }
            return reader.isAtEnd ? values : nil
        }
    }

    // MARK: Column keys

    /// The order-preserving encoding of `value` (`OrderedKeyEncoding`), texts and blobs cut
    /// to `limit` bytes.
    static func orderedKey(_ value: SQLValue, limit: Int) -> [UInt8] {
        var key: [UInt8] = []
        // Room for the encoding and the row id callers append, so the key grows once.
        let room = switch value {
        case .text(let v): min(v.utf8.count, limit) &* 2
        case .blob(let v): min(v.count, limit) &* 2
        default: 11
        }
        key.reserveCapacity(room &+ 3 &+ OrderedKeyEncoding.rowidSize)
        switch value {
        case .null: OrderedKeyEncoding.appendNull(to: &key)
        case .integer(let v): OrderedKeyEncoding.appendInteger(v, to: &key)
        case .real(let v):
            if v.isNaN { OrderedKeyEncoding.appendNull(to: &key) } else { OrderedKeyEncoding.appendReal(v, to: &key) }
        case .text(let v): OrderedKeyEncoding.appendText(v.utf8, limit: limit, to: &key)
        case .blob(let v): OrderedKeyEncoding.appendBlob(v, limit: limit, to: &key)
        }
        return key
    }
}
