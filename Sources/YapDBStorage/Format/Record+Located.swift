/// The checks every reader of a record *at a known location* makes (a location comes from the
/// index, a checkpoint or compaction, and names the record's exact length): one routine, so
/// the point reader, the sequential reader and verify cannot drift apart.
extension RecordCodec {
    /// Checks a located record's length before anything is allocated or read for it: at least
    /// a record header, at most a header plus the largest payload the format allows.
    /// - Throws: `corrupted` at `offset` of the file at `path`.
    package static func checkLocatedLength(_ length: Int, offset: Int64, path: String) throws(StorageError) {
        guard length >= Format.recordHeaderSize, length <= Format.recordHeaderSize + Format.maxRecordPayload else {
            throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): record length \(length) out of range")
        }
    }

    /// Frames the record that fills `bytes` exactly (type, flags, length, checksum by
    /// `frame(in:at:)`), and checks that it is as long as its location says.
    /// - Throws: `corrupted` at `offset` of the file at `path`.
    package static func locatedFrame(in bytes: UnsafeRawBufferPointer, offset: Int64, path: String) throws(StorageError) -> Frame {
        let frame: Frame
        do throws(FrameError) { frame = try self.frame(in: bytes, at: 0) } catch {
            throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): \(error)")
        }
        guard frame.totalLength == bytes.count else {
            throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): record length differs from the index")
        }
        return frame
    }
}
