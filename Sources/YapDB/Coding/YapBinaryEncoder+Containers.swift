import Foundation

/// Keyed entries: key, then value, appended to the node (children spliced in where created).
struct YapBinaryKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: _YapBinaryEncoder
    let node: BinaryNode

    var codingPath: [any CodingKey] { encoder.codingPath }

    @inline(__always) private func entry(_ key: Key) {
        node.writeKey(key)
        node.count += 1
    }

    mutating func encodeNil(forKey key: Key) throws { entry(key); node.writeNil() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { entry(key); node.write(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { entry(key); node.write(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { entry(key); node.write(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { entry(key); node.write(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { entry(key); node.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { entry(key); node.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { entry(key); node.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { entry(key); node.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { entry(key); node.writeSigned(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { entry(key); node.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { entry(key); node.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { entry(key); node.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { entry(key); node.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { entry(key); node.writeUnsigned(value) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        entry(key)
        try encoder.encodeNested(value, into: node, key: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        entry(key)
        let child = node.addChild()
        child.kind = .keyed
        let sub = nestedEncoder(child, key)
        return KeyedEncodingContainer(YapBinaryKeyedEncodingContainer<NestedKey>(encoder: sub, node: child))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        entry(key)
        let child = node.addChild()
        child.kind = .unkeyed
        return YapBinaryUnkeyedEncodingContainer(encoder: nestedEncoder(child, key), node: child)
    }

    mutating func superEncoder() -> any Encoder {
        node.writeKey(YapBinaryKey.super)
        node.count += 1
        return nestedEncoder(node.addChild(), YapBinaryKey.super)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        entry(key)
        return nestedEncoder(node.addChild(), key)
    }

    /// A child encoder; nesting past `maxDepth` is recorded as an error (thrown at the top level).
    private func nestedEncoder(_ child: BinaryNode, _ key: any CodingKey) -> _YapBinaryEncoder {
        if let sub = try? encoder.child(node: child, key: key) { return sub }
        encoder.context.misuse("nesting deeper than maxDepth (\(encoder.context.maxDepth))", at: codingPath + [key])
        return _YapBinaryEncoder(node: child, context: encoder.context, parent: encoder, key: key, depth: encoder.depth)
    }
}

/// Unkeyed elements appended to the node.
struct YapBinaryUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: _YapBinaryEncoder
    let node: BinaryNode

    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { node.count }

    @inline(__always) private func element() { node.count += 1 }

    mutating func encodeNil() throws { element(); node.writeNil() }
    mutating func encode(_ value: Bool) throws { element(); node.write(value) }
    mutating func encode(_ value: String) throws { element(); node.write(value) }
    mutating func encode(_ value: Double) throws { element(); node.write(value) }
    mutating func encode(_ value: Float) throws { element(); node.write(value) }
    mutating func encode(_ value: Int) throws { element(); node.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int8) throws { element(); node.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int16) throws { element(); node.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int32) throws { element(); node.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int64) throws { element(); node.writeSigned(value) }
    mutating func encode(_ value: UInt) throws { element(); node.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { element(); node.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { element(); node.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { element(); node.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { element(); node.writeUnsigned(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let index = node.count
        element()
        try encoder.encodeNested(value, into: node, key: YapBinaryKey(intValue: index))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let key = YapBinaryKey(intValue: node.count)
        element()
        let child = node.addChild()
        child.kind = .keyed
        return KeyedEncodingContainer(YapBinaryKeyedEncodingContainer<NestedKey>(encoder: nestedEncoder(child, key), node: child))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = YapBinaryKey(intValue: node.count)
        element()
        let child = node.addChild()
        child.kind = .unkeyed
        return YapBinaryUnkeyedEncodingContainer(encoder: nestedEncoder(child, key), node: child)
    }

    mutating func superEncoder() -> any Encoder {
        let key = YapBinaryKey(intValue: node.count)
        element()
        return nestedEncoder(node.addChild(), key)
    }

    private func nestedEncoder(_ child: BinaryNode, _ key: any CodingKey) -> _YapBinaryEncoder {
        if let sub = try? encoder.child(node: child, key: key) { return sub }
        encoder.context.misuse("nesting deeper than maxDepth (\(encoder.context.maxDepth))", at: codingPath + [key])
        return _YapBinaryEncoder(node: child, context: encoder.context, parent: encoder, key: key, depth: encoder.depth)
    }
}

/// One value written into the encoder's own node.
struct YapBinarySingleValueEncodingContainer: SingleValueEncodingContainer {
    let encoder: _YapBinaryEncoder
    let node: BinaryNode

    var codingPath: [any CodingKey] { encoder.codingPath }

    /// Marks the node as holding one value; a second value is a misuse (recorded, thrown at the top).
    @inline(__always) private func claim() -> BinaryNode {
        if node.kind == .empty && node.bytes.isEmpty {
            node.kind = .single
            return node
        }
        encoder.context.misuse("encoded a second value into a single-value container", at: codingPath)
        return BinaryNode()
    }

    mutating func encodeNil() throws { claim().writeNil() }
    mutating func encode(_ value: Bool) throws { claim().write(value) }
    mutating func encode(_ value: String) throws { claim().write(value) }
    mutating func encode(_ value: Double) throws { claim().write(value) }
    mutating func encode(_ value: Float) throws { claim().write(value) }
    mutating func encode(_ value: Int) throws { claim().writeSigned(Int64(value)) }
    mutating func encode(_ value: Int8) throws { claim().writeSigned(Int64(value)) }
    mutating func encode(_ value: Int16) throws { claim().writeSigned(Int64(value)) }
    mutating func encode(_ value: Int32) throws { claim().writeSigned(Int64(value)) }
    mutating func encode(_ value: Int64) throws { claim().writeSigned(value) }
    mutating func encode(_ value: UInt) throws { claim().writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { claim().writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { claim().writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { claim().writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { claim().writeUnsigned(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        guard node.kind == .empty && node.bytes.isEmpty else {
            encoder.context.misuse("encoded a second value into a single-value container", at: codingPath)
            return
        }
        try encoder.encodeWhole(value)
    }
}
