import YapDBStorage

// Which bytes of the log segments the read table maps (SegmentTable, docs/architecture.md,
// "Value reads").
//
// The rule: a map covers only bytes the engine never truncates, since a read of a truncated
// page of a map stops the process (SIGBUS). Every truncation of a segment, and why none cuts
// into a map:
// - recovery at open (`LogScanner.scan(repair: true)`) cuts the torn tail before any table
//   exists; the maps are made after it;
// - a failed or rolled-back transaction (`LogWriter.discardTransaction`) cuts the active
//   segment back to where the transaction began, which is the end of the last commit, at or
//   past its synced length;
// - after a failed sync (`LogWriter.dropUnsynced`) the active segment is cut back to its
//   synced length (`durableThrough`) and no further, and only when that position is in the
//   active segment;
// - compaction and checkpoints never truncate: they write new files and unlink old ones (an
//   unlinked file stays readable through an existing map).
// So a sealed segment (one the writer rolled away from, or a finished compaction output) is
// mapped whole, and the active segment at most up to its synced length, which never moves
// back. The bytes past the map (the active segment's unsynced or not yet remapped tail) are
// read with `pread`.
//
// Maps are made only when values are read through maps (`EngineOptions.mapsSegments`, the
// `.mapped` index read mode) and the file maps in place (`StorageFile.mapsInPlace`: not the
// simulated disk, whose copy would grow the process's own memory with the data). A failed
// `mmap` is not an error: that segment is read with `pread`.
extension WriterState {
    /// How far the active segment's synced length must pass its map before a commit maps it
    /// again, longer (a checkpoint maps whatever is synced). Each new map costs a system call
    /// and the page faults of touching its pages again; the bytes past the map are read with
    /// `pread` meanwhile.
    static let activeRemapStep: Int64 = 1 << 20

    /// A map of the first `length` bytes of `file`, or nil when segments are not mapped, the
    /// file cannot be mapped in place, holds no record, or the map fails.
    func segmentMapping(_ file: any StorageFile, length: Int64) -> FileMapping? {
        guard mapsSegments, file.mapsInPlace, length > Int64(Format.headerSize), let count = Int(exactly: length) else { return nil }
        return try? file.map(length: count)
    }

    /// Maps every sealed segment whole (its current size) and the active one up to its synced
    /// length: at open, after recovery.
    func mapSegmentsAtOpen() {
        guard mapsSegments else { return }
        for (number, segment) in segments.segments where number != log.segmentNumber && segment.mapping == nil {
            guard let size = try? segment.file.size(), let mapping = segmentMapping(segment.file, length: size) else { continue }
            segments = segments.adding(number, segment.file, mapping: mapping)
        }
        remapActiveSegment(force: true)
    }

    /// Reads segment `number` (sealed: nothing writes it again) through a handle of
    /// `descriptors` instead of the handle it was written with, so that its descriptor is one
    /// of a bounded set. When the file cannot be opened (no descriptor left), the handle it
    /// has is kept: nothing fails.
    func readThroughCache(_ number: UInt32, _ descriptors: DescriptorCache) {
        guard let segment = segments.segments[number], !(segment.file is CachedFile),
              let cached = try? descriptors.open(segment.file.path) else { return }
        segments = segments.adding(number, cached, mapping: segment.mapping)
    }

    /// Maps segment `sealed.segment` whole (`sealed.offset` bytes, its final length): the
    /// writer has rolled away from it, so nothing writes or truncates it again.
    func mapSealedSegment(_ sealed: LogPosition) {
        guard mapsSegments, let segment = segments.segments[sealed.segment],
              (segment.mapping?.count ?? 0) < Int(sealed.offset),
              let mapping = segmentMapping(segment.file, length: Int64(sealed.offset)) else { return }
        segments = segments.adding(sealed.segment, segment.file, mapping: mapping)
    }

    /// Maps the active segment again up to its synced length when that passed the current map
    /// by `activeRemapStep` (by any amount with `force`). Snapshots published earlier keep the
    /// shorter map; it is unmapped when the last of them goes.
    func remapActiveSegment(force: Bool) {
        guard mapsSegments else { return }
        let synced = log.durableThrough
        guard synced.segment == log.segmentNumber, let segment = segments.segments[synced.segment] else { return }
        let mapped = Int64(segment.mapping?.count ?? 0)
        let length = Int64(synced.offset)
        guard length > mapped, force || length - mapped >= Self.activeRemapStep,
              let mapping = segmentMapping(segment.file, length: length) else { return }
        segments = segments.adding(synced.segment, segment.file, mapping: mapping)
    }
}
