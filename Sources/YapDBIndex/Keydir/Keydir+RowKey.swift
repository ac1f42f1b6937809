// Keydir+RowKey: how (collection, key) and row ids become the byte keys of the paged trees.

/// The byte keys of the key directory's trees (docs/format.md §11, "Key directory trees").
///
/// **Row keys** order rows by collection, then key, both by their UTF-8 bytes: the collection's
/// bytes with each 0x00 written as 0x00 0xFF, then the terminator 0x00 0x01, then the key's
/// bytes as they are. Every row of collection `c` lies in the half-open range
/// [`prefix(c)`, `end(c)`), where `prefix(c)` is the escaped name plus 0x00 0x01 and `end(c)` the
/// escaped name plus 0x00 0x02, so a collection is one contiguous range of the tree and its
/// row count is a difference of two ranks. The escape keeps the order of the names: a byte 0x00
/// inside a name (0x00 0xFF) sorts after the terminator (0x00 0x01) and before every other byte.
///
/// **Row-id keys** are the row id's 8 bytes, big-endian, so row ids sort numerically.
package enum RowKey {
    /// The terminator's second byte, after 0x00.
    static let terminator: UInt8 = 0x01
    /// The second byte after 0x00 that ends a collection's range.
    static let rangeEnd: UInt8 = 0x02
    /// The second byte of an escaped 0x00 inside a collection name.
    static let escapedZero: UInt8 = 0xFF

    /// The row key of (`collection`, `key`).
    package static func encode(collection: String, key: String) -> [UInt8] {
        var bytes = prefix(collection, extra: key.utf8.count)
        bytes.append(contentsOf: key.utf8)
        return bytes
    }

    /// Calls `body` with the row key of (`collection`, `key`), built in a temporary buffer
    /// (on the stack when it is small) instead of a new array: the form for lookups, which need
    /// the key only during the call.
    @inline(__always)
    package static func withEncoded<R>(collection: String, key: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let length = encodedLength(collection: collection, key: key)
        return withUnsafeTemporaryAllocation(byteCount: length, alignment: 1) { buffer in
            var index = 0
            for byte in collection.utf8 {
                buffer[index] = byte
                index &+= 1
                if byte == 0 {
                    buffer[index] = escapedZero
                    index &+= 1
                }
            }
            buffer[index] = 0
            buffer[index &+ 1] = terminator
            index &+= 2
            let rest = UnsafeMutableRawBufferPointer(rebasing: buffer[index...])
            if key.utf8.withContiguousStorageIfAvailable({ rest.copyMemory(from: UnsafeRawBufferPointer($0)) }) == nil {
                for byte in key.utf8 {
                    buffer[index] = byte
                    index &+= 1
                }
            }
            return body(UnsafeRawBufferPointer(buffer))
        }
    }

    /// The first byte string of `collection`'s range: its escaped name and the terminator.
    package static func prefix(_ collection: String, extra: Int = 0) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(collection.utf8.count + 2 + extra)
        for byte in collection.utf8 {
            bytes.append(byte)
            if byte == 0 { bytes.append(escapedZero) }
        }
        bytes.append(0)
        bytes.append(terminator)
        return bytes
    }

    /// The first byte string after `collection`'s range.
    package static func end(_ collection: String) -> [UInt8] {
        var bytes = prefix(collection)
        bytes[bytes.count - 1] = rangeEnd
        return bytes
    }

    /// The length of a row key of (`collection`, `key`), without building it.
    package static func encodedLength(collection: String, key: String) -> Int {
        var zeros = 0
        for byte in collection.utf8 where byte == 0 { zeros += 1 }
        return collection.utf8.count + zeros + 2 + key.utf8.count
    }

    /// The length of the collection part (escaped name and terminator) at the start of a row
    /// key, or nil when the bytes are not a row key (no terminator, or a bad escape).
    static func collectionPartLength(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0 {
                guard index + 1 < bytes.count else { return nil }
                switch bytes[index + 1] {
                case terminator: return index + 2
                case escapedZero: index += 2
                default: return nil
                }
            } else {
                index += 1
            }
        }
        return nil
    }

    /// The collection name of a row key whose collection part is `length` bytes.
    static func collection(_ bytes: UnsafeRawBufferPointer, partLength length: Int) -> String? {
        var name: [UInt8] = []
        name.reserveCapacity(length - 2)
        var index = 0
        while index < length - 2 {
            name.append(bytes[index])
            index += bytes[index] == 0 ? 2 : 1
        }
        return name.withUnsafeBytes { utf8String($0) }
    }

    /// The key of a row key whose collection part is `length` bytes.
    static func key(_ bytes: UnsafeRawBufferPointer, partLength length: Int) -> String? {
        guard length >= 0, length <= bytes.count else { return nil }
        return utf8String(UnsafeRawBufferPointer(rebasing: bytes[length...]))
    }

    /// The string whose UTF-8 bytes are `bytes`, or nil when they are not valid UTF-8. ASCII
    /// (every byte below 0x80, valid as it is) is decoded without the general validation,
    /// which costs about a thousand instructions per string.
    static func utf8String(_ bytes: UnsafeRawBufferPointer) -> String? {
        var index = 0, high: UInt64 = 0
        while index &+ 8 <= bytes.count {
            high |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index &+= 8
        }
        while index < bytes.count {
            high |= UInt64(bytes[index])
            index &+= 1
        }
        guard high & 0x8080_8080_8080_8080 != 0 else { return String(decoding: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    /// (collection, key) of a row key, or nil when the bytes are not one (then the page holding
    /// them is damaged).
    package static func decode(_ bytes: UnsafeRawBufferPointer) -> (collection: String, key: String)? {
        guard let length = collectionPartLength(bytes),
              let collection = collection(bytes, partLength: length),
              let key = key(bytes, partLength: length) else { return nil }
        return (collection, key)
    }

    /// The row-id key of `rowid`: 8 bytes, big-endian.
    package static func rowid(_ rowid: UInt64) -> [UInt8] {
        withUnsafeBytes(of: rowid.bigEndian) { Array($0) }
    }
}

/// The collection name a walk over rows by row id decoded last, with its encoded part (see
/// `Keydir.row(forRowid:memo:)`).
package struct CollectionMemo {
    private var part: [UInt8] = []
    private var name: String?

    package init() {}

    /// The collection name of row key `bytes` and the length of its collection part: the kept
    /// name when the key starts with the kept part (found without scanning for the
    /// terminator: the part ends with it, and an escaped name holds no 0x00 0x01, so a key
    /// starting with the part has exactly that collection part), else decoded and kept; nil
    /// when the bytes are not a row key.
    mutating func collection(ofRowKey bytes: UnsafeRawBufferPointer) -> (name: String, partLength: Int)? {
        if let name, !part.isEmpty, part.count <= bytes.count, let start = bytes.baseAddress,
           part.withUnsafeBytes({ compareBytes($0.baseAddress.unsafelyUnwrapped, $0.count, start, $0.count) == 0 }) {
            return (name, part.count)
        }
        guard let length = RowKey.collectionPartLength(bytes), let decoded = name(bytes, partLength: length) else { return nil }
        return (decoded, length)
    }

    /// The collection name of a row key whose collection part is `length` bytes: the kept one
    /// when the part is the same bytes, else decoded (and kept); nil when it does not decode.
    mutating func name(_ bytes: UnsafeRawBufferPointer, partLength length: Int) -> String? {
        let encoded = UnsafeRawBufferPointer(rebasing: bytes[..<length])
        if let name, part.count == length, part.withUnsafeBytes({ compareBytes($0, encoded) == 0 }) { return name }
        guard let decoded = RowKey.collection(bytes, partLength: length) else { return nil }
        part = Array(encoded)
        name = decoded
        return decoded
    }
}
