import Foundation

/// A fast, compact binary Codable encoder (format: `YapBinaryFormat` in YapBinaryFormat.swift); the default coder of
/// Codable registrations (chosen by measurement, see docs/api.md).
///
/// It round-trips every Codable shape: keyed (by name), unkeyed and single-value containers,
/// nested containers used in any order, `superEncoder`, optionals, enums with associated values.
/// `Data` and `Date` are stored natively.
///
/// Threading: a value type; `encode` keeps its state per call, so one encoder may be used from
/// several threads at once.
public struct YapBinaryEncoder: YapDatabaseEncoder {
    /// Values handed to `Encodable.encode(to:)` as `encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// The deepest nesting of containers allowed (the decoder's default is the same). Encoding
    /// deeper throws `EncodingError.invalidValue`, so nothing is stored that cannot be read back.
    public var maxDepth: Int = YapBinaryDecoder.defaultMaxDepth

    /// An encoder with empty `userInfo` and the default `maxDepth`.
    public init() {}

    /// The YapBinary bytes of `value`.
    /// - Throws: `EncodingError.invalidValue` when `value` (or a value inside it) throws from
    ///   `encode(to:)`, misuses the Encoder protocol (e.g. asks one encoder for two kinds of
    ///   container) or nests deeper than ``maxDepth``.
    public func encode<T: Encodable>(_ value: T) throws -> Data {
        Data(try encodeBytes(value))
    }

    /// As ``encode(_:)``, returning an array.
    public func encodeBytes<T: Encodable>(_ value: T) throws -> [UInt8] {
        let context = EncodingContext(userInfo: userInfo, maxDepth: maxDepth)
        let root = BinaryNode()
        let encoder = _YapBinaryEncoder(node: root, context: context, parent: nil, key: nil, depth: 0)
        try encoder.encodeWhole(value)
        if let error = context.error { throw error }
        var out = [UInt8]()
        out.reserveCapacity(root.totalSize())
        root.write(into: &out)
        return out
    }
}

/// State shared by every encoder of one top-level `encode` call.
final class EncodingContext {
    let userInfo: [CodingUserInfoKey: Any]
    let maxDepth: Int
    /// The first protocol misuse, thrown when the top-level encode returns.
    var error: EncodingError?

    init(userInfo: [CodingUserInfoKey: any Sendable], maxDepth: Int) {
        self.userInfo = userInfo
        self.maxDepth = maxDepth
    }

    func misuse(_ message: String, at path: [CodingKey]) {
        if error == nil {
            error = .invalidValue((), .init(codingPath: path, debugDescription: "YapBinaryEncoder: \(message)"))
        }
    }
}

/// One value being encoded: its own bytes, plus child nodes spliced in at recorded offsets when
/// written out (so containers may be filled in any order).
final class BinaryNode {
    enum Kind { case empty, single, keyed, unkeyed }

    var kind = Kind.empty
    var bytes: [UInt8] = []
    /// Entries (keyed) or elements (unkeyed).
    var count = 0
    /// Children and the offset in `bytes` where each one's bytes go.
    var children: [(offset: Int, node: BinaryNode)] = []
    private var cachedSize = -1

    /// Bytes of the content (own bytes plus children), without the container header.
    private func contentSize() -> Int {
        var size = bytes.count
        for child in children { size += child.node.totalSize() }
        return size
    }

    /// Bytes this node writes, header included.
    func totalSize() -> Int {
        if cachedSize >= 0 { return cachedSize }
        let content = contentSize()
        switch kind {
        case .single:
            cachedSize = content
        case .empty, .keyed, .unkeyed:
            let inner = YapBinaryFormat.varintSize(UInt64(count)) + content
            cachedSize = 1 + YapBinaryFormat.varintSize(UInt64(inner)) + inner
        }
        return cachedSize
    }

    func write(into out: inout [UInt8]) {
        switch kind {
        case .single:
            break
        case .empty, .keyed, .unkeyed:
            out.append(kind == .unkeyed ? YapBinaryFormat.unkeyedTag : YapBinaryFormat.keyedTag)
            let inner = YapBinaryFormat.varintSize(UInt64(count)) + contentSize()
            YapBinaryFormat.appendVarint(UInt64(inner), to: &out)
            YapBinaryFormat.appendVarint(UInt64(count), to: &out)
        }
        if children.isEmpty {
            out.append(contentsOf: bytes)
            return
        }
        var last = 0
        for child in children {
            out.append(contentsOf: bytes[last..<child.offset])
            child.node.write(into: &out)
            last = child.offset
        }
        out.append(contentsOf: bytes[last...])
    }

    /// A new child whose bytes go at the current end of `bytes`.
    func addChild() -> BinaryNode {
        let child = BinaryNode()
        children.append((bytes.count, child))
        return child
    }

    // MARK: Writing values

    @inline(__always) func writeNil() { bytes.append(YapBinaryFormat.nilTag) }
    @inline(__always) func write(_ value: Bool) { bytes.append(value ? YapBinaryFormat.trueTag : YapBinaryFormat.falseTag) }

    @inline(__always) func writeSigned(_ value: Int64) {
        bytes.append(YapBinaryFormat.signedTag)
        YapBinaryFormat.appendVarint(YapBinaryFormat.zigzag(value), to: &bytes)
    }

    @inline(__always) func writeUnsigned(_ value: UInt64) {
        bytes.append(YapBinaryFormat.unsignedTag)
        YapBinaryFormat.appendVarint(value, to: &bytes)
    }

    @inline(__always) func write(_ value: Double) {
        bytes.append(YapBinaryFormat.doubleTag)
        appendFixed(value.bitPattern)
    }

    @inline(__always) func write(_ value: Float) {
        bytes.append(YapBinaryFormat.floatTag)
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }

    @inline(__always) func write(_ value: String) {
        bytes.append(YapBinaryFormat.stringTag)
        appendText(value)
    }

    func write(_ value: Data) {
        bytes.append(YapBinaryFormat.dataTag)
        YapBinaryFormat.appendVarint(UInt64(value.count), to: &bytes)
        bytes.append(contentsOf: value)
    }

    func write(_ value: Date) {
        bytes.append(YapBinaryFormat.dateTag)
        appendFixed(value.timeIntervalSinceReferenceDate.bitPattern)
    }

    /// A keyed entry's key: varint byte count and UTF-8.
    @inline(__always) func writeKey(_ key: some CodingKey) { appendText(key.stringValue) }

    @inline(__always) private func appendText(_ text: String) {
        let utf8 = text.utf8
        YapBinaryFormat.appendVarint(UInt64(utf8.count), to: &bytes)
        bytes.append(contentsOf: utf8)
    }

    @inline(__always) private func appendFixed(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}

/// The `Encoder` handed to `encode(to:)`: one per nested value.
final class _YapBinaryEncoder: Encoder {
    let node: BinaryNode
    let context: EncodingContext
    let parent: _YapBinaryEncoder?
    let key: (any CodingKey)?
    let depth: Int

    init(node: BinaryNode, context: EncodingContext, parent: _YapBinaryEncoder?, key: (any CodingKey)?, depth: Int) {
        self.node = node
        self.context = context
        self.parent = parent
        self.key = key
        self.depth = depth
    }

    var codingPath: [any CodingKey] {
        var path: [any CodingKey] = []
        var current: _YapBinaryEncoder? = self
        while let encoder = current {
            if let key = encoder.key { path.append(key) }
            current = encoder.parent
        }
        return path.reversed()
    }

    var userInfo: [CodingUserInfoKey: Any] { context.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(YapBinaryKeyedEncodingContainer<Key>(encoder: self, node: claim(.keyed)))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        YapBinaryUnkeyedEncodingContainer(encoder: self, node: claim(.unkeyed))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        if node.kind != .empty && node.kind != .single {
            context.misuse("asked for a single-value container after a keyed or unkeyed one", at: codingPath)
            return YapBinarySingleValueEncodingContainer(encoder: self, node: BinaryNode())
        }
        return YapBinarySingleValueEncodingContainer(encoder: self, node: node)
    }

    /// This encoder's node as a container of `kind`, or (after recording the misuse) a
    /// throwaway node when it already holds another kind.
    private func claim(_ kind: BinaryNode.Kind) -> BinaryNode {
        if node.kind == .empty || node.kind == kind {
            node.kind = kind
            return node
        }
        context.misuse("asked one encoder for two different kinds of container", at: codingPath)
        let scratch = BinaryNode()
        scratch.kind = kind
        return scratch
    }

    /// An encoder for a nested value whose bytes go into `node`.
    func child(node: BinaryNode, key: (any CodingKey)?) throws -> _YapBinaryEncoder {
        guard depth < context.maxDepth else {
            throw EncodingError.invalidValue((), .init(codingPath: codingPath,
                debugDescription: "YapBinaryEncoder: nesting deeper than maxDepth (\(context.maxDepth))"))
        }
        return _YapBinaryEncoder(node: node, context: context, parent: self, key: key, depth: depth + 1)
    }

    /// Writes `value` natively into `node` when it is a standard scalar, `Data` or `Date`
    /// (the types the format stores directly); returns false, writing nothing, otherwise.
    @inline(__always)
    func writeNative<T: Encodable>(_ value: T, into node: BinaryNode) -> Bool {
        if T.self == String.self { node.write(unsafeBitCast(value, to: String.self)); return true }
        if T.self == Int.self { node.writeSigned(Int64(unsafeBitCast(value, to: Int.self))); return true }
        if T.self == Double.self { node.write(unsafeBitCast(value, to: Double.self)); return true }
        if T.self == Bool.self { node.write(unsafeBitCast(value, to: Bool.self)); return true }
        if T.self == Date.self { node.write(value as! Date); return true }
        if T.self == Data.self { node.write(value as! Data); return true }
        if T.self == Int64.self { node.writeSigned(unsafeBitCast(value, to: Int64.self)); return true }
        if T.self == UInt64.self { node.writeUnsigned(unsafeBitCast(value, to: UInt64.self)); return true }
        if T.self == Float.self { node.write(unsafeBitCast(value, to: Float.self)); return true }
        return false
    }

    /// Writes `value` as one nested value into container `node` (whose caller has written the
    /// key or counts the element): natively when possible, else through `value.encode(to:)` with
    /// a child node spliced in at this point.
    func encodeNested<T: Encodable>(_ value: T, into node: BinaryNode, key: (any CodingKey)?) throws {
        if writeNative(value, into: node) { return }
        let target = try child(node: node.addChild(), key: key)
        try value.encode(to: target)
    }

    /// Writes `value` as this encoder's whole value (the top level, or a single-value container).
    func encodeWhole<T: Encodable>(_ value: T) throws {
        if writeNative(value, into: node) {
            node.kind = .single
            return
        }
        try value.encode(to: self)
    }
}
