import CYapDBSupport

/// CRC32C (Castagnoli), the checksum of every record and header (docs/format.md).
///
/// Uses the CPU's CRC32C instruction when it has one (x86-64 SSE4.2, AArch64 CRC; C target
/// `CYapDBSupport`), otherwise software slicing-by-8: eight 256-entry tables let the loop
/// consume eight bytes per step. Pure functions, safe from any thread.
package enum CRC32C {
    /// Whether the hardware path is in use.
    package static let usesHardware = yapdb_crc32c_hardware_available() != 0

    /// The reflected Castagnoli polynomial.
    static let polynomial: UInt32 = 0x82F6_3B78

    /// Eight tables of 256 entries, laid out contiguously (table k at k * 256).
    static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ polynomial : c >> 1 }
            t[i] = c
        }
        for i in 0..<256 {
            var c = t[i]
            for k in 1..<8 {
                c = t[Int(c & 0xFF)] ^ (c >> 8)
                t[k * 256 + i] = c
            }
        }
        return t
    }()

    /// Extends `crc` (the checksum of earlier bytes, 0 to start) over `bytes`.
    package static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress else { return crc }
        if usesHardware { return ~yapdb_crc32c_hardware(~crc, base, bytes.count) }
        return softwareUpdate(crc, bytes)
    }

    /// The software path (slicing-by-8), used when the CPU has no CRC32C instruction.
    package static func softwareUpdate(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var c = ~crc
        guard var p = bytes.baseAddress else { return crc }
        var n = bytes.count
        tables.withUnsafeBufferPointer { tb in
            let t = tb.baseAddress!
            while n > 0 && (UInt(bitPattern: p) & 7) != 0 {
                c = t[Int((c ^ UInt32(p.load(as: UInt8.self))) & 0xFF)] ^ (c >> 8)
                p += 1; n -= 1
            }
            while n >= 8 {
                let word = UInt64(littleEndian: p.load(as: UInt64.self))
                let lo = UInt32(truncatingIfNeeded: word) ^ c
                let hi = UInt32(truncatingIfNeeded: word >> 32)
                c = t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                p += 8; n -= 8
            }
            while n > 0 {
                c = t[Int((c ^ UInt32(p.load(as: UInt8.self))) & 0xFF)] ^ (c >> 8)
                p += 1; n -= 1
            }
        }
        return ~c
    }

    /// The checksum of `bytes`.
    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 { update(0, bytes) }

    /// The checksum of `bytes`.
    package static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// The stored form of a checksum (docs/format.md): rotated and offset so a checksum stored
    /// inside checksummed bytes does not checksum trivially.
    package static func mask(_ crc: UInt32) -> UInt32 {
        ((crc >> 15) | (crc << 17)) &+ Format.crcMaskDelta
    }

    /// Inverse of `mask`.
    package static func unmask(_ masked: UInt32) -> UInt32 {
        let rotated = masked &- Format.crcMaskDelta
        return (rotated >> 17) | (rotated << 15)
    }
}
