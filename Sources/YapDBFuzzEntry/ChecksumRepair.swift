import YapDBStorage

/// Recomputes the checksums in fuzzer-made bytes, so that mutations inside records reach the
/// decoders behind the checksum checks instead of stopping at them. Used when an input asks
/// for it (see `RecordsTarget` and `RecoveryImage`); inputs that do not ask keep their
/// checksums as mutated, which exercises the checks themselves.
enum ChecksumRepair {
    /// Fixes the header checksum at `offset` when the magic is there.
    static func repairHeader(_ bytes: inout [UInt8], at offset: Int = 0) {
        guard offset >= 0, bytes.count - offset >= Format.headerSize,
              Array(bytes[offset..<(offset + Format.magic.count)]) == Format.magic else { return }
        let crcOffset = offset + Format.headerSize - 4
        let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[offset..<crcOffset])) }
        store(CRC32C.mask(crc), at: crcOffset, in: &bytes)
    }

    /// Walks the records from `start` while their lengths fit, fixing each record's checksum;
    /// a commit record's count, length and checksum of the records before it; a checkpoint end
    /// record's record count and checksum of all records before it.
    static func repairRecords(_ bytes: inout [UInt8], from start: Int) {
        var offset = max(0, start)
        var commitStart = offset
        var recordsInCommit: UInt32 = 0
        var recordsInFile: UInt32 = 0
        while bytes.count - offset >= Format.recordHeaderSize {
            let length = Int(load32(bytes, at: offset + Format.recordLengthOffset))
            guard length <= bytes.count - offset - Format.recordHeaderSize else { return }
            let payload = offset + Format.recordHeaderSize
            switch bytes[offset + Format.recordTypeOffset] {
            case RecordType.commit.rawValue where length == Format.commitPayloadSize:
                let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[commitStart..<offset])) }
                store(recordsInCommit, at: payload + 8, in: &bytes)
                store(CRC32C.mask(crc), at: payload + 12, in: &bytes)
                store(UInt32(offset - commitStart), at: payload + 16, in: &bytes)
                store(UInt32(0), at: payload + 20, in: &bytes)
            case RecordType.checkpointIndexRoot.rawValue:
                // The root record inside (§10): its own header and crc, before the record's.
                repairRoot(&bytes, at: payload, length: length)
            case RecordType.checkpointEnd.rawValue where length == Format.checkpointEndPayloadSize:
                let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[max(0, start)..<offset])) }
                store(recordsInFile, at: payload + 8, in: &bytes)
                store(CRC32C.mask(crc), at: payload + 12, in: &bytes)
            default:
                break
            }
            let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[(offset + 4)..<(payload + length)])) }
            store(CRC32C.mask(crc), at: offset, in: &bytes)
            recordsInFile += 1
            if bytes[offset + Format.recordTypeOffset] == RecordType.commit.rawValue {
                commitStart = payload + length
                recordsInCommit = 0
            } else {
                recordsInCommit += 1
            }
            offset = payload + length
        }
    }

    /// Fixes a root record (docs/format.md §10) of `length` bytes at `offset`: its file header
    /// checksum, and the crc after the body when the body length fits.
    static func repairRoot(_ bytes: inout [UInt8], at offset: Int, length: Int) {
        repairHeader(&bytes, at: offset)
        guard length >= Format.rootBodyOffset + 4 else { return }
        let body = Int(load32(bytes, at: offset + Format.rootBodyLengthOffset))
        guard body <= length - Format.rootBodyOffset - 4 else { return }
        let end = offset + Format.rootBodyOffset + body
        let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[(offset + Format.rootBodyLengthOffset)..<end])) }
        store(CRC32C.mask(crc), at: end, in: &bytes)
    }

    /// Fixes an index file (docs/format.md §9, §11): the file header checksum, the page-size
    /// crc of the header page, and — when the page size there is a valid one — every whole
    /// page's checksum (CRC32C of bytes 4 ..< pageSize, stored plain at 0).
    static func repairIndexFile(_ bytes: inout [UInt8]) {
        repairHeader(&bytes, at: 0)
        guard bytes.count >= Format.indexHeaderChecksumOffset + 4 else { return }
        let crc = bytes.withUnsafeBytes {
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[Format.indexPageSizeOffset..<Format.indexHeaderChecksumOffset]))
        }
        store(CRC32C.mask(crc), at: Format.indexHeaderChecksumOffset, in: &bytes)
        let pageSize = Int(load32(bytes, at: Format.indexPageSizeOffset))
        guard pageSize >= Format.indexMinimumPageSize, pageSize <= Format.indexMaximumPageSize, pageSize & (pageSize - 1) == 0 else { return }
        var page = pageSize
        while bytes.count - page >= pageSize {
            let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[(page + 4)..<(page + pageSize)])) }
            store(crc, at: page, in: &bytes)
            page += pageSize
        }
    }

    static func load32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << UInt32(8 * $1) }
    }

    static func store(_ value: UInt32, at offset: Int, in bytes: inout [UInt8]) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> UInt32(8 * index)) }
    }
}
