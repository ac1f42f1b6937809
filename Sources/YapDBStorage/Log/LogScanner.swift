/// One operation of a scanned commit, in log order.
package enum ScannedOperation: Sendable, Equatable {
    /// An object (`type == .object`) or metadata record, and where it lives.
    case value(type: RecordType, rowid: UInt64, collection: String, key: String, noMetadata: Bool, location: RecordLocation)
    case remove(collection: String, key: String)
    case removeCollection(String)
    case removeAll
    /// An extension data record (docs/format.md §3): the extension's name and its payload,
    /// checked only for its framing (the extension checks the payload).
    case extensionData(name: String, payload: [UInt8])
}

/// A valid commit found by the scan.
package struct ScannedCommit: Sendable {
    package var info: CommitInfo
    /// Position just past the commit record.
    package var end: LogPosition
    package var operations: [ScannedOperation]
}

/// What a recovery scan found and did (docs/format.md §5).
package struct ScanReport: Sendable, Equatable {
    /// Snapshot of the last valid commit (the base snapshot when there was none).
    package var lastSnapshot: UInt64
    /// The last log segment that still holds valid data, and where its valid data ends;
    /// nil when no log segment exists at or after the start.
    package var end: LogPosition?
    package var commits: Int = 0
    package var records: Int = 0
    package var bytesScanned: Int64 = 0
    /// Bytes of torn tail dropped (truncated or in removed segments).
    package var truncatedBytes: Int64 = 0
    /// Log segments removed because they held only unsynced bytes.
    package var removedSegments: [UInt32] = []
    /// Where the torn tail started, if there was one, and why it was torn.
    package var tornAt: LogPosition?
    package var tornReason: String?
}

/// The recovery scan: reads log segments from a position, yields valid commits in order, and
/// classifies damage as a torn tail (truncated) or corruption (thrown). See docs/format.md §5.
package struct LogScanner {
    package let files: DatabaseFiles
    package let fileSystem: any FileSystem
    package let uuid: [UInt8]

    package init(files: DatabaseFiles, fileSystem: any FileSystem, uuid: [UInt8]) {
        self.files = files
        self.fileSystem = fileSystem
        self.uuid = uuid
    }

    /// A segment's bytes from file offset `base` to its end (its size is the real file's,
    /// capped at 4 GiB): the whole file (`base` 0), or only what follows the replay position
    /// (an open after a checkpoint reads only the log written since, not the whole segment).
    struct Loaded {
        var number: UInt32
        /// File bytes `base ..< base + bytes.count`.
        var bytes: [UInt8]
        /// The file offset of `bytes[0]`: 0, or a position past the header.
        var base: Int = 0
        var header: Result<FileHeader, StorageError>
        /// Why the header was refused, when it was: the recovery decision reads this, never
        /// the error's wording.
        var headerProblem: HeaderProblem?
    }

    /// Why a segment's header was refused.
    enum HeaderProblem {
        /// The bytes fail the header's own checks (magic, version, checksum): damage, which a
        /// torn tail can explain.
        case damaged
        /// A valid header that names another database or another segment number: a file
        /// put there by someone else, never explained by a torn write.
        case foreign
        /// A valid header of the wrong kind of file.
        case wrongKind
    }

    /// Reads segment `number` from file offset `from` (the header is always read; bytes
    /// between it and `from` are not, when `from` is past it) and checks its header.
    func load(_ number: UInt32, from: Int = 0) throws(StorageError) -> Loaded {
        let path = files.segmentPath(number)
        let bytes: [UInt8]
        var headerBytes: [UInt8]
        var base = 0
        do throws(IOFailure) {
            let file = try fileSystem.open(path, mode: .readOnly)
            defer { file.close() }
            let size = try file.size()
            guard size <= Int64(UInt32.max) else {
                throw IOFailure(errno: 27 /* EFBIG */, operation: "segment over 4 GiB", path: path)
            }
            if from > Format.headerSize && Int64(from) <= size {
                base = from
                headerBytes = try file.readExactly(Format.headerSize, at: 0)
                bytes = try file.readExactly(Int(size) - from, at: Int64(from))
            } else {
                bytes = try file.readExactly(Int(size), at: 0)
                headerBytes = bytes
            }
        } catch {
            throw .io(error)
        }
        let name = Paths.fileName(of: path)
        let h: FileHeader
        do throws(StorageError) {
            h = try FileHeader.decode(headerBytes, path: path)
        } catch {
            return Loaded(number: number, bytes: bytes, base: base, header: .failure(error), headerProblem: .damaged)
        }
        func refuse(_ problem: HeaderProblem, _ offset: Int, _ reason: String) -> Loaded {
            Loaded(number: number, bytes: bytes, base: base, header: .failure(.corrupted(offset: Int64(offset), reason: "\(name): \(reason)")),
                   headerProblem: problem)
        }
        guard h.uuid == uuid else { return refuse(.foreign, Format.headerUUIDOffset, "belongs to another database") }
        guard h.fileNumber == number else { return refuse(.foreign, Format.headerFileNumberOffset, "header names segment \(h.fileNumber)") }
        guard h.kind == .logSegment || h.kind == .compactionSegment else { return refuse(.wrongKind, Format.headerKindOffset, "not a segment") }
        return Loaded(number: number, bytes: bytes, base: base, header: .success(h), headerProblem: nil)
    }

    /// Scans the log segments `segments` (sorted) from `start`, after a state whose last
    /// snapshot is `baseSnapshot`, calling `apply` for each valid commit in order.
    ///
    /// With `repair`, a torn tail is truncated and segments holding only torn bytes are
    /// removed (never those in `protected`, which a checkpoint references); without it the
    /// scan only reports. Throws `corrupted` when damage is followed by a commit that proves
    /// the damaged bytes had been synced, and `io` when a file cannot be read.
    package func scan(
        segments: [UInt32], from start: LogPosition, baseSnapshot: UInt64, protected: Set<UInt32> = [],
        repair: Bool, apply: (ScannedCommit) throws(StorageError) -> Void
    ) throws(StorageError) -> ScanReport {
        var report = ScanReport(lastSnapshot: baseSnapshot, end: nil)
        let inRange = segments.filter { $0 >= start.segment }
        var index = 0
        while index < inRange.count {
            let number = inRange[index]
            let loaded = try load(number, from: number == start.segment ? Int(start.offset) : 0)
            report.bytesScanned += Int64(loaded.bytes.count)
            let header: FileHeader
            switch loaded.header {
            case .success(let h): header = h
            case .failure(let error):
                if protected.contains(number) { throw error }
                if loaded.headerProblem == .foreign { throw error }
                try handleDamage(at: LogPosition(segment: number, offset: 0), reason: "segment header: \(error)",
                                 current: loaded, later: Array(inRange[(index + 1)...]), protected: protected,
                                 repair: repair, report: &report)
                return report
            }
            if header.kind == .compactionSegment { index += 1; continue }
            let startOffset = number == start.segment ? max(Int(start.offset), Format.headerSize) : Format.headerSize
            report.end = LogPosition(segment: number, offset: UInt32(startOffset))
            if let damage = try scanSegment(loaded, from: startOffset, report: &report, apply: apply) {
                try handleDamage(at: damage.position, reason: damage.reason, current: loaded,
                                 later: Array(inRange[(index + 1)...]), protected: protected,
                                 repair: repair, report: &report)
                return report
            }
            index += 1
        }
        return report
    }

    struct Damage {
        var position: LogPosition
        var reason: String
    }

    /// Applies the valid commits of one segment; returns the first damage, if any.
    func scanSegment(_ loaded: Loaded, from startOffset: Int, report: inout ScanReport,
                     apply: (ScannedCommit) throws(StorageError) -> Void) throws(StorageError) -> Damage? {
        let number = loaded.number
        // Positions below are indexes into `loaded.bytes`; `base` makes them file offsets.
        let base = loaded.base
        var pending: [ScannedOperation] = []
        var pendingStart = startOffset - base
        var position = startOffset - base
        var damage: Damage?
        var commits: [ScannedCommit] = []
        loaded.bytes.withUnsafeBytes { raw in
            if position > raw.count || position < 0 {
                damage = Damage(position: LogPosition(segment: number, offset: UInt32(base + raw.count)), reason: "segment shorter than the replay position")
                return
            }
            while position < raw.count {
                let frame: RecordCodec.Frame
                do throws(RecordCodec.FrameError) { frame = try RecordCodec.frame(in: raw, at: position) } catch {
                    damage = Damage(position: LogPosition(segment: number, offset: UInt32(base + pendingStart)), reason: "record at \(base + position): \(error)")
                    return
                }
                let location = RecordLocation(segment: number, offset: UInt32(base + position), length: UInt32(frame.totalLength))
                do throws(RecordCodec.FrameError) {
                    switch frame.type {
                    case .object, .metadata:
                        let record = try RecordCodec.valueRecord(frame, in: raw)
                        pending.append(.value(type: frame.type, rowid: record.rowid, collection: record.collection, key: record.key,
                                              noMetadata: record.noMetadata, location: location))
                    case .remove:
                        let (collection, key) = try RecordCodec.removeRecord(frame, in: raw)
                        pending.append(.remove(collection: collection, key: key))
                    case .removeCollection:
                        pending.append(.removeCollection(try RecordCodec.removeCollectionRecord(frame, in: raw)))
                    case .removeAll:
                        guard frame.payloadLength == 0 else { throw .invalid("remove-all record with a payload") }
                        pending.append(.removeAll)
                    case .extensionData:
                        let (name, payload) = try RecordCodec.extensionDataRecord(frame, in: raw)
                        pending.append(.extensionData(name: name, payload: payload))
                    case .commit:
                        let info = RecordCodec.commitRecord(frame, in: raw)
                        let recordsChecksum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[pendingStart..<position]))
                        let expectedSnapshot = (commits.last?.info.snapshot ?? report.lastSnapshot) + 1
                        guard info.recordCount == UInt32(pending.count) else { throw .invalid("commit counts \(info.recordCount) records, found \(pending.count)") }
                        guard info.recordsLength == UInt64(position - pendingStart) else { throw .invalid("commit length mismatch") }
                        guard info.recordsChecksum == recordsChecksum else { throw .invalid("commit checksum mismatch") }
                        guard info.snapshot == expectedSnapshot else { throw .invalid("commit snapshot \(info.snapshot), expected \(expectedSnapshot)") }
                        commits.append(ScannedCommit(info: info, end: LogPosition(segment: number, offset: UInt32(base + position + frame.totalLength)), operations: pending))
                        pending.removeAll(keepingCapacity: true)
                        pendingStart = position + frame.totalLength
                    case .checkpointInfo, .checkpointEnd, .checkpointSegmentUsage, .checkpointIndexRoot,
                         .checkpointPendingExtension:
                        throw .invalid("checkpoint record in a log segment")
                    }
                } catch {
                    damage = Damage(position: LogPosition(segment: number, offset: UInt32(base + pendingStart)), reason: "record at \(base + position): \(error)")
                    return
                }
                position += frame.totalLength
            }
            if !pending.isEmpty || pendingStart != position {
                damage = Damage(position: LogPosition(segment: number, offset: UInt32(base + pendingStart)), reason: "records without a commit record")
            }
        }
        for commit in commits {
            try apply(commit)
            report.commits += 1
            report.records += commit.operations.count
            report.lastSnapshot = commit.info.snapshot
            report.end = commit.end
        }
        return damage
    }

    /// Damage at `position`: corruption if a later valid commit says the bytes there were
    /// synced, else a torn tail to cut off.
    func handleDamage(at position: LogPosition, reason: String, current: Loaded, later: [UInt32], protected: Set<UInt32>,
                      repair: Bool, report: inout ScanReport) throws(StorageError) {
        let name = Paths.fileName(of: files.segmentPath(position.segment))
        if let proof = Self.commitRecords(in: current.bytes, from: Int(position.offset) + 1 - current.base).first(where: { $0.info.durableThrough > position }) {
            throw .corrupted(offset: Int64(position.offset),
                             reason: "\(name): \(reason); the commit of snapshot \(proof.info.snapshot) at offset \(current.base + proof.offset) was written after these bytes were synced")
        }
        var tornSegments: [Loaded] = []
        for number in later where !protected.contains(number) {
            let loaded = try load(number)
            if case .success(let h) = loaded.header, h.kind == .compactionSegment { continue }
            if let proof = Self.commitRecords(in: loaded.bytes, from: 0).first(where: { $0.info.durableThrough > position }) {
                throw .corrupted(offset: Int64(position.offset),
                                 reason: "\(name): \(reason); the commit of snapshot \(proof.info.snapshot) in segment \(number) was written after these bytes were synced")
            }
            tornSegments.append(loaded)
        }
        report.tornAt = position
        report.tornReason = reason
        let tornHere = Int64(current.base + current.bytes.count) - Int64(position.offset)
        report.truncatedBytes += max(0, tornHere)
        for segment in tornSegments {
            report.truncatedBytes += Int64(segment.bytes.count)
            report.removedSegments.append(segment.number)
        }
        if position.offset < UInt32(Format.headerSize) {
            report.removedSegments.insert(position.segment, at: 0)
            if report.end?.segment == position.segment { report.end = nil }
        }
        guard repair else { return }
        do throws(IOFailure) {
            if position.offset >= UInt32(Format.headerSize) {
                let file = try fileSystem.open(files.segmentPath(position.segment), mode: .readWrite)
                defer { file.close() }
                try file.truncate(to: Int64(position.offset))
                try file.sync()
            }
            for number in report.removedSegments { try fileSystem.remove(files.segmentPath(number)) }
            if !report.removedSegments.isEmpty { try fileSystem.syncDirectory(files.directory) }
        } catch {
            throw .io(error)
        }
    }

    /// Every byte offset from `start` where a valid commit record sits (used only after damage).
    package static func commitRecords(in bytes: [UInt8], from start: Int) -> [(offset: Int, info: CommitInfo)] {
        var found: [(Int, CommitInfo)] = []
        let size = RecordCodec.commitRecordSize
        bytes.withUnsafeBytes { raw in
            var offset = max(0, start)
            while offset + size <= raw.count {
                if raw[offset + Format.recordTypeOffset] == RecordType.commit.rawValue, raw[offset + Format.recordFlagsOffset] == 0,
                   let frame = try? RecordCodec.frame(in: raw, at: offset), frame.type == .commit {
                    found.append((offset, RecordCodec.commitRecord(frame, in: raw)))
                }
                offset += 1
            }
        }
        return found
    }
}
