#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import YapDBCrypto

// The recovery scan of an encrypted database's segments (docs/format.md §12): each record is
// a sealed frame, opened before it is read. A frame whose length is out of range or runs past
// the file, or that does not authenticate, is damage at its offset, classified exactly as a
// plain record's bad checksum is (torn tail, or `corrupted` when a later commit proves the
// bytes were synced: docs/format.md §5).
extension LogScanner {
    /// Reads, opens and checks the sealed record whose frame starts at file offset `position`.
    /// Frame and authentication errors are returned (damage); I/O errors are thrown. The
    /// commit's records checksum covers the frames as stored.
    func readSealedRecord(_ window: SegmentWindow, at position: Int, number: UInt32, sealing: RecordSealing,
                          pendingChecksum: UInt32) throws(StorageError) -> Result<ScannedRecord, RecordCodec.FrameError> {
        let left = window.size - position
        guard left >= Format.sealedRecordLengthSize else { return .failure(.truncated) }
        let lengthBytes: ArraySlice<UInt8>
        do { lengthBytes = try window.bytes(at: position, count: Format.sealedRecordLengthSize) } catch { throw .io(error) }
        let sealedLength = lengthBytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
        let path = files.segmentPath(number)
        let size: Int
        do throws(StorageError) {
            size = try SealedRecord.frameSize(sealedLength: sealedLength, bytesLeft: Int64(left), path: path, offset: Int64(position))
        } catch {
            return .failure(Int(sealedLength) + SealedRecord.overhead > left ? .truncated : .invalid("\(error)"))
        }
        let frame: [UInt8]
        do { frame = Array(try window.bytes(at: position, count: size)) } catch { throw .io(error) }
        let plain: [UInt8]
        do throws(StorageError) { plain = try sealing.open(frame, at: Int64(position), path: path) } catch {
            return .failure(.invalid("sealed record did not authenticate"))
        }
        let location = RecordLocation(segment: number, offset: UInt32(position), length: UInt32(size))
        return plain.withUnsafeBytes { raw in Self.decodeRecord(raw, location: location) }.map { content in
            if case .commit = content { return ScannedRecord(content: content, totalLength: size, pendingChecksum: pendingChecksum) }
            return ScannedRecord(content: content, totalLength: size,
                                 pendingChecksum: frame.withUnsafeBytes { CRC32C.update(pendingChecksum, $0) })
        }
    }

    /// `firstCommit` for a sealed segment: the first commit frame at or after `start` that
    /// authenticates at its offset and whose info passes `test`. A commit's plain record has
    /// a fixed length, so only offsets whose first four bytes give that length are opened.
    static func firstSealedCommit(in window: SegmentWindow, from start: Int, sealing: RecordSealing,
                                  where test: (CommitInfo) -> Bool) throws(StorageError) -> (offset: Int, info: CommitInfo)? {
        let frameSize = RecordCodec.commitRecordSize + SealedRecord.overhead
        var marker: [UInt8] = []
        marker.appendLE(UInt32(RecordCodec.commitRecordSize))
        let lengthSize = Format.sealedRecordLengthSize
        var offset = max(0, start)
        while offset + frameSize <= window.size {
            let count = min(window.windowSize, window.size - offset)
            let chunk: ArraySlice<UInt8>
            do { chunk = try window.bytes(at: offset, count: count) } catch { throw .io(error) }
            // Candidates first: opening one moves the window.
            let candidates: [Int] = chunk.withUnsafeBytes { raw in
                guard let base = raw.baseAddress, raw.count >= lengthSize else { return [] }
                var found: [Int] = []
                var at = 0
                while at + lengthSize <= raw.count {
                    guard let hit = memchr(base + at, Int32(marker[0]), raw.count - lengthSize + 1 - at) else { break }
                    at = base.distance(to: UnsafeRawPointer(hit))
                    if raw[at + 1] == marker[1], raw[at + 2] == marker[2], raw[at + 3] == marker[3] { found.append(offset + at) }
                    at += 1
                }
                return found
            }
            for candidate in candidates where candidate + frameSize <= window.size {
                let frame: [UInt8]
                do { frame = Array(try window.bytes(at: candidate, count: frameSize)) } catch { throw .io(error) }
                guard let plain = try? sealing.open(frame, at: Int64(candidate), path: window.file.path) else { continue }
                let info: CommitInfo? = plain.withUnsafeBytes { raw in
                    guard let frame = try? RecordCodec.frame(in: raw, at: 0), frame.type == .commit, frame.totalLength == raw.count else { return nil }
                    return RecordCodec.commitRecord(frame, in: raw)
                }
                if let info, test(info) { return (candidate, info) }
            }
            guard offset + count < window.size else { break }
            offset += max(1, count - lengthSize + 1)
        }
        return nil
    }
}
