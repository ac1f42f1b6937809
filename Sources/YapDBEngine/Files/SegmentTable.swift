import Synchronization
import YapDBStorage
import YapDBIndex

/// Read handles of every segment a snapshot can reach, by segment number, each with the memory
/// map it is read through, if any. Immutable: a roll, a compaction or a longer map of the
/// active segment makes a new table. A retired segment's handle closes, and its map is
/// unmapped, when the last snapshot holding it goes away (its file may already be unlinked;
/// open handles and existing maps still read).
///
/// Reads: a record that lies wholly inside its segment's map is read in place — bounds,
/// framing and checksum checked on every read, no system call, no copy of an uncompressed
/// value (`SegmentReader.withValue(at:inMapped:path:_:)`); any other record (a segment with no
/// map, the active segment's tail past its map) is read with `pread` as before. Which bytes may
/// be mapped is the writer's rule (`WriterState.refreshSegmentMaps`, Engine+SegmentMaps.swift):
/// only bytes the engine never truncates.
///
/// Threading: immutable; any thread.
package final class SegmentTable: Sendable {
    /// One readable segment: its handle, and a map of a prefix of it that never shrinks
    /// (nil: read with `pread` only).
    package struct Segment: Sendable {
        package let file: any StorageFile
        package let mapping: FileMapping?
        /// How its records are sealed (an encrypted database's segment: read with `pread` and
        /// opened, never through a map of ciphertext); nil: plain.
        package let sealing: RecordSealing?

        package init(file: any StorageFile, mapping: FileMapping? = nil, sealing: RecordSealing? = nil) {
            precondition(sealing == nil || mapping == nil, "SegmentTable: an encrypted segment is never mapped")
            self.file = file
            self.mapping = mapping
            self.sealing = sealing
        }
    }

    package let segments: [UInt32: Segment]
    /// The same segments by number minus `lowest`, for reads (an array index instead of a
    /// hash per value read); empty when the numbers are too sparse for it, then reads use
    /// `segments`. Segment numbers grow by one per roll and compaction retires old ones, so
    /// the numbers a table holds are close together.
    private let dense: [Segment?]
    /// The maps of `dense` as plain values: the lookup of every value read, with no reference
    /// count touched (every reader of a segment would otherwise retain and release its one
    /// shared map object, a cache line all threads write).
    private let denseMappings: [MappedRegion?]
    private let lowest: UInt32

    package init(segments: [UInt32: Segment]) {
        self.segments = segments
        let low = segments.keys.min() ?? 0, high = segments.keys.max() ?? 0
        let span = Int(high - low) + 1
        if !segments.isEmpty, span <= 4 * segments.count + 64 {
            var dense = [Segment?](repeating: nil, count: span)
            for (number, segment) in segments { dense[Int(number - low)] = segment }
            self.dense = dense
            denseMappings = dense.map { $0?.mapping.map(MappedRegion.init) }
        } else {
            self.dense = []
            denseMappings = []
        }
        lowest = low
    }

    /// A table of `files`, none of them mapped.
    package convenience init(files: [UInt32: any StorageFile]) {
        self.init(segments: files.mapValues { Segment(file: $0) })
    }

    /// The handles by segment number.
    package var files: [UInt32: any StorageFile] { segments.mapValues(\.file) }

    /// The segment numbers this table reaches.
    package var numbers: Dictionary<UInt32, Segment>.Keys { segments.keys }

    /// The bytes of segment `number` read through a map (from the file's start), or nil when
    /// it is read with `pread` only or is not in the table.
    package func mappedLength(_ number: UInt32) -> Int? { segments[number]?.mapping?.count }

    /// A table with `file` added (or replaced) as segment `number`, read through `mapping`.
    /// `sealing` is the segment's in an encrypted database; nil keeps the sealing the table
    /// already has for `number` (a new handle or map of the same file).
    package func adding(_ number: UInt32, _ file: any StorageFile, mapping: FileMapping? = nil, sealing: RecordSealing? = nil) -> SegmentTable {
        var copy = segments
        copy[number] = Segment(file: file, mapping: mapping, sealing: sealing ?? segments[number]?.sealing)
        return SegmentTable(segments: copy)
    }

    /// A table without the given segments.
    package func removing(_ numbers: some Sequence<UInt32>) -> SegmentTable {
        var copy = segments
        for n in numbers { copy[n] = nil }
        return SegmentTable(segments: copy)
    }

    /// The verified record at `location`.
    package func value(at location: ValueLocation) throws(StorageError) -> (RecordCodec.ValueRecord, [UInt8]?) {
        let segment = try self.segment(location)
        if let mapping = segment.mapping, Self.covers(mapping, location) {
            return try withExtendedLifetime(mapping) { () throws(StorageError) in
                try SegmentReader.value(at: RecordLocation(location), inMapped: mapping.bytes, path: segment.file.path)
            }
        }
        return try SegmentReader.value(at: RecordLocation(location), in: segment.file, sealing: segment.sealing)
    }

    /// Calls `body` with the verified value at `location` (nil for a nil-metadata record),
    /// valid only during the call: in place in the segment's map when the record lies inside
    /// it, else one `pread`; no strings decoded, no intermediate arrays
    /// (`SegmentReader.withValue`).
    package func withValue<R>(at location: ValueLocation, owner: ValueOwner, _ body: (UnsafeRawBufferPointer?) throws(StorageError) -> R) throws(StorageError) -> R {
        var result: R?
        try readValue(at: location, owner: owner) { (bytes) throws(StorageError) in result = try body(bytes) }
        // `readValue` calls its body once when it does not throw.
        return result!
    }

    /// `withValue(at:_:)` without a result: the form for callers in other modules, where a
    /// generic call runs unspecialized and moves its result through value witnesses (more
    /// instructions than the read itself on the secondary index's range walk).
    ///
    /// `owner` is the row (and which of its values) the location was found for: a record of
    /// any other is `corrupted` (`ValueOwner`).
    package func readValue(at location: ValueLocation, owner: ValueOwner, _ body: (UnsafeRawBufferPointer?) throws(StorageError) -> Void) throws(StorageError) {
        if let region = region(covering: location) { return try region.readValue(at: location, owner: owner, body) }
        let segment = try self.segment(location)
        if let mapping = segment.mapping, Self.covers(mapping, location) { return try Self.readValue(at: location, in: mapping, owner: owner, body) }
        try SegmentReader.withValue(at: RecordLocation(location), in: segment.file, sealing: segment.sealing, owner: owner, body)
    }

    /// `readValue(at:owner:_:)` for a record inside `mapping`, kept alive until the read is done.
    private static func readValue(at location: ValueLocation, in mapping: FileMapping, owner: ValueOwner,
                                  _ body: (UnsafeRawBufferPointer?) throws(StorageError) -> Void) throws(StorageError) {
        try SegmentReader.withValue(at: RecordLocation(location), inMapped: mapping.bytes, path: mapping.path, owner: owner, body)
        withExtendedLifetime(mapping) {}
    }

    /// Starts loading the record at `location` into the CPU caches when it lies in its
    /// segment's map, for a read soon after. A hint: any other record is left alone.
    package func prefetch(_ location: ValueLocation) {
        if let region = region(covering: location) { return region.prefetch(location) }
        guard let mapping = (try? self.segment(location))?.mapping, Self.covers(mapping, location) else { return }
        mapping.prefetch(offset: Int(location.offset), length: Int(location.length))
    }

    /// The map holding the record at `location`, found in `denseMappings`; nil when the
    /// table has no dense index, the segment is not mapped or the record ends past its map
    /// (callers then look the segment up with `segment(_:)`).
    @inline(__always)
    private func region(covering location: ValueLocation) -> MappedRegion? {
        let slot = Int(location.segment) &- Int(lowest)
        guard slot >= 0, slot < denseMappings.count, let region = denseMappings[slot],
              Int(location.offset) + Int(location.length) <= region.bytes.count, !region.isRevoked else { return nil }
        return region
    }

    /// The map object holding the record at `location` (as `region(covering:)`), for the
    /// rarer reads that want it.
    private func mapping(covering location: ValueLocation) -> FileMapping? {
        region(covering: location)?.owner.takeUnretainedValue()
    }

    /// Calls `body` with the object of row `rowid` at `location` — a location an index keeps
    /// beside the row, which compaction may have moved since — and returns true; returns
    /// false without calling `body` when this table lacks the segment, the record there is not
    /// an object record of that row, or it cannot be read. The caller then finds the row's
    /// object through the key directory, whose read reports any damage.
    package func readObject(at location: ValueLocation, ofRowid rowid: UInt64, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        // An object record always has a value; a nil one (a metadata record) was refused.
        let read: (UnsafeRawBufferPointer?) -> Void = { if let bytes = $0 { body(bytes) } }
        do throws(StorageError) {
            let segment = present(location)
            if let mapping = mapping(covering: location) ?? segment?.mapping.flatMap({ Self.covers($0, location) ? $0 : nil }) {
                defer { withExtendedLifetime(mapping) {} }
                return try SegmentReader.withObject(at: RecordLocation(location), inMapped: mapping.bytes, path: mapping.path, ofRowid: rowid, read)
            }
            guard let segment else { return false }
            return try SegmentReader.withObject(at: RecordLocation(location), in: segment.file, sealing: segment.sealing, ofRowid: rowid, read)
        } catch {
            return false
        }
    }

    /// Whether this table has the segment `location` names (its record is not checked).
    package func holdsSegment(of location: ValueLocation) -> Bool { present(location) != nil }

    /// The segment `location` names, or `corrupted` when this table does not have it.
    private func segment(_ location: ValueLocation) throws(StorageError) -> Segment {
        guard let segment = present(location) else {
            throw .corrupted(offset: Int64(location.offset), reason: "segment \(location.segment) is referenced but missing")
        }
        return segment
    }

    /// The segment `location` names, or nil when this table does not have it.
    @inline(__always)
    private func present(_ location: ValueLocation) -> Segment? {
        if !dense.isEmpty {
            let slot = Int(location.segment) &- Int(lowest)
            if slot >= 0, slot < dense.count, let segment = dense[slot] { return segment }
        }
        return segments[location.segment]
    }

    /// Whether the record at `location` ends inside `mapping` (32-bit fields: the sum cannot
    /// overflow an `Int`). A record past it is read with `pread`: the active segment's tail,
    /// or damage, which the `pread` path reports as a record running past the end.
    ///
    /// A revoked map (its file shrank: `Engine.confirmMappedFiles`) covers nothing, so the
    /// record is read with `pread`, which reports missing bytes as `corrupted`.
    private static func covers(_ mapping: FileMapping, _ location: ValueLocation) -> Bool {
        Int(location.offset) + Int(location.length) <= mapping.count && !mapping.isRevoked
    }
}

extension RecordLocation {
    init(_ location: ValueLocation) {
        self.init(segment: location.segment, offset: location.offset, length: location.length)
    }
}

extension ValueLocation {
    init(_ location: RecordLocation) {
        self.init(segment: location.segment, offset: location.offset, length: location.length)
    }
}

/// A segment's map as plain values: its bytes and the map object, not retained. Valid while
/// the `SegmentTable` holding it lives, since the table's `segments` holds the map object
/// (a reader holds the table through its snapshot for as long as it reads).
///
/// Sendable (`@unchecked`, no lock needed): both fields are `let`s set once, and the bytes are
/// only ever read, like `FileMapping`'s own (which is Sendable for the same reason).
private struct MappedRegion: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer
    let owner: Unmanaged<FileMapping>
    /// The map's revocation flag (`FileMapping.revocationFlag`), read without touching `owner`.
    let revoked: UnsafePointer<Atomic<Bool>>

    init(_ mapping: FileMapping) {
        bytes = mapping.bytes
        owner = Unmanaged.passUnretained(mapping)
        revoked = mapping.revocationFlag
    }

    /// Whether the file shrank under the map: its bytes must not be touched.
    @inline(__always)
    var isRevoked: Bool { revoked[0].load(ordering: .relaxed) }

    /// `SegmentReader.withValue(at:inMapped:path:_:)` on these bytes, the map borrowed for
    /// its path (named in errors) without a reference count.
    @inline(__always)
    func readValue(at location: ValueLocation, owner row: ValueOwner, _ body: (UnsafeRawBufferPointer?) throws(StorageError) -> Void) throws(StorageError) {
        var failure: StorageError?
        owner._withUnsafeGuaranteedRef { mapping in
            do throws(StorageError) {
                try SegmentReader.withValue(at: RecordLocation(location), inMapped: bytes, path: mapping.path, owner: row, body)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Starts loading the record at `location` into the CPU caches (a hint).
    @inline(__always)
    func prefetch(_ location: ValueLocation) {
        owner._withUnsafeGuaranteedRef { $0.prefetch(offset: Int(location.offset), length: Int(location.length)) }
    }
}
