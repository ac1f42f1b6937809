#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension CheckpointReader {
    /// A record as found in the file, framing and checksum checked. `payload` points into the
    /// input's window: valid until the next call on that input.
    struct RawRecord {
        var type: RecordType
        var flags: UInt8
        var payload: UnsafeRawBufferPointer
        /// The record's bytes in the file (a sealed record's whole frame).
        var storedLength: Int
    }

    /// Reads a file through one reusable window, so a checkpoint of any size is read with
    /// memory bounded by its largest record (about one block) rather than its size.
    ///
    /// Threading: one reader, one thread.
    final class Input {
        let file: any StorageFile
        /// The file's size when opened; every length is checked against it.
        let size: Int64
        private var window: UnsafeMutableRawBufferPointer
        private var windowStart: Int64 = 0
        private var windowCount = 0
        /// The plain bytes of the last sealed record opened (encrypted checkpoints).
        private var plain: UnsafeMutableRawBufferPointer = .allocate(byteCount: 0, alignment: 16)

        /// A window holds two blocks, so a run of small records costs one read per block.
        static let windowSize = 2 * Format.checkpointBlockSize

        /// - Throws: `.io` when the size cannot be read.
        init(file: any StorageFile) throws(StorageError) {
            self.file = file
            do { size = try file.size() } catch { throw .io(error) }
            window = .allocate(byteCount: Self.windowSize, alignment: 16)
        }

        deinit {
            window.deallocate()
            plain.deallocate()
        }

        /// The bytes at `offset ..< offset + count`, which must lie within `size` and be
        /// bounded by the caller; valid until the next call.
        /// - Throws: `.io` on a read failure or when the file is shorter than it was.
        func load(at offset: Int64, count: Int) throws(StorageError) -> UnsafeRawBufferPointer {
            precondition(offset >= 0 && count >= 0 && offset + Int64(count) <= size, "load outside the file")
            if offset >= windowStart && offset + Int64(count) <= windowStart + Int64(windowCount) {
                let start = Int(offset - windowStart)
                return UnsafeRawBufferPointer(rebasing: window[start..<(start + count)])
            }
            if count > window.count {
                window.deallocate()
                window = .allocate(byteCount: count, alignment: 16)
            }
            let wanted = Int(min(Int64(window.count), size - offset))
            var filled = 0
            do throws(IOFailure) {
                while filled < wanted {
                    let n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: window[filled..<wanted]), at: offset + Int64(filled))
                    if n == 0 { break }
                    filled += n
                }
            } catch {
                windowCount = 0
                throw .io(error)
            }
            windowStart = offset
            windowCount = filled
            guard filled >= count else { throw .io(IOFailure.shortRead(path: file.path)) }
            return UnsafeRawBufferPointer(rebasing: window[0..<count])
        }

        /// Reads and checks the record at `offset`: enough bytes for a header, a known
        /// checkpoint type, a length within the type's maximum and the bytes left (all checked
        /// before reading the payload), then `RecordCodec.frame` (flags, checksum).
        /// - Throws: what `corrupt` makes for the record's offset, or `.io`.
        func record(at offset: Int64, corrupt: (Int64, String) -> StorageError) throws(StorageError) -> RawRecord {
            let left = size - offset
            guard left >= Int64(Format.recordHeaderSize) else { throw corrupt(offset, "truncated record header (\(left) bytes left)") }
            let header = try load(at: offset, count: Format.recordHeaderSize)
            let typeByte = header[Format.recordTypeOffset]
            let length = Int(UInt32(littleEndian: header.loadUnaligned(fromByteOffset: Format.recordLengthOffset, as: UInt32.self)))
            try Self.checkShape(typeByte: typeByte, length: length, offset: offset, corrupt: corrupt)
            guard Int64(length) <= left - Int64(Format.recordHeaderSize) else {
                throw corrupt(offset, "record of \(length) bytes runs past the end of the file (\(left) bytes left)")
            }
            let bytes = try load(at: offset, count: Format.recordHeaderSize + length)
            return try Self.frame(bytes, storedLength: bytes.count, offset: offset, corrupt: corrupt)
        }

        /// Reads, opens and checks the sealed record whose frame starts at `offset`: the
        /// frame's length (in range, within the file) before anything else is read, then its
        /// tag, then the plain record's checks as `record(at:corrupt:)` makes them.
        func sealedRecord(at offset: Int64, sealing: RecordSealing, corrupt: (Int64, String) -> StorageError) throws(StorageError) -> RawRecord {
            let left = size - offset
            guard left >= Int64(Format.sealedRecordLengthSize) else { throw corrupt(offset, "truncated sealed record length (\(left) bytes left)") }
            let lengthBytes = try load(at: offset, count: Format.sealedRecordLengthSize)
            let sealedLength = UInt32(littleEndian: lengthBytes.loadUnaligned(as: UInt32.self))
            let frameSize = try SealedRecord.frameSize(sealedLength: sealedLength, bytesLeft: left, path: file.path, offset: offset)
            let opened = try sealing.open(try load(at: offset, count: frameSize), at: offset, path: file.path)
            if plain.count < opened.count {
                plain.deallocate()
                plain = .allocate(byteCount: opened.count, alignment: 16)
            }
            opened.withUnsafeBytes { plain.copyMemory(from: $0) }
            let bytes = UnsafeRawBufferPointer(rebasing: plain[0..<opened.count])
            let typeByte = bytes[Format.recordTypeOffset]
            let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: Format.recordLengthOffset, as: UInt32.self)))
            try Self.checkShape(typeByte: typeByte, length: length, offset: offset, corrupt: corrupt)
            guard length + Format.recordHeaderSize == bytes.count else { throw corrupt(offset, "sealed record length disagrees with its record") }
            return try Self.frame(bytes, storedLength: frameSize, offset: offset, corrupt: corrupt)
        }

        /// Checks a record's type and payload length against what a checkpoint allows.
        static func checkShape(typeByte: UInt8, length: Int, offset: Int64, corrupt: (Int64, String) -> StorageError) throws(StorageError) {
            guard let type = RecordType(rawValue: typeByte) else { throw corrupt(offset, "unknown record type \(typeByte)") }
            let valid: Bool
            switch type {
            case .checkpointInfo: valid = length == Format.checkpointInfoPayloadSize
            case .checkpointEnd: valid = length == Format.checkpointEndPayloadSize
            case .checkpointSegmentUsage, .checkpointPendingExtension: valid = length <= Format.maxRecordPayload
            case .checkpointIndexRoot: valid = length <= Format.rootBodyOffset + Format.rootMaximumSize + 4
            case .object, .metadata, .remove, .removeCollection, .removeAll, .commit, .extensionData:
                throw corrupt(offset, "log record type \(typeByte) in a checkpoint")
            }
            guard valid else { throw corrupt(offset, "record type \(typeByte) with a payload length of \(length) bytes") }
        }

        /// Frames the whole record in `bytes` (flags, checksum).
        static func frame(_ bytes: UnsafeRawBufferPointer, storedLength: Int, offset: Int64,
                          corrupt: (Int64, String) -> StorageError) throws(StorageError) -> RawRecord {
            do throws(RecordCodec.FrameError) {
                let frame = try RecordCodec.frame(in: bytes, at: 0)
                return RawRecord(type: frame.type, flags: frame.flags,
                                 payload: UnsafeRawBufferPointer(rebasing: bytes[frame.payloadStart..<(frame.payloadStart + frame.payloadLength)]),
                                 storedLength: storedLength)
            } catch {
                switch error {
                case .truncated: throw corrupt(offset, "truncated record")
                case .invalid(let reason): throw corrupt(offset, reason)
                }
            }
        }

        /// `crc` extended by the bytes at `offset ..< offset + count` (a record just read).
        func checksum(at offset: Int64, count: Int, after crc: UInt32) throws(StorageError) -> UInt32 {
            CRC32C.update(crc, try load(at: offset, count: count))
        }
    }
}
