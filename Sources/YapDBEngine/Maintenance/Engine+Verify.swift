#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import YapDBStorage
import YapDBIndex

/// What `verify()` checked and found.
package struct IntegrityReport: Sendable, Equatable {
    package var problems: [String] = []
    package var commitsChecked = 0
    package var recordsChecked = 0
    package var bytesChecked: Int64 = 0
    package var isValid: Bool { problems.isEmpty }
}

extension Engine {
    /// Checks the database against itself (DESIGN.md §6 promise 4): loads the checkpoint and
    /// replays the log after it into a fresh key directory, which must equal the live one;
    /// checks commit continuity and every checksum on the way; reads and checks every record
    /// the key directory points to. Runs under the writer lock (writes wait; readers do not).
    /// Throws only when it cannot run at all (`closed`); every problem found is in the report.
    ///
    /// - Parameter progress: called on the calling thread, during the walk, with how far it got
    ///   (every `VerifyProgress.stride` pages, commits or records, and once at the end, when
    ///   `recordsRead == recordsTotal`); every figure only grows. It runs under the writer
    ///   lock: it must not use the engine.
    package func verify(progress: ((VerifyProgress) -> Void)? = nil) throws(EngineError) -> IntegrityReport {
        let meter = VerifyMeter(progress)
        defer { meter.finish() }
        return try engineBoundary { () throws(StorageError) in try verify(meter) }
    }

    private func verify(_ meter: VerifyMeter) throws(StorageError) -> IntegrityReport {
        // Multi-process support: no other process commits meanwhile, and the state compared
        // with the log is caught up with theirs.
        if let sharing { try sharing.acquire() }
        defer { sharing?.release() }
        return try maintenance.withLock { (_: inout Void) throws(StorageError) -> IntegrityReport in
            try writer.withLock { (state: inout WriterState) throws(StorageError) -> IntegrityReport in
                if state.closed { throw .closed }
                if let sharing { _ = try catchUp(state, sharing) }
                var report = IntegrityReport()
                // Every page read below goes through the meter (counted as walked).
                let source = meter.counting(index.source())
                let live = state.keydir.replacingSource(source)
                // 1. Every page of the live directory: checksums, order, counts, depth, and
                //    the two trees agreeing row by row.
                do throws(PageError) { try live.validate() } catch {
                    report.problems.append("index: \(StorageError(error))")
                }
                // 1b. Every page of the extension trees (`PagedExtensionState`).
                for name in state.extensions.keys.sorted() {
                    guard let paged = state.extensions[name] as? any PagedExtensionState else { continue }
                    do throws(PageError) { try paged.validatePages() } catch {
                        report.problems.append("extension \(name): \(StorageError(error))")
                    }
                }
                // 2. The directory the newest checkpoint names, with the log after it replayed,
                //    must equal the live one.
                var replayer = Replayer(keydir: Keydir(format: index.format, source: source))
                var start = LogPosition(segment: 1, offset: UInt32(Format.headerSize))
                var base: UInt64 = 0
                var listing = DatabaseFiles.Listing()
                do throws(IOFailure) { listing = try files.list(fileSystem) } catch {
                    report.problems.append("cannot list the database's files: \(error)")
                    return report
                }
                start.segment = listing.segments.first ?? 1
                if state.checkpointNumber > 0 {
                    do throws(StorageError) {
                        let loaded = try Self.loadCheckpoint(state.checkpointNumber, files: files, fs: fileSystem, uuid: uuid, cipher: cipher)
                        let keydir = try Self.keydir(of: loaded.root, format: index.format, source: source)
                        replayer = Replayer(keydir: keydir, usage: loaded.usage, nextRowid: max(loaded.info.nextRowid, 1))
                        start = loaded.info.replay
                        base = loaded.info.snapshot
                    } catch {
                        report.problems.append("checkpoint \(state.checkpointNumber): \(error)")
                        return report
                    }
                }
                var scanner = LogScanner(files: files, fileSystem: fileSystem, uuid: uuid)
                scanner.cipher = state.log.cipher
                // Shared by processes: what a writer that died left past the published end
                // (which this state has reached) is not part of the database.
                if sharing != nil { scanner.limit = LogPosition(segment: state.log.segmentNumber, offset: state.log.end) }
                do throws(StorageError) {
                    let scan = try scanner.scan(segments: listing.segments, from: start, baseSnapshot: base, repair: false) { (commit) throws(StorageError) in
                        try replayer.apply(commit)
                        meter.commitReplayed()
                    }
                    report.commitsChecked = scan.commits
                    report.bytesChecked += scan.bytesScanned
                    if let torn = scan.tornAt { report.problems.append("log damaged at segment \(torn.segment) offset \(torn.offset): \(scan.tornReason ?? "")") }
                    if scan.lastSnapshot != state.snapshotNumber {
                        report.problems.append("the log ends at snapshot \(scan.lastSnapshot), the database is at \(state.snapshotNumber)")
                    }
                } catch {
                    report.problems.append("log: \(error)")
                }
                compare(rebuilt: replayer.keydir, live: live, into: &report)
                if replayer.nextRowid > state.nextRowid {
                    report.problems.append("next row id \(state.nextRowid) is below a row id in the log (\(replayer.nextRowid - 1))")
                }
                checkRecords(live, table: state.segments, meter: meter, into: &report)
                return report
            }
        }
    }

    func compare(rebuilt: Keydir, live: Keydir, into report: inout IntegrityReport) {
        if rebuilt.count != live.count {
            report.problems.append("the index has \(live.count) rows, the log rebuilds \(rebuilt.count)")
        }
        var mismatches = 0
        do {
            try live.forEachRow { collection, key, entry in
                let other = try rebuilt.entry(collection: collection, key: key)
                if other?.rowid != entry.rowid || other.map({ Self.sameValues($0, entry) }) != true {
                    mismatches += 1
                    if mismatches <= 10 { report.problems.append("\(collection)/\(key): index and log disagree") }
                }
                return true
            }
        } catch {
            report.problems.append("comparing the index with the log: \(error)")
        }
        if mismatches > 10 { report.problems.append("… \(mismatches - 10) more rows disagree") }
    }

    /// Two entries hold the same values (a compaction may have moved them: compare record
    /// lengths, not places, when segments differ).
    static func sameValues(_ a: KeydirEntry, _ b: KeydirEntry) -> Bool {
        a.object.length == b.object.length && a.metadata?.length == b.metadata?.length
    }

    /// Reads every record the key directory points to and checks it: framing, checksum, the
    /// length the index gives, a value record of the row's row id, collection and key, and a
    /// compressed value that decompresses. The records are visited in file order, each segment
    /// read sequentially through a `SequentialRecordReader` (a few large reads instead of one
    /// `pread` per record).
    func checkRecords(_ keydir: Keydir, table: SegmentTable, meter: VerifyMeter, into report: inout IntegrityReport) {
        struct Check {
            var location: ValueLocation
            var collection: String
            var key: String
            var rowid: UInt64
        }
        var checks: [Check] = []
        checks.reserveCapacity(keydir.count)
        do {
            try keydir.forEachRow { collection, key, entry in
                checks.append(Check(location: entry.object, collection: collection, key: key, rowid: entry.rowid))
                if let m = entry.metadata { checks.append(Check(location: m, collection: collection, key: key, rowid: entry.rowid)) }
                return true
            }
        } catch {
            report.problems.append("reading the index: \(error)")
        }
        checks.sort { ($0.location.segment, $0.location.offset) < ($1.location.segment, $1.location.offset) }
        meter.recordsToRead(checks.count)
        var failures = 0
        var reader: SequentialRecordReader?
        var readerSegment: UInt32?
        for check in checks {
            defer { meter.recordRead() }
            let location = check.location
            do throws(StorageError) {
                if readerSegment != location.segment {
                    guard let segment = table.segments[location.segment] else {
                        throw .corrupted(offset: Int64(location.offset), reason: "segment \(location.segment) is referenced but missing")
                    }
                    reader = SequentialRecordReader(file: segment.file, sealing: segment.sealing)
                    readerSegment = location.segment
                }
                let matches = try reader!.withRecord(at: RecordLocation(location)) { (raw, frame) throws(StorageError) -> Bool in
                    do throws(RecordCodec.FrameError) {
                        let parts = try SegmentReader.valueParts(frame, in: raw)
                        if frame.flags & Format.flagCompressed != 0, let value = parts.value {
                            _ = try RecordCodec.decompress(value, maxRawLength: Format.maxValueSize, what: "compressed value")
                        }
                        let sameCollection = try Self.sameName(parts.collection, check.collection)
                        let sameKey = try Self.sameName(parts.key, check.key)
                        return parts.rowid == check.rowid && sameCollection && sameKey
                    } catch {
                        throw .corrupted(offset: Int64(location.offset), reason: "\(Paths.fileName(of: reader!.file.path)): \(error)")
                    }
                }
                report.recordsChecked += 1
                report.bytesChecked += Int64(location.length)
                if !matches {
                    failures += 1
                    if failures <= 10 {
                        report.problems.append("\(check.collection)/\(check.key): record at \(location.segment):\(location.offset) belongs to another row")
                    }
                }
            } catch {
                failures += 1
                if failures <= 10 { report.problems.append("\(check.collection)/\(check.key): \(error)") }
            }
        }
        if failures > 10 { report.problems.append("… \(failures - 10) more bad records") }
    }

    /// Whether a record's name bytes spell `name`: equal bytes, or (rarely) other valid UTF-8
    /// that `String` comparison finds canonically equal, as a decoded record would compare.
    /// Throws `.invalid` for bytes that are not valid UTF-8.
    static func sameName(_ bytes: UnsafeRawBufferPointer, _ name: String) throws(RecordCodec.FrameError) -> Bool {
        var name = name
        let equalBytes = name.withUTF8 { utf8 in
            utf8.count == bytes.count && (utf8.isEmpty || memcmp(utf8.baseAddress!, bytes.baseAddress!, utf8.count) == 0)
        }
        if equalBytes { return true }
        guard let decoded = String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) else {
            throw .invalid("value record: invalid UTF-8")
        }
        return decoded == name
    }
}
