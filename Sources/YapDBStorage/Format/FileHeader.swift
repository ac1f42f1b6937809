#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The 64-byte header at the start of every file (docs/format.md §2).
package struct FileHeader: Hashable, Sendable {
    package var kind: FileKindByte
    package var uuid: [UInt8]
    package var fileNumber: UInt32
    package var baseSnapshot: UInt64
    package var createdAtMilliseconds: UInt64
    /// Whether the file belongs to an encrypted database: its version carries
    /// `Format.encryptedVersionFlag` (docs/format.md §12). Decoding accepts the flag and sets
    /// this; each reader checks it against what it expects (a plain reader refuses it).
    package var encrypted = false

    package init(kind: FileKindByte, uuid: [UInt8], fileNumber: UInt32, baseSnapshot: UInt64, createdAtMilliseconds: UInt64 = FileHeader.nowMilliseconds()) {
        precondition(uuid.count == 16, "a database UUID is 16 bytes")
        self.kind = kind
        self.uuid = uuid
        self.fileNumber = fileNumber
        self.baseSnapshot = baseSnapshot
        self.createdAtMilliseconds = createdAtMilliseconds
    }

    /// The header's 64 bytes.
    package func encoded() -> [UInt8] {
        var bytes = Format.magic
        bytes.appendLE(encrypted ? Format.version | Format.encryptedVersionFlag : Format.version)
        bytes.append(kind.rawValue)
        bytes.append(contentsOf: [0, 0, 0])
        bytes.append(contentsOf: uuid)
        bytes.appendLE(fileNumber)
        bytes.appendLE(UInt32(0))
        bytes.appendLE(baseSnapshot)
        bytes.appendLE(createdAtMilliseconds)
        bytes.appendLE(UInt32(0))
        bytes.appendLE(CRC32C.mask(CRC32C.checksum(bytes)))
        assert(bytes.count == Format.headerSize)
        return bytes
    }

    /// Checks and decodes a header: magic, then version, then checksum, then fields.
    /// `path` and `fileOffset` only label the error.
    package static func decode(_ bytes: [UInt8], path: String, fileOffset: Int64 = 0) throws(StorageError) -> FileHeader {
        guard bytes.count >= Format.headerSize, Array(bytes[0..<8]) == Format.magic else {
            throw .notADatabase(path: path)
        }
        return try bytes.withBytes { (raw) throws(StorageError) -> FileHeader in
            func u32(_ o: Int) -> UInt32 { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: o, as: UInt32.self)) }
            func u64(_ o: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: o, as: UInt64.self)) }
            let version = u32(Format.headerVersionOffset)
            guard version != 0 else { throw .notADatabase(path: path) }
            guard version == Format.version || version == Format.version | Format.encryptedVersionFlag else {
                throw .unsupportedVersion(found: Int(version), supported: Int(Format.version))
            }
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<Format.headerChecksumOffset]))
            guard CRC32C.unmask(u32(Format.headerChecksumOffset)) == crc else {
                throw .corrupted(offset: fileOffset, reason: "\(Paths.fileName(of: path)): header checksum mismatch")
            }
            guard let kind = FileKindByte(rawValue: raw[Format.headerKindOffset]) else {
                throw .corrupted(offset: fileOffset + Int64(Format.headerKindOffset), reason: "\(Paths.fileName(of: path)): unknown file kind")
            }
            var header = FileHeader(
                kind: kind,
                uuid: Array(raw[Format.headerUUIDOffset..<(Format.headerUUIDOffset + 16)]),
                fileNumber: u32(Format.headerFileNumberOffset),
                baseSnapshot: u64(Format.headerBaseSnapshotOffset),
                createdAtMilliseconds: u64(Format.headerCreatedAtOffset))
            header.encrypted = version != Format.version
            return header
        }
    }

    /// Milliseconds since 1970.
    package static func nowMilliseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(max(0, ts.tv_sec)) * 1000 + UInt64(max(0, ts.tv_nsec)) / 1_000_000
    }

    /// 16 random bytes for a new database's UUID (version 4 layout).
    package static func randomUUID() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return bytes
    }
}

/// The main file: two copies of the database header (docs/format.md §2).
package enum MainFile {
    /// What opening the main file found.
    package struct Opened: Sendable {
        package var header: FileHeader
        /// Set when one header copy was damaged and the other was used.
        package var damagedCopy: Int?
        /// The newer valid high-water mark slot (an empty mark when none was written). In an
        /// encrypted database it is read only once the data key verifies the slots' tags
        /// (`authenticateMark(with:path:)`); until then it is an empty mark.
        package var mark = HighWaterMark()
        /// The two slots' bytes as read (all zero past the file's end).
        package var markBytes: [[UInt8]] = []
    }

    /// Creates the main file at `path` crash-safely and returns it locked: written as
    /// `path-creating` under that file's lock, synced, renamed (the lock moves with the file),
    /// directory synced. Throws `EEXIST` as `io` when `path` exists, and `locked` when another
    /// creator holds `path-creating`. A leftover `path-creating` is removed only once its lock
    /// is taken, so a creator at work never loses its file. On failure the temporary file is
    /// removed (a crash leaves it for the next creation to remove).
    ///
    /// - Parameter image: the file's bytes when they are not the plain `image(header)` (an
    ///   encrypted main file, `encryptedImage`); its header must name `uuid`.
    package static func create(at path: String, fileSystem fs: any FileSystem,
                               uuid: [UInt8] = FileHeader.randomUUID(), image given: [UInt8]? = nil) throws(StorageError) -> (header: FileHeader, lock: any FileLock) {
        let header = FileHeader(kind: .main, uuid: uuid, fileNumber: 0, baseSnapshot: 0)
        let temporary = path + Format.creatingSuffix
        var lock: (any FileLock)?
        do throws(IOFailure) {
            if fs.kind(of: temporary) != .missing {
                let stale = try fs.lock(temporary)
                defer { stale.unlock() }
                try fs.remove(temporary)
            }
            let file = try fs.open(temporary, mode: .createNew)
            defer { file.close() }
            do throws(IOFailure) { lock = try fs.lock(temporary) } catch {
                try? fs.remove(temporary)
                throw error
            }
            try file.write(given ?? image(header), at: 0)
            try file.sync()
            if fs.kind(of: path) != .missing { throw IOFailure(errno: EEXIST, operation: "create", path: path) }
            try fs.rename(temporary, to: path)
            try fs.syncDirectory(Paths.directory(of: path))
        } catch {
            // A failed creation (a full disk, say) leaves nothing behind; only our own
            // temporary file (we hold its lock) is removed.
            if let lock {
                if fs.kind(of: temporary) == .file { try? fs.remove(temporary) }
                lock.unlock()
            }
            if error.errno == EWOULDBLOCK || error.errno == EAGAIN { throw .locked(path: path) }
            throw .io(error)
        }
        return (header, lock!)
    }

    /// The main file's bytes: the header at 0 and at `Format.mainHeaderCopyOffset`.
    static func image(_ header: FileHeader) -> [UInt8] {
        var image = [UInt8](repeating: 0, count: Format.mainFileSize)
        let encoded = header.encoded()
        image.replaceSubrange(0..<Format.headerSize, with: encoded)
        image.replaceSubrange(Format.mainHeaderCopyOffset..<(Format.mainHeaderCopyOffset + Format.headerSize), with: encoded)
        return image
    }

    /// Reads and checks the main file's header copies and (a plain database) its high-water
    /// mark. One damaged copy is survivable; with both damaged, the first copy's error is
    /// thrown. An encrypted database's mark waits for `Opened.authenticateMark(with:path:)`.
    package static func open(at path: String, file: any StorageFile) throws(StorageError) -> Opened {
        let size: Int64
        do { size = try file.size() } catch { throw .io(error) }
        guard size >= Int64(Format.headerSize) else { throw .notADatabase(path: path) }
        func copy(_ index: Int) throws(StorageError) -> FileHeader {
            let offset = index == 0 ? 0 : Format.mainHeaderCopyOffset
            guard size >= Int64(offset + Format.headerSize) else {
                throw .corrupted(offset: Int64(offset), reason: "\(Paths.fileName(of: path)): header copy \(index) missing")
            }
            let bytes: [UInt8]
            do { bytes = try file.readExactly(Format.headerSize, at: Int64(offset)) } catch { throw .io(error) }
            let header = try FileHeader.decode(bytes, path: path, fileOffset: Int64(offset))
            guard header.kind == .main else {
                throw .corrupted(offset: Int64(offset), reason: "\(Paths.fileName(of: path)): not a main file header")
            }
            return header
        }
        let first: Result<FileHeader, StorageError>
        do throws(StorageError) { first = .success(try copy(0)) } catch { first = .failure(error) }
        let second: Result<FileHeader, StorageError>
        do throws(StorageError) { second = .success(try copy(1)) } catch { second = .failure(error) }
        var opened: Opened
        switch (first, second) {
        case (.success(let a), .success(let b)):
            guard a.uuid == b.uuid, a.encrypted == b.encrypted else {
                throw .corrupted(offset: Int64(Format.mainHeaderCopyOffset), reason: "\(Paths.fileName(of: path)): header copies disagree")
            }
            opened = Opened(header: a, damagedCopy: nil)
        case (.success(let a), .failure(let error)):
            if case .io = error { throw error }
            opened = Opened(header: a, damagedCopy: 1)
        case (.failure(let error), .success(let b)):
            if case .io = error { throw error }
            if case .unsupportedVersion = error { throw error }
            opened = Opened(header: b, damagedCopy: 0)
        case (.failure(let error), .failure):
            throw error
        }
        opened.markBytes = [try markSlot(0, file: file, size: size), try markSlot(1, file: file, size: size)]
        // An encrypted database's slots carry tags that only the data key checks: they are
        // decoded once it is unlocked, so a wrong key is never taken for a damaged mark.
        if !opened.header.encrypted {
            opened.mark = try HighWaterMark.newest(HighWaterMark.decode(opened.markBytes[0]), HighWaterMark.decode(opened.markBytes[1]), path: path)
        }
        return opened
    }

    /// One high-water mark slot's bytes; a slot past the end of the file was never written
    /// (all zero).
    static func markSlot(_ index: Int, file: any StorageFile, size: Int64) throws(StorageError) -> [UInt8] {
        let offset = HighWaterMark.slotOffset(index: index)
        guard size >= offset + Int64(Format.mainMarkSize) else { return [UInt8](repeating: 0, count: Format.mainMarkSize) }
        do { return try file.readExactly(Format.mainMarkSize, at: offset) } catch { throw .io(error) }
    }
}
