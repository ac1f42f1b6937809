/// A cursor that turns fuzzer bytes into choices. Reading past the end yields zeros (and
/// `isAtEnd`), so every input, even an empty one, decodes to something.
struct FuzzInput {
    private let bytes: [UInt8]
    private(set) var position = 0

    init(_ data: UnsafeRawBufferPointer) {
        bytes = Array(data)
    }

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { position >= bytes.count }
    var remaining: Int { max(0, bytes.count - position) }

    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// A number in `0 ..< bound` (bound ≥ 1) from one byte.
    mutating func below(_ bound: Int) -> Int {
        Int(byte()) % max(1, bound)
    }

    mutating func u16() -> Int {
        Int(byte()) | Int(byte()) << 8
    }

    mutating func u64() -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) { value |= UInt64(byte()) << UInt64(shift) }
        return value
    }

    /// The next `count` bytes (fewer at the end).
    mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, position + max(0, count))
        guard position < end else { return [] }
        defer { position = end }
        return Array(bytes[position..<end])
    }
}

/// Appends the little-endian bytes of integers, for building inputs (seeds).
struct FuzzOutput {
    var bytes: [UInt8] = []

    mutating func byte(_ value: Int) { bytes.append(UInt8(truncatingIfNeeded: value)) }

    mutating func u16(_ value: Int) {
        byte(value)
        byte(value >> 8)
    }

    mutating func u64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func append(_ more: [UInt8]) { bytes.append(contentsOf: more) }
}

/// A finding: an invariant the entry points check failed. Stops the process, which is how
/// libFuzzer (and the corpus replay test, by crashing) learn about it.
func finding(_ target: String, _ message: @autoclosure () -> String) -> Never {
    fatalError("FUZZ FINDING [\(target)]: \(message())")
}
