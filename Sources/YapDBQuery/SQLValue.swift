/// A value as SQLite holds it: one of its five storage classes.
///
/// Equality and hashing are structural and byte-exact: `.integer(3)` and `.real(3.0)` are
/// different values here (SQLite's comparison, ``SQLValue/compare(_:_:)``, finds them equal), and
/// two texts are equal only when their UTF-8 bytes are (SQLite's BINARY collation; Swift's
/// `String ==` would also equate canonically equivalent texts). A `.real` never holds NaN:
/// ``SQLValue/real(checking:)`` turns NaN into `.null`, as SQLite does when it binds one.
///
/// Threading: a plain value; safe to pass between threads.
package enum SQLValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An IEEE double (never NaN when built through ``SQLValue/real(checking:)``).
    case real(Double)
    /// A text, compared by its UTF-8 bytes.
    case text(String)
    /// Bytes.
    case blob([UInt8])

    /// A real, or `.null` for NaN (SQLite stores NaN as NULL).
    package static func real(checking value: Double) -> SQLValue {
        value.isNaN ? .null : .real(value)
    }

    /// Whether this is `.null`.
    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    package static func == (lhs: SQLValue, rhs: SQLValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.integer(a), .integer(b)): return a == b
        case let (.real(a), .real(b)): return a == b
        case let (.text(a), .text(b)): return a.utf8.elementsEqual(b.utf8)
        case let (.blob(a), .blob(b)): return a == b
        default: return false
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case let .integer(value): hasher.combine(1 as UInt8); hasher.combine(value)
        case let .real(value): hasher.combine(2 as UInt8); hasher.combine(value)
        case let .text(value):
            hasher.combine(3 as UInt8)
            hasher.combine(value.utf8.count)
            for byte in value.utf8 { hasher.combine(byte) }
        case let .blob(value): hasher.combine(4 as UInt8); hasher.combine(value)
        }
    }
}

/// The declared type of an indexed column: YapDatabase's `YapDatabaseSecondaryIndexType` cases,
/// each giving its column SQLite's affinity of the same name.
package enum ColumnType: Sendable, Hashable, CaseIterable {
    /// INTEGER affinity: numbers stay numbers, a real without a fraction becomes an integer,
    /// text that reads as a number becomes that number.
    case integer
    /// REAL affinity: as NUMERIC, then every integer becomes a real.
    case real
    /// NUMERIC affinity (the same conversions as INTEGER for stored values).
    case numeric
    /// TEXT affinity: numbers become their text; blobs stay blobs.
    case text
}

extension SQLValue: CustomStringConvertible {
    /// The value as an SQL literal (`NULL`, `12`, `1.5`, `'it''s'`, `X'0A'`): the text the
    /// parser reads back to this same value.
    package var description: String { sqlLiteral }

    /// The value written as an SQL literal that parses back to an equal value. A real always
    /// carries a `.` or an exponent so it reads back as a real; infinities are written as
    /// `9e999` / `-9e999`, which SQLite and the parser read as ±infinity.
    package var sqlLiteral: String {
        switch self {
        case .null: return "NULL"
        case let .integer(value): return String(value)
        case let .real(value):
            if value.isInfinite { return value < 0 ? "-9e999" : "9e999" }
            let text = "\(value)"
            return text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? text : text + ".0"
        case let .text(value): return "'" + value.replacingAll("'", with: "''") + "'"
        case let .blob(bytes):
            let digits = Array("0123456789ABCDEF")
            var text = "X'"
            for byte in bytes {
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 0xF)])
            }
            return text + "'"
        }
    }
}

extension String {
    /// This text with every `target` character replaced by `replacement` (Foundation-free).
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        result.reserveCapacity(utf8.count)
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
