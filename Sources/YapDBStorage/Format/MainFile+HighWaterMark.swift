#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import YapDBCrypto

/// What the main file promises about the database's other files (docs/format.md §2,
/// "High-water mark"): the newest checkpoint and the log's durable end when the mark was
/// written. Every promise is a lower bound: files only ever grow past it, so an open that
/// finds less knows files are missing (a partial restore, a copy of the main file alone)
/// instead of opening an older or empty database.
package struct HighWaterMark: Equatable, Sendable {
    /// Bumped by every update; 0 means none was ever written (a database that has not
    /// finished its first open, or one written before the mark existed): no promise.
    package var sequence: UInt64 = 0
    /// The newest log segment when the mark was written (0: no promise about the log, as in
    /// `.off` mode, where the log is never synced).
    package var segment: UInt32 = 0
    /// The log's durable length in `segment`: its file is at least this long.
    package var offset: UInt32 = 0
    /// The snapshot of the last commit before (`segment`, `offset`) (informational).
    package var snapshot: UInt64 = 0
    /// The newest published checkpoint (0: none yet): a checkpoint at least this new exists.
    package var checkpoint: UInt32 = 0

    package init() {}

    /// What a slot holds.
    package enum Slot: Equatable, Sendable {
        /// All zero: never written.
        case empty
        case valid(HighWaterMark)
        /// A torn or damaged write: the other slot holds the mark.
        case damaged
        /// An encrypted database's slot whose crc holds but whose tag does not verify under
        /// the data key (forged or moved from the other place): damage, like `damaged`.
        case unauthenticated
    }

    /// The mark with sequence 1 and no promise that a new encrypted main file holds in its
    /// first slot, so that an encrypted database always has an authenticated mark.
    package static let initial: HighWaterMark = {
        var mark = HighWaterMark()
        mark.sequence = 1
        return mark
    }()

    /// The slot's 64 bytes (`Format.mainMarkSize`): the fields, then zero bytes (a plain
    /// database) or, with `authenticator` (an encrypted one), the tag of the fields at the slot
    /// this mark's sequence goes to; then the crc.
    package func encoded(authenticator: MarkAuthenticator? = nil) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Format.mainMarkSize)
        bytes.appendLE(sequence)
        bytes.appendLE(segment)
        bytes.appendLE(offset)
        bytes.appendLE(snapshot)
        bytes.appendLE(checkpoint)
        assert(bytes.count == Format.mainMarkTagOffset)
        if let authenticator {
            bytes.append(contentsOf: authenticator.tag(fields: bytes, slot: Self.slotIndex(sequence: sequence)))
        }
        bytes.append(contentsOf: [UInt8](repeating: 0, count: Format.mainMarkChecksumOffset - bytes.count))
        bytes.appendLE(CRC32C.mask(CRC32C.checksum(bytes)))
        return bytes
    }

    /// Decodes one slot's 64 bytes: crc first, then (a plain database) the zero bytes or
    /// (with `authenticator`, an encrypted database) the tag of the fields at place `slot`
    /// (0: the first page, 1: the second), then the sequence.
    package static func decode(_ bytes: [UInt8], authenticator: MarkAuthenticator? = nil, slot: Int = 0) -> Slot {
        guard bytes.count == Format.mainMarkSize else { return .damaged }
        if bytes.allSatisfy({ $0 == 0 }) { return .empty }
        let tagRange = Format.mainMarkTagOffset..<Format.mainMarkChecksumOffset
        return bytes.withBytes { (raw) -> Slot in
            func u32(_ o: Int) -> UInt32 { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: o, as: UInt32.self)) }
            func u64(_ o: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: o, as: UInt64.self)) }
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<Format.mainMarkChecksumOffset]))
            guard CRC32C.unmask(u32(Format.mainMarkChecksumOffset)) == crc else { return .damaged }
            if let authenticator {
                guard authenticator.verify(tag: bytes[tagRange], fields: bytes[0..<Format.mainMarkTagOffset], slot: slot) else {
                    return .unauthenticated
                }
            } else {
                guard raw[tagRange].allSatisfy({ $0 == 0 }) else { return .damaged }
            }
            var mark = HighWaterMark()
            mark.sequence = u64(0)
            mark.segment = u32(8)
            mark.offset = u32(12)
            mark.snapshot = u64(16)
            mark.checkpoint = u32(24)
            return mark.sequence == 0 ? .damaged : .valid(mark)
        }
    }

    /// The place (0: the first page, 1: the second) of the slot a mark with `sequence` goes
    /// to: odd sequences to the first page, even ones to the second, so an update never
    /// overwrites the newest mark.
    static func slotIndex(sequence: UInt64) -> Int { sequence % 2 == 1 ? 0 : 1 }

    /// The main file offset of the slot at place `index` (0 or 1).
    static func slotOffset(index: Int) -> Int64 {
        Int64((index == 0 ? 0 : Format.mainHeaderCopyOffset) + Format.mainMarkOffset)
    }

    /// The main file offset of the slot a mark with `sequence` goes to.
    static func slotOffset(sequence: UInt64) -> Int64 { slotOffset(index: slotIndex(sequence: sequence)) }

    /// The newer of the two slots. Throws `corrupted` when both are damaged (one torn update
    /// damages only one). With `authenticated` (an encrypted database, whose main file is
    /// created with a tagged mark, `initial`), a valid slot is required: none is `corrupted`
    /// saying the mark did not authenticate, since forged, moved or zeroed slots look so.
    static func newest(_ first: Slot, _ second: Slot, path: String, authenticated: Bool = false) throws(StorageError) -> HighWaterMark {
        switch (first, second) {
        case (.valid(let a), .valid(let b)): return a.sequence >= b.sequence ? a : b
        case (.valid(let a), _), (_, .valid(let a)): return a
        default: break
        }
        let name = Paths.fileName(of: path)
        if authenticated {
            throw .corrupted(offset: Int64(Format.mainMarkOffset),
                             reason: "\(name): the high-water mark did not authenticate (slot 0 \(first.summary), slot 1 \(second.summary))")
        }
        switch (first, second) {
        case (.empty, .empty), (.empty, _), (_, .empty): return HighWaterMark()
        default:
            throw .corrupted(offset: Int64(Format.mainMarkOffset), reason: "\(name): both high-water mark slots are damaged")
        }
    }

    /// What the directory lacks of this mark's promises: file names, or a segment and how
    /// short it is. Empty when everything promised is there.
    package func missing(in listing: DatabaseFiles.Listing, files: DatabaseFiles, fileSystem fs: any FileSystem) throws(IOFailure) -> [String] {
        var missing: [String] = []
        if checkpoint > 0 && (listing.checkpoints.last ?? 0) < checkpoint {
            missing.append(Paths.fileName(of: files.checkpointPath(checkpoint)))
        }
        if segment > 0 {
            let name = Paths.fileName(of: files.segmentPath(segment))
            if !listing.segments.contains(segment) {
                missing.append(name)
            } else {
                let file = try fs.open(files.segmentPath(segment), mode: .readOnly)
                defer { file.close() }
                let size = try file.size()
                if size < Int64(offset) { missing.append("\(name) (\(size) bytes of the \(offset) promised)") }
            }
        }
        return missing
    }
}

extension MainFile.Opened {
    /// Decodes an encrypted database's high-water mark from `markBytes` once its data key is
    /// unlocked: a slot whose tag does not verify is damage (the other slot's mark is used).
    ///
    /// - Throws: `corrupted` naming the main file when no slot holds an authentic mark.
    package mutating func authenticateMark(with authenticator: MarkAuthenticator, path: String) throws(StorageError) {
        precondition(markBytes.count == 2, "authenticateMark needs the slots MainFile.open read")
        let first = HighWaterMark.decode(markBytes[0], authenticator: authenticator, slot: 0)
        let second = HighWaterMark.decode(markBytes[1], authenticator: authenticator, slot: 1)
        mark = try HighWaterMark.newest(first, second, path: path, authenticated: true)
    }
}

extension HighWaterMark.Slot {
    /// A word for error messages.
    var summary: String {
        switch self {
        case .empty: return "empty"
        case .valid: return "valid"
        case .damaged: return "damaged"
        case .unauthenticated: return "not authentic"
        }
    }
}

/// Writes the high-water mark into the main file's two alternating slots.
///
/// Threading: updates come from the log writer's roll and from checkpoints on other threads;
/// `state` (a `Mutex`) serialises them, and each update's write and sync run under it.
package final class HighWaterMarkWriter: Sendable {
    /// The main file, open for writing for the database's lifetime.
    package let file: any StorageFile
    /// An encrypted database's: every slot written is tagged, every slot read is verified.
    package let authenticator: MarkAuthenticator?
    private let state: Mutex<HighWaterMark>

    package init(file: any StorageFile, mark: HighWaterMark, authenticator: MarkAuthenticator? = nil) {
        self.file = file
        self.authenticator = authenticator
        self.state = Mutex(mark)
    }

    /// The mark last written.
    package var current: HighWaterMark { state.withLock { $0 } }

    /// Takes in a newer mark another process wrote to the same main file (multi-process
    /// support; call with the writer lock held), so that this writer's next update follows
    /// it, with the next sequence, instead of going to the slot of the newest mark with an
    /// older one. A file whose slots cannot be read, are both damaged or (an encrypted
    /// database) do not authenticate leaves the mark as it is.
    package func reload() throws(IOFailure) {
        var slots: [HighWaterMark.Slot] = []
        for index in 0..<2 {
            let bytes = try file.readExactly(Format.mainMarkSize, at: HighWaterMark.slotOffset(index: index))
            slots.append(HighWaterMark.decode(bytes, authenticator: authenticator, slot: index))
        }
        guard let newest = try? HighWaterMark.newest(slots[0], slots[1], path: file.path, authenticated: authenticator != nil) else { return }
        state.withLock { mark in
            if newest.sequence > mark.sequence { mark = newest }
        }
    }

    /// Applies `change`; when it changed anything, writes the mark with the next sequence to
    /// that sequence's slot (tagged in an encrypted database) and syncs the main file. Call
    /// only once what the new mark promises is durable. On failure nothing changes in memory:
    /// the next update rewrites the same slot, and the other slot still holds the previous mark.
    package func update(_ change: (inout HighWaterMark) -> Void) throws(IOFailure) {
        try state.withLock { (mark: inout HighWaterMark) throws(IOFailure) -> Void in
            var next = mark
            change(&next)
            next.sequence = mark.sequence
            guard next != mark else { return }
            next.sequence = mark.sequence + 1
            try file.write(next.encoded(authenticator: authenticator), at: HighWaterMark.slotOffset(sequence: next.sequence))
            try file.sync()
            mark = next
        }
    }
}
