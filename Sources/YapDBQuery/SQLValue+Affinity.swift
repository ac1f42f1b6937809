#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// SQLite's column affinity (https://sqlite.org/datatype3.html §3): the conversions a value goes
// through when it is stored in a column of a given type, and the conversions an operand goes
// through before a comparison (§4.2, where the same rules apply to one side).

extension SQLValue {
    /// This value as SQLite stores it in a column of `type`.
    ///
    /// - INTEGER and NUMERIC: a text that reads as a number (surrounding whitespace allowed, no
    ///   hex) becomes that number, an integer when it has no fraction and fits in 64 bits
    ///   (`'3.0e+5'` becomes `300000`); a real without a fraction, strictly inside the 64-bit
    ///   range, becomes an integer (`3.0` becomes `3`). Other texts, blobs and NULL stay.
    /// - REAL: as NUMERIC, then an integer becomes a real.
    /// - TEXT: an integer becomes its decimal text, a real its text with 15 significant digits
    ///   (SQLite's rendering: `1.0e+20`, `0.333333333333333`); blobs and NULL stay.
    package func applying(_ type: ColumnType) -> SQLValue {
        switch type {
        case .integer, .numeric:
            switch self {
            case let .real(value): return SQLValue.integralIfExact(value)
            case let .text(text):
                guard let number = SQLValue.number(fromText: text) else { return self }
                if case let .real(value) = number { return SQLValue.integralIfExact(value) }
                return number
            default: return self
            }
        case .real:
            switch self {
            case let .integer(value): return .real(Double(value))
            case let .text(text):
                switch SQLValue.number(fromText: text) {
                case let .integer(value)?: return .real(Double(value))
                case let number?: return number
                case nil: return self
                }
            default: return self
            }
        case .text:
            switch self {
            case let .integer(value): return .text(String(value))
            case let .real(value): return .text(SQLValue.text(fromReal: value))
            default: return self
            }
        }
    }

    /// A real converted to an integer when it has no fraction and lies strictly inside the
    /// 64-bit range (SQLite excludes both extremes), else the real itself.
    static func integralIfExact(_ value: Double) -> SQLValue {
        guard value == value.rounded(.towardZero),
              value > -9.223372036854775808e18, value < 9.223372036854775808e18 else {
            return .real(value)
        }
        let integer = Int64(value)
        if integer == .min || integer == .max { return .real(value) }
        return .integer(integer)
    }

    /// The number a text spells, as SQLite reads it for numeric affinity: optional whitespace,
    /// an optional sign, digits with an optional decimal point (at least one digit), an optional
    /// exponent with at least one digit, optional whitespace, nothing else. An integer spelling
    /// that fits in 64 bits gives `.integer`; anything else that reads gives `.real`. Returns
    /// nil for a text that is not a number (`'12abc'`, `'0x10'`, `''`, `'1e'`).
    package static func number(fromText text: String) -> SQLValue? {
        var bytes = Array(text.utf8)[...]
        func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
        }
        while let first = bytes.first, isSpace(first) { bytes.removeFirst() }
        while let last = bytes.last, isSpace(last) { bytes.removeLast() }
        var negative = false
        if let first = bytes.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
            negative = first == UInt8(ascii: "-")
            bytes.removeFirst()
        }
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        var integerDigits = ""
        while let first = bytes.first, isDigit(first) { integerDigits.append(Character(UnicodeScalar(first))); bytes.removeFirst() }
        var fractionDigits = ""
        var isReal = false
        if bytes.first == UInt8(ascii: ".") {
            isReal = true
            bytes.removeFirst()
            while let first = bytes.first, isDigit(first) { fractionDigits.append(Character(UnicodeScalar(first))); bytes.removeFirst() }
        }
        guard !integerDigits.isEmpty || !fractionDigits.isEmpty else { return nil }
        var exponent = ""
        if let first = bytes.first, first == UInt8(ascii: "e") || first == UInt8(ascii: "E") {
            isReal = true
            bytes.removeFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                if sign == UInt8(ascii: "-") { exponent = "-" }
                bytes.removeFirst()
            }
            var digits = ""
            while let first = bytes.first, isDigit(first) { digits.append(Character(UnicodeScalar(first))); bytes.removeFirst() }
            guard !digits.isEmpty else { return nil }
            exponent += digits
        }
        guard bytes.isEmpty else { return nil }
        let sign = negative ? "-" : ""
        if !isReal, let integer = Int64(sign + integerDigits) {
            return .integer(integer)
        }
        let spelled = sign + (integerDigits.isEmpty ? "0" : integerDigits) + "."
            + (fractionDigits.isEmpty ? "0" : fractionDigits) + "e" + (exponent.isEmpty ? "0" : exponent)
        guard let value = Double(spelled) else { return nil }
        return .real(value)
    }

    /// A real as SQLite writes it as text: 15 significant digits, trailing zeros dropped but a
    /// `.0` kept (`3.0`, `1.0e+20`, `0.333333333333333`), `Inf` / `-Inf`, and zero as `0.0`.
    package static func text(fromReal value: Double) -> String {
        if value.isInfinite { return value < 0 ? "-Inf" : "Inf" }
        if value == 0 { return "0.0" }
        var buffer = [CChar](repeating: 0, count: 64)
        _ = buffer.withUnsafeMutableBufferPointer { pointer in
            withVaList([value]) { vsnprintf(pointer.baseAddress, 64, "%.15g", $0) }
        }
        let printed = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if let exponentIndex = printed.firstIndex(where: { $0 == "e" }) {
            let mantissa = printed[..<exponentIndex]
            return mantissa.contains(".") ? printed : mantissa + ".0" + printed[exponentIndex...]
        }
        return printed.contains(".") ? printed : printed + ".0"
    }

    /// This value as text, the way SQLite converts an operand of `LIKE`: numbers as with TEXT
    /// affinity, a blob's bytes read as UTF-8, NULL as nil.
    package var textForPattern: String? {
        switch self {
        case .null: return nil
        case let .integer(value): return String(value)
        case let .real(value): return SQLValue.text(fromReal: value)
        case let .text(value): return value
        case let .blob(bytes): return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// This value as a number, the way SQLite reads a value for a truth test or an arithmetic
    /// aggregate: numbers as they are, a text by its longest numeric prefix (0 when there is
    /// none), a blob as its bytes' text, NULL as nil.
    package var numericValue: SQLValue? {
        switch self {
        case .null: return nil
        case .integer, .real: return self
        case let .text(text): return SQLValue.numericPrefix(of: text)
        case let .blob(bytes): return SQLValue.numericPrefix(of: String(decoding: bytes, as: UTF8.self))
        }
    }

    /// The number spelled by the longest prefix of `text` that reads as one, as SQLite reads a
    /// text for a truth test or a sum: `'12abc'` gives 12, `' 1.5e3x'` 1500.0, `'abc'` 0 (a
    /// point or an exponent makes it a real; SQLite's CAST would turn an integral real into an
    /// integer, which no caller here can tell apart). One forward scan of the prefix, so a long
    /// text costs no more than its numeric start.
    static func numericPrefix(of text: String) -> SQLValue {
        var end = text.utf8.startIndex
        let utf8 = text.utf8
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        func at(_ index: String.UTF8View.Index) -> UInt8? { index < utf8.endIndex ? utf8[index] : nil }
        while let byte = at(end), byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) { end = utf8.index(after: end) }
        if let byte = at(end), byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") { end = utf8.index(after: end) }
        var digits = 0
        while let byte = at(end), isDigit(byte) { end = utf8.index(after: end); digits += 1 }
        if at(end) == UInt8(ascii: ".") {
            var afterPoint = utf8.index(after: end)
            var fraction = 0
            while let byte = at(afterPoint), isDigit(byte) { afterPoint = utf8.index(after: afterPoint); fraction += 1 }
            if digits + fraction > 0 {
                end = afterPoint
                digits += fraction
            }
        }
        guard digits > 0 else { return .integer(0) }
        if let byte = at(end), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            var exponent = utf8.index(after: end)
            if let sign = at(exponent), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { exponent = utf8.index(after: exponent) }
            var exponentDigits = 0
            while let byte = at(exponent), isDigit(byte) { exponent = utf8.index(after: exponent); exponentDigits += 1 }
            if exponentDigits > 0 { end = exponent }
        }
        return number(fromText: String(text[..<end])) ?? .integer(0)
    }
}
