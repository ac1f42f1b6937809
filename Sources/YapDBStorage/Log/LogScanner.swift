#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import YapDBCrypto

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
    /// The most segment bytes the scan held at once (the window, or one larger record).
    package var largestWindow = 0
}

/// The recovery scan: reads log segments from a position, yields valid commits in order, and
/// classifies damage as a torn tail (truncated) or corruption (thrown). See docs/format.md §5.
package struct LogScanner {
    package let files: DatabaseFiles
    package let fileSystem: any FileSystem
    package let uuid: [UInt8]

    /// The most bytes of a segment the scan holds at once, besides one record larger than
    /// that whose payload it needs (an extension data record; value records larger than the
    /// window are checked in window-sized pieces).
    package var windowSize = LogScanner.defaultWindowSize
    /// Where the scan stops, when set: no byte at or after it is read (a process catching up
    /// with another's commits reads only up to the published end, never a commit being written).
    package var limit: LogPosition?
    /// The keys of an encrypted database: its segments must be encrypted, and their records
    /// are opened before they are read (docs/format.md §12). nil: segments must be plain.
    package var cipher: DatabaseCipher?
    package static let defaultWindowSize = 1 << 20

    package init(files: DatabaseFiles, fileSystem: any FileSystem, uuid: [UInt8]) {
        self.files = files
        self.fileSystem = fileSystem
        self.uuid = uuid
    }

    /// A segment opened for the scan: its header, checked, and a window onto its bytes.
    struct Loaded {
        var number: UInt32
        /// The segment's bytes, read through a bounded window.
        var window: SegmentWindow
        var header: Result<FileHeader, StorageError>
        /// Why the header was refused, when it was: the recovery decision reads this, never
        /// the error's wording.
        var headerProblem: HeaderProblem?
        /// How its records are sealed (encrypted databases).
        var sealing: RecordSealing?
        /// The file's size.
        var size: Int { window.size }
        /// Where its first record starts.
        var firstRecord: Int { Format.firstRecordOffset(encrypted: sealing != nil) }
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

    /// Opens segment `number` and checks its header; its other bytes are read later, through
    /// a window of `windowSize` bytes (never the whole segment at once).
    func load(_ number: UInt32) throws(StorageError) -> Loaded {
        let path = files.segmentPath(number)
        let window: SegmentWindow
        var headerBytes: [UInt8]
        do throws(IOFailure) {
            let file = try fileSystem.open(path, mode: .readOnly)
            let size = try file.size()
            guard size <= Int64(UInt32.max) else {
                file.close()
                throw IOFailure(errno: 27 /* EFBIG */, operation: "segment over 4 GiB", path: path)
            }
            window = SegmentWindow(file: file, size: Int(size), windowSize: windowSize)
            headerBytes = Array(try window.bytes(at: 0, count: min(Format.headerSize, Int(size))))
        } catch {
            throw .io(error)
        }
        let name = Paths.fileName(of: path)
        let h: FileHeader
        do throws(StorageError) {
            h = try FileHeader.decode(headerBytes, path: path)
        } catch {
            return Loaded(number: number, window: window, header: .failure(error), headerProblem: .damaged)
        }
        func refuse(_ problem: HeaderProblem, _ offset: Int, _ reason: String) -> Loaded {
            Loaded(number: number, window: window, header: .failure(.corrupted(offset: Int64(offset), reason: "\(name): \(reason)")),
                   headerProblem: problem)
        }
        guard h.uuid == uuid else { return refuse(.foreign, Format.headerUUIDOffset, "belongs to another database") }
        guard h.fileNumber == number else { return refuse(.foreign, Format.headerFileNumberOffset, "header names segment \(h.fileNumber)") }
        guard h.kind == .logSegment || h.kind == .compactionSegment else { return refuse(.wrongKind, Format.headerKindOffset, "not a segment") }
        guard h.encrypted == (cipher != nil) else {
            return refuse(.foreign, Format.headerVersionOffset, h.encrypted ? "an encrypted segment in a plain database" : "a plain segment in an encrypted database")
        }
        guard let cipher else { return Loaded(number: number, window: window, header: .success(h), headerProblem: nil) }
        // The cipher header was written with the file header: a short or damaged one is a
        // torn creation or damage, as a damaged file header is.
        let cipherEnd = Format.cipherHeaderOffset + Format.cipherHeaderSize
        do throws(StorageError) {
            guard window.size >= cipherEnd else {
                throw .corrupted(offset: Int64(Format.cipherHeaderOffset), reason: "\(name): cipher header is short")
            }
            let bytes: [UInt8]
            do { bytes = Array(try window.bytes(at: Format.cipherHeaderOffset, count: Format.cipherHeaderSize)) } catch { throw .io(error) }
            let sealing = try RecordSealing.of(header: h, cipherBytes: bytes, cipher: cipher, unitType: .logRecord, path: path)
            return Loaded(number: number, window: window, header: .success(h), headerProblem: nil, sealing: sealing)
        } catch {
            if case .io = error { window.close(); throw error }
            return Loaded(number: number, window: window, header: .failure(error), headerProblem: .damaged)
        }
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
        let inRange = segments.filter { $0 >= start.segment && $0 <= (limit?.segment ?? .max) }
        var index = 0
        while index < inRange.count {
            let number = inRange[index]
            let loaded = try load(number)
            defer { loaded.window.close() }
            let skipped = number == start.segment && Int(start.offset) > Format.headerSize && Int(start.offset) <= loaded.size
            report.bytesScanned += Int64(loaded.size - (skipped ? Int(start.offset) : 0))
            let header: FileHeader
            switch loaded.header {
            case .success(let h): header = h
            case .failure(let error):
                if protected.contains(number) { throw error }
                if loaded.headerProblem == .foreign { throw error }
                try handleDamage(at: LogPosition(segment: number, offset: 0), reason: "segment header: \(error)",
                                 current: loaded, later: Array(inRange[(index + 1)...]), protected: protected,
                                 repair: repair, report: &report)
                report.largestWindow = max(report.largestWindow, loaded.window.largest)
                return report
            }
            if header.kind == .compactionSegment {
                report.largestWindow = max(report.largestWindow, loaded.window.largest)
                index += 1
                continue
            }
            let startOffset = number == start.segment ? max(Int(start.offset), loaded.firstRecord) : loaded.firstRecord
            report.end = LogPosition(segment: number, offset: UInt32(startOffset))
            let damage = try scanSegment(loaded, from: startOffset, report: &report, apply: apply)
            if let damage {
                try handleDamage(at: damage.position, reason: damage.reason, current: loaded,
                                 later: Array(inRange[(index + 1)...]), protected: protected,
                                 repair: repair, report: &report)
            }
            report.largestWindow = max(report.largestWindow, loaded.window.largest)
            if damage != nil { return report }
            index += 1
        }
        return report
    }

    struct Damage {
        var position: LogPosition
        var reason: String
    }

    /// Damage at `position`: corruption if a later valid commit says the bytes there were
    /// synced, else a torn tail to cut off.
    func handleDamage(at position: LogPosition, reason: String, current: Loaded, later: [UInt32], protected: Set<UInt32>,
                      repair: Bool, report: inout ScanReport) throws(StorageError) {
        let name = Paths.fileName(of: files.segmentPath(position.segment))
        if let proof = try Self.firstCommit(in: current.window, from: Int(position.offset) + 1, sealing: current.sealing,
                                            where: { $0.durableThrough > position }) {
            throw .corrupted(offset: Int64(position.offset),
                             reason: "\(name): \(reason); the commit of snapshot \(proof.info.snapshot) at offset \(proof.offset) was written after these bytes were synced")
        }
        var tornSegments: [(number: UInt32, size: Int)] = []
        for number in later where !protected.contains(number) {
            let loaded = try load(number)
            defer { loaded.window.close() }
            if case .success(let h) = loaded.header, h.kind == .compactionSegment { continue }
            if let proof = try Self.firstCommit(in: loaded.window, from: 0, sealing: loaded.sealing, where: { $0.durableThrough > position }) {
                throw .corrupted(offset: Int64(position.offset),
                                 reason: "\(name): \(reason); the commit of snapshot \(proof.info.snapshot) in segment \(number) was written after these bytes were synced")
            }
            tornSegments.append((number, loaded.size))
            report.largestWindow = max(report.largestWindow, loaded.window.largest)
        }
        report.tornAt = position
        report.tornReason = reason
        let tornHere = Int64(current.size) - Int64(position.offset)
        report.truncatedBytes += max(0, tornHere)
        for segment in tornSegments {
            report.truncatedBytes += Int64(segment.size)
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

    /// The first valid commit record at or after file offset `start` whose info passes
    /// `test` (used only after damage), read through the window: every byte offset is tried.
    static func firstCommit(in window: SegmentWindow, from start: Int, sealing: RecordSealing? = nil,
                            where test: (CommitInfo) -> Bool) throws(StorageError) -> (offset: Int, info: CommitInfo)? {
        if let sealing { return try firstSealedCommit(in: window, from: start, sealing: sealing, where: test) }
        let size = RecordCodec.commitRecordSize
        var offset = max(0, start)
        while offset + size <= window.size {
            // A chunk of the window, overlapping the next by a record so no position is missed.
            let count = min(window.windowSize, window.size - offset)
            let chunk: ArraySlice<UInt8>
            do { chunk = try window.bytes(at: offset, count: count) } catch { throw .io(error) }
            let found: (Int, CommitInfo)? = chunk.withUnsafeBytes { raw in
                guard let base = raw.baseAddress, raw.count >= size else { return nil }
                var at = 0
                while at + size <= raw.count {
                    // Jump to the next commit type byte (memchr: a long run of zeros or of
                    // other bytes costs little).
                    let typeAt = at + Format.recordTypeOffset
                    guard let hit = memchr(base + typeAt, Int32(RecordType.commit.rawValue), raw.count - size + 1 - at) else { return nil }
                    at = base.distance(to: UnsafeRawPointer(hit)) - Format.recordTypeOffset
                    if raw[at + Format.recordFlagsOffset] == 0, let frame = try? RecordCodec.frame(in: raw, at: at), frame.type == .commit {
                        let info = RecordCodec.commitRecord(frame, in: raw)
                        if test(info) { return (offset + at, info) }
                    }
                    at += 1
                }
                return nil
            }
            if let found { return found }
            guard offset + count < window.size else { break }
            offset += max(1, count - size + 1)
        }
        return nil
    }
}
