// The bytes of the root record (docs/format.md §10) and the one routine that validates one.

extension IndexRoot {
    /// The whole root file: file header (kind 6, number 0, base snapshot = `snapshot`), body
    /// length, body, crc.
    ///
    /// The root must pass `damage()` (checked with `precondition`: a root comes from the
    /// engine's own state, not from disk).
    package func encoded() -> [UInt8] {
        if let problem = damage() { preconditionFailure("invalid index root record: \(problem)") }
        let body = bodyBytes()
        var bytes = FileHeader(kind: .root, uuid: uuid, fileNumber: 0, baseSnapshot: snapshot).encoded()
        bytes.appendLE(UInt32(body.count))
        bytes.append(contentsOf: body)
        bytes.appendLE(CRC32C.mask(CRC32C.checksum(Array(bytes[Format.rootBodyLengthOffset...]))))
        return bytes
    }

    /// The body's bytes (docs/format.md §10), without validation: `encoded()` validates first.
    func bodyBytes() -> [UInt8] {
        var body: [UInt8] = []
        body.appendLE(UInt32(truncatingIfNeeded: pageSize))
        body.appendLE(UInt32(0))
        body.appendLE(sequence)
        body.appendLE(snapshot)
        body.appendLE(replay.segment)
        body.appendLE(replay.offset)
        body.appendLE(nextRowID)
        body.appendLE(UInt32(truncatingIfNeeded: trees.count))
        body.appendLE(UInt32(truncatingIfNeeded: files.count))
        assert(body.count == Format.rootFixedBodySize)
        for tree in trees {
            body.append(UInt8(truncatingIfNeeded: tree.name.utf8.count))
            body.append(contentsOf: tree.name.utf8)
            body.appendLE(tree.root.rawValue)
            body.appendLE(tree.count)
            body.appendLE(tree.height)
        }
        for file in files {
            body.appendLE(file.number)
            body.appendLE(UInt64(bitPattern: file.length))
            body.appendLE(file.liveBytes)
            body.appendLE(file.deadBytes)
        }
        guard !extensions.isEmpty else { return body }
        body.appendLE(UInt32(truncatingIfNeeded: extensions.count))
        for ext in extensions {
            body.append(UInt8(truncatingIfNeeded: ext.name.utf8.count))
            body.append(contentsOf: ext.name.utf8)
            body.appendLE(UInt32(truncatingIfNeeded: ext.bytes.count))
            body.append(contentsOf: ext.bytes)
        }
        return body
    }

    /// Decodes and validates a root file's bytes. Checks run in order: file header (magic,
    /// version, checksum, kind 6, `uuid`), then the body length against the bytes present,
    /// then the crc, then every field (`damage()`).
    ///
    /// - Parameters:
    ///   - bytes: the whole file (the caller checked its size ≤ `Format.rootMaximumSize`).
    ///   - path: names the file in errors.
    ///   - uuid: the database's UUID, from the main file.
    /// - Throws: `.notADatabase`, `.unsupportedVersion`, or `.corrupted` with a typed reason:
    ///   `.headerChecksum`, `.wrongKind`, `.wrongDatabase`, `.truncated`, `.trailingBytes`,
    ///   `.overLimit`, `.checksumMismatch`, and the field reasons of `damage()`.
    package static func decode(_ bytes: [UInt8], path: String, uuid: [UInt8]) throws(IndexFileError) -> IndexRoot {
        let header = try IndexFileHeader.check(bytes, path: path, kind: .root, uuid: uuid, number: 0)
        func corrupt(_ offset: Int, _ reason: IndexDamage) -> IndexFileError {
            .corrupted(path: path, offset: Int64(offset), reason: reason)
        }
        guard bytes.count >= Format.rootBodyOffset + Format.rootFixedBodySize + 4 else {
            throw corrupt(bytes.count, .truncated)
        }
        return try bytes.withBytes { (raw) throws(IndexFileError) -> IndexRoot in
            let bodyLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: Format.rootBodyLengthOffset, as: UInt32.self)))
            guard bodyLength <= Format.rootMaximumSize else { throw corrupt(Format.rootBodyLengthOffset, .overLimit) }
            let end = Format.rootBodyOffset + bodyLength
            guard end + 4 <= raw.count else { throw corrupt(raw.count, .truncated) }
            guard end + 4 == raw.count else { throw corrupt(end + 4, .trailingBytes) }
            let stored = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: end, as: UInt32.self))
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[Format.rootBodyLengthOffset..<end]))
            guard CRC32C.unmask(stored) == crc else { throw corrupt(end, .checksumMismatch) }
            guard bodyLength >= Format.rootFixedBodySize else { throw corrupt(Format.rootBodyLengthOffset, .truncated) }

            var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[Format.rootBodyOffset..<end]))
            let body = Format.rootBodyOffset
            do {
                let pageSize = try reader.readU32()
                let reserved = try reader.readU32()
                guard reserved == 0 else { throw corrupt(body + 4, .invalidField("reserved")) }
                let sequence = try reader.readU64()
                let snapshot = try reader.readU64()
                let replay = LogPosition(segment: try reader.readU32(), offset: try reader.readU32())
                let nextRowID = try reader.readU64()
                let treeCount = Int(try reader.readU32())
                let fileCount = Int(try reader.readU32())
                guard treeCount <= Format.rootMaximumTrees, fileCount <= Format.rootMaximumFiles else {
                    throw corrupt(body + 40, .overLimit)
                }
                // Counts against the bytes left before anything is reserved.
                guard treeCount * (Format.rootTreeEntryFixedSize + 1) + fileCount * Format.rootFileEntrySize <= reader.remaining else {
                    throw corrupt(end, .truncated)
                }
                /// A u8 length and that many bytes of UTF-8 (tree and extension names).
                func readName(_ what: String) throws -> String {
                    let nameLength = Int(try reader.readU8())
                    let at = body + reader.position
                    let raw = try reader.readBytes(nameLength).bindMemory(to: UInt8.self)
                    guard let name = String(validating: raw, as: UTF8.self) else { throw corrupt(at, .invalidField(what)) }
                    return name
                }
                var trees: [Tree] = []
                trees.reserveCapacity(treeCount)
                for _ in 0..<treeCount {
                    let name = try readName("tree name")
                    trees.append(Tree(name: name, root: IndexPageID(rawValue: try reader.readU64()),
                                      count: try reader.readU64(), height: try reader.readU32()))
                }
                var files: [File] = []
                files.reserveCapacity(fileCount)
                for _ in 0..<fileCount {
                    let number = try reader.readU32()
                    let length = try reader.readU64()
                    guard length <= UInt64(Int64.max) else { throw corrupt(body + reader.position - 8, .invalidField("file length")) }
                    files.append(File(number: number, length: Int64(length), liveBytes: try reader.readU64(), deadBytes: try reader.readU64()))
                }
                // The extension section is absent when no extension has roots.
                var extensions: [Extension] = []
                if !reader.isAtEnd {
                    guard reader.remaining >= 4 else { throw corrupt(body + reader.position, .trailingBytes) }
                    let extensionCount = Int(try reader.readU32())
                    guard extensionCount >= 1, extensionCount <= Format.rootMaximumExtensions else {
                        throw corrupt(body + reader.position - 4, .overLimit)
                    }
                    guard extensionCount * (Format.rootExtensionEntryFixedSize + 1) <= reader.remaining else {
                        throw corrupt(end, .truncated)
                    }
                    extensions.reserveCapacity(extensionCount)
                    for _ in 0..<extensionCount {
                        let name = try readName("extension name")
                        let length = Int(try reader.readU32())
                        guard length <= Format.rootExtensionMaximumBytes else { throw corrupt(body + reader.position - 4, .overLimit) }
                        extensions.append(Extension(name: name, bytes: Array(try reader.readBytes(length))))
                    }
                }
                guard reader.isAtEnd else { throw corrupt(body + reader.position, .trailingBytes) }
                let root = IndexRoot(uuid: header.uuid, pageSize: Int(pageSize), sequence: sequence, snapshot: snapshot,
                                     replay: replay, nextRowID: nextRowID, trees: trees, files: files, extensions: extensions)
                guard header.baseSnapshot == snapshot else {
                    throw corrupt(Format.headerBaseSnapshotOffset, .invalidField("header snapshot"))
                }
                if let problem = root.damage() { throw corrupt(body, problem) }
                return root
            } catch let error as IndexFileError {
                throw error
            } catch {
                // A `ByteReader.Overrun`: a field runs past the body.
                throw corrupt(body + reader.position, .truncated)
            }
        }
    }

    /// The first rule this root breaks, or `nil` when it is valid (docs/format.md §10): the
    /// page size is allowed; 1 to `rootMaximumTrees` trees … at most `rootMaximumTrees`, with
    /// unique names of 1 to `rootTreeNameMaximum` bytes; at most `rootMaximumFiles` files,
    /// numbers ≥ 1 and strictly ascending, each a whole number of pages (at least the header
    /// page) with live + dead ≤ length; every tree root `none` or a page inside a listed file,
    /// and its entry count at most the files' bytes;
    /// at most `rootMaximumExtensions` extensions with unique names as for trees, each at most
    /// `rootExtensionMaximumBytes` bytes and all together at most `rootExtensionTotalBytes`.
    /// The one validation of a root record, used by the writer (`encoded`) and the reader
    /// (`decode`).
    package func damage() -> IndexDamage? {
        guard uuid.count == 16 else { return .invalidField("uuid") }
        guard IndexFileHeader.isValidPageSize(pageSize) else { return .badPageSize(UInt32(truncatingIfNeeded: pageSize)) }
        guard trees.count <= Format.rootMaximumTrees, files.count <= Format.rootMaximumFiles else { return .overLimit }
        var lengths: [UInt32: Int64] = [:]
        var totalBytes: UInt64 = 0
        var previous: UInt32 = 0
        for file in files {
            guard file.number > previous else { return .filesOutOfOrder }
            previous = file.number
            guard file.length >= Int64(pageSize), file.length % Int64(pageSize) == 0,
                  file.length / Int64(pageSize) <= Int64(UInt32.max) else { return .invalidField("file length") }
            let (used, overflow) = file.liveBytes.addingReportingOverflow(file.deadBytes)
            guard !overflow, used <= UInt64(file.length) else { return .invalidField("file byte counters") }
            lengths[file.number] = file.length
            totalBytes = totalBytes.addingReportingOverflow(UInt64(file.length)).overflow ? .max : totalBytes + UInt64(file.length)
        }
        var names = Set<String>()
        for tree in trees {
            let count = tree.name.utf8.count
            guard count >= 1, count <= Format.rootTreeNameMaximum else { return .invalidField("tree name") }
            guard names.insert(tree.name).inserted else { return .duplicateTreeName(tree.name) }
            // Every entry takes at least a byte of a page of these files: a larger count (a
            // crafted tree of shared pages claiming 2^48 entries) is refused here, before any
            // walk trusts it.
            guard tree.count <= totalBytes else { return .invalidField("tree entry count") }
            if tree.root == .none { continue }
            guard tree.root.isValid, let length = lengths[tree.root.file],
                  tree.root.offset(pageSize: pageSize) + Int64(pageSize) <= length else { return .rootOutsideFiles(tree.root) }
        }
        guard extensions.count <= Format.rootMaximumExtensions else { return .overLimit }
        var extensionNames = Set<String>()
        var extensionBytes = 0
        for ext in extensions {
            let count = ext.name.utf8.count
            guard count >= 1, count <= Format.rootTreeNameMaximum else { return .invalidField("extension name") }
            guard extensionNames.insert(ext.name).inserted else { return .duplicateTreeName(ext.name) }
            guard ext.bytes.count <= Format.rootExtensionMaximumBytes else { return .overLimit }
            extensionBytes += ext.bytes.count
        }
        guard extensionBytes <= Format.rootExtensionTotalBytes else { return .overLimit }
        return nil
    }
}
