/// Reads many records of one segment file through a large reused window, so a pass over
/// records sorted by offset (compaction's copy, `verify()`'s record check) costs one `pread`
/// per window instead of one per record. Each record gets the checks of
/// `SegmentReader.record(at:in:)`: length in range, within the file, framing and checksum, and
/// exactly the length the index gave.
///
/// Records may come in any order; ascending offsets make every window read count.
///
/// Threading: one reader, one thread (the window is reused).
package final class SequentialRecordReader {
    package let file: any StorageFile
    /// Bytes a refill asks for (a record longer than this gets a window of its own size).
    package let windowSize: Int
    /// How the file's records are sealed (an encrypted database's segment); nil: plain.
    package let sealing: RecordSealing?
    private var window: UnsafeMutableRawBufferPointer
    private var windowStart: Int64 = 0
    private var windowCount = 0

    /// - Parameter windowSize: bytes per read; 4 MiB by default.
    package init(file: any StorageFile, windowSize: Int = 4 << 20, sealing: RecordSealing? = nil) {
        self.file = file
        self.sealing = sealing
        self.windowSize = max(windowSize, Format.recordHeaderSize)
        window = .allocate(byteCount: self.windowSize, alignment: 16)
    }

    deinit { window.deallocate() }

    /// Calls `body` with the verified record at `location` (whose segment must be this
    /// reader's file) and its frame; the bytes are valid only during the call.
    /// - Throws: `corrupted` (at the record's offset) when a check fails or the record runs
    ///   past the end of the file, `io` when the file cannot be read, or `body`'s error.
    package func withRecord<R>(
        at location: RecordLocation,
        _ body: (UnsafeRawBufferPointer, RecordCodec.Frame) throws(StorageError) -> R
    ) throws(StorageError) -> R {
        let length = Int(location.length)
        let offset = Int64(location.offset)
        var name: String { Paths.fileName(of: file.path) }
        if sealing != nil {
            try RecordSealing.checkLocatedLength(length, offset: offset, path: file.path)
        } else {
            try RecordCodec.checkLocatedLength(length, offset: offset, path: file.path)
        }
        if offset < windowStart || offset + Int64(length) > windowStart + Int64(windowCount) {
            try refill(at: offset, atLeast: length)
            guard windowCount >= length else {
                throw .corrupted(offset: offset, reason: "\(name): record runs past the end of the file")
            }
        }
        let start = Int(offset - windowStart)
        let bytes = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(window)[start..<(start + length)])
        if let sealing {
            let plain = try sealing.open(bytes, at: offset, path: file.path)
            return try plain.withBytes { (raw) throws(StorageError) -> R in
                try body(raw, RecordCodec.locatedFrame(in: raw, offset: offset, path: file.path))
            }
        }
        return try body(bytes, RecordCodec.locatedFrame(in: bytes, offset: offset, path: file.path))
    }

    /// Reads from `offset` into the window (grown to `atLeast` bytes if needed) until it is
    /// full or the file ends.
    private func refill(at offset: Int64, atLeast count: Int) throws(StorageError) {
        if count > window.count {
            window.deallocate()
            window = .allocate(byteCount: count, alignment: 16)
        }
        windowStart = offset
        windowCount = 0
        var filled = 0
        do throws(IOFailure) {
            while filled < window.count {
                let n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: window[filled...]), at: offset + Int64(filled))
                if n == 0 { break }
                filled += n
            }
        } catch {
            throw .io(error)
        }
        windowCount = filled
    }
}
