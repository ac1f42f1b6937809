#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension LogStore {
    /// The log writer of a read-only open: positioned after the last valid commit like a
    /// writer's, over the last segment opened read-only, so the engine's read paths work as
    /// usual; the engine refuses every write before it reaches it. Bytes of a torn tail stay
    /// in the file, past `end`, and are never read. A log with no segment at all (a database
    /// whose first open stopped before creating one) gets a stand-in with no bytes.
    static func readOnlyWriter(report: ScanReport, begin: LogPosition, segments: [UInt32], files: DatabaseFiles,
                               fileSystem fs: any FileSystem, uuid: [UInt8], options: Options,
                               cipher: DatabaseCipher?) throws(StorageError) -> LogWriter {
        let number: UInt32
        let end: UInt32
        let file: any StorageFile
        var sealing: RecordSealing?
        if let position = report.end {
            number = position.segment
            end = position.offset
            do { file = try fs.open(files.segmentPath(number), mode: .readOnly) } catch { throw .io(error) }
            if let cipher {
                do throws(StorageError) { sealing = try RecordSealing.read(file, cipher: cipher, unitType: .logRecord) } catch {
                    file.close()
                    throw error
                }
            }
        } else {
            number = max(begin.segment, (segments.last ?? 0) + 1)
            end = UInt32(Format.firstRecordOffset(encrypted: cipher != nil))
            file = AbsentSegment(path: files.segmentPath(number))
            if let cipher {
                // Never used to write (the file refuses every change): a sealing of its own.
                var header = FileHeader(kind: .logSegment, uuid: uuid, fileNumber: number, baseSnapshot: report.lastSnapshot)
                header.encrypted = true
                sealing = RecordSealing(sealer: try cipher.newFile(header).sealer, header: header, unitType: .logRecord)
            }
        }
        let writer = LogWriter(files: files, fileSystem: fs, uuid: uuid, segmentNumber: number, file: file, end: end,
                               lastSnapshot: report.lastSnapshot, syncMode: options.syncMode, segmentLimit: options.segmentLimit,
                               cipher: cipher, sealing: sealing)
        writer.nextSegmentNumber = max(number, segments.last ?? 0) + 1
        return writer
    }
}

/// The segment a read-only open would have created: no bytes; reads find none, and every
/// change fails with `EROFS` (the engine refuses writes before they get here).
final class AbsentSegment: StorageFile {
    let path: String

    init(path: String) { self.path = path }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(IOFailure) -> Int { 0 }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(IOFailure) { throw refused("pwrite") }
    func sync() throws(IOFailure) { throw refused("fdatasync") }
    func truncate(to size: Int64) throws(IOFailure) { throw refused("ftruncate") }
    func size() throws(IOFailure) -> Int64 { 0 }
    func close() {}
    func map(length: Int) throws(IOFailure) -> FileMapping { throw IOFailure(errno: EINVAL, operation: "mmap", path: path) }
    var mapsInPlace: Bool { false }

    private func refused(_ operation: String) -> IOFailure { IOFailure(errno: EROFS, operation: operation, path: path) }
}
