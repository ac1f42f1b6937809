// PageChecksum: the checksum function a page format uses (CRC32C), software by default.

/// The checksum stored in every page header: CRC32C (Castagnoli, reflected polynomial
/// 0x82F63B78, initial value and final XOR 0xFFFFFFFF — the same function as the log's records).
///
/// This module cannot import YapDBStorage, whose CRC32C uses the CPU's instruction, so it carries
/// a small byte-at-a-time software version (`PageChecksum.crc32c`, about 0.4–1 GB/s) for tests,
/// tools and fuzzing; the engine passes Storage's hardware function through `init(_:)`. Both
/// compute the same value. Checksums are computed when a page is written (flush) and verified by
/// page sources when they first hand out a page and by `validate()`; the read path of a lookup
/// does not checksum (it bounds-checks every access instead).
///
/// Threading: the function is `@Sendable` and pure.
package struct PageChecksum: Sendable {
    /// The checksum of the given bytes.
    package let compute: @Sendable (UnsafeRawBufferPointer) -> UInt32

    /// A checksum computed by `compute`, which must be CRC32C for pages that other code reads.
    package init(_ compute: @escaping @Sendable (UnsafeRawBufferPointer) -> UInt32) { self.compute = compute }

    /// The software CRC32C of this module.
    package static let crc32c = PageChecksum(softwareCRC32C)
}

/// The 256-entry table of the reflected Castagnoli polynomial.
private let crc32cTable: [UInt32] = (0..<256).map { index -> UInt32 in
    var value = UInt32(index)
    for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0x82F6_3B78 : value >> 1 }
    return value
}

/// CRC32C of `bytes`, one byte per table step.
private func softwareCRC32C(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
    crc32cTable.withUnsafeBufferPointer { table in
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int(UInt8(truncatingIfNeeded: crc) ^ byte)] ^ (crc >> 8) }
        return ~crc
    }
}
