import Foundation
import YapDBQuery

// The conversion of YapDatabase-style `[Any]` parameters into SQL values, and back for
// `queryParameters`.

extension YapDatabaseQuery {
    /// `parameters` as SQL values; the first unsupported one is an error naming its index.
    static func convert(_ parameters: [Any]) -> Result<[QueryParameter], QueryError> {
        // No parameters (most queries): no buffer to reserve.
        if parameters.isEmpty { return .success([]) }
        var converted: [QueryParameter] = []
        converted.reserveCapacity(parameters.count)
        for (index, parameter) in parameters.enumerated() {
            // The common exact types first: the array cast below searches conformances.
            if let value = exactValue(of: parameter) {
                converted.append(.value(value))
            } else if let elements = parameter as? [Any] {
                var values: [SQLValue] = []
                for element in elements {
                    guard let value = sqlValue(of: element) else {
                        return .failure(unsupported(element, index: index))
                    }
                    values.append(value)
                }
                converted.append(.list(values))
            } else if let value = sqlValue(of: parameter) {
                converted.append(.value(value))
            } else {
                return .failure(unsupported(parameter, index: index))
            }
        }
        return .success(converted)
    }

    private static func unsupported(_ value: Any, index: Int) -> QueryError {
        QueryError(offset: 0, reason: .unsupportedParameter(index: index, typeName: String(describing: type(of: value))))
    }

    /// The common exact types by their metadata: one comparison each, no cast search; nil for
    /// any other type (`sqlValue(of:)` then tries the casts).
    @inline(__always)
    static func exactValue(of parameter: Any) -> SQLValue? {
        exactValue(opened: parameter)
    }

    /// `exactValue(of:)` with the value's type opened: once the type is known to be one of
    /// these, the value is reinterpreted as it (no dynamic cast, which searches at run time).
    private static func exactValue<T>(opened value: T) -> SQLValue? {
        if T.self == Int.self { return .integer(Int64(unsafeBitCast(value, to: Int.self))) }
        if T.self == Int64.self { return .integer(unsafeBitCast(value, to: Int64.self)) }
        if T.self == String.self { return .text(unsafeBitCast(value, to: String.self)) }
        if T.self == Double.self { return .real(checking: unsafeBitCast(value, to: Double.self)) }
        // What a handler's `NSMutableDictionary` hands back for a Swift number it was given.
        if T.self == NSNumber.self { return number(unsafeBitCast(value, to: NSNumber.self)) }
        return nil
    }

    /// One parameter as an SQL value, or nil for a type a query cannot bind. Swift's own types
    /// are tried before `NSNumber`, which on Apple platforms every Swift number also casts to.
    /// An optional is unwrapped by the casts themselves (a cast of `.some(x)` sees `x`); only
    /// a value no case takes is inspected for `.none` (NULL), the slow path.
    static func sqlValue(of parameter: Any) -> SQLValue? {
        if let value = exactValue(of: parameter) { return value }
        switch parameter {
        case is NSNull: return .null
        case let value as Bool: return .integer(value ? 1 : 0)
        case let value as Int: return .integer(Int64(value))
        case let value as Int64: return .integer(value)
        case let value as Int32: return .integer(Int64(value))
        case let value as Int16: return .integer(Int64(value))
        case let value as Int8: return .integer(Int64(value))
        case let value as UInt: return unsigned(UInt64(value))
        case let value as UInt64: return unsigned(value)
        case let value as UInt32: return .integer(Int64(value))
        case let value as UInt16: return .integer(Int64(value))
        case let value as UInt8: return .integer(Int64(value))
        case let value as Double: return .real(checking: value)
        case let value as Float: return .real(checking: Double(value))
        case let value as Decimal: return .real(checking: NSDecimalNumber(decimal: value).doubleValue)
        case let value as String: return .text(value)
        case let value as Substring: return .text(String(value))
        case let value as Data: return .blob([UInt8](value))
        case let value as Date: return .real(checking: value.timeIntervalSinceReferenceDate)
        case let value as NSNumber: return number(value)
        case let value as NSString: return .text(value.description)
        case let value as NSData: return .blob([UInt8](Data(referencing: value)))
        case let value as NSDate: return .real(checking: value.timeIntervalSinceReferenceDate)
        default:
            guard let unwrapped = unwrapOptional(parameter) else { return nil }
            guard let value = unwrapped else { return .null }
            return sqlValue(of: value)
        }
    }

    /// An unsigned integer: an integer when it fits in 64 signed bits, else a real.
    private static func unsigned(_ value: UInt64) -> SQLValue {
        value <= UInt64(Int64.max) ? .integer(Int64(value)) : .real(Double(value))
    }

    /// An `NSNumber` by its stored type: floating point as a real, anything else as an integer.
    private static func number(_ number: NSNumber) -> SQLValue {
        // The type encoding's first character (no string made).
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "f"), UInt8(ascii: "d"): return .real(checking: number.doubleValue)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"): return unsigned(number.uint64Value)
        default: return .integer(number.int64Value)
        }
    }

    /// `.some(wrapped)` when `value` is an `Optional` (`wrapped` nil for `.none`), nil otherwise.
    private static func unwrapOptional(_ value: Any) -> Any??  {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return nil }
        guard let child = mirror.children.first else { return .some(nil) }
        return .some(child.value)
    }

    /// An SQL value as the Foundation object `queryParameters` shows for it.
    static func object(for value: SQLValue) -> Any {
        switch value {
        case .null: return NSNull()
        case let .integer(integer): return integer
        case let .real(real): return real
        case let .text(text): return text
        case let .blob(bytes): return Data(bytes)
        }
    }
}
