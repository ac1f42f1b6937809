/// The header page of an index file and the header check shared by every index reader
/// (docs/format.md §9, §10).
package enum IndexFileHeader {
    /// Whether `size` is a page size the format allows: a power of two in
    /// `Format.indexMinimumPageSize ... Format.indexMaximumPageSize`.
    package static func isValidPageSize(_ size: Int) -> Bool {
        size >= Format.indexMinimumPageSize && size <= Format.indexMaximumPageSize && size & (size - 1) == 0
    }

    /// The bytes of page 0 of index file `number`: the 64-byte file header (kind 5, base
    /// snapshot = `sequence`, the checkpoint sequence that created the file), the page size and
    /// its crc, zeros to the end of the page.
    package static func encoded(uuid: [UInt8], number: UInt32, sequence: UInt64, pageSize: Int) -> [UInt8] {
        precondition(isValidPageSize(pageSize), "index page size \(pageSize) is not allowed")
        var bytes = FileHeader(kind: .index, uuid: uuid, fileNumber: number, baseSnapshot: sequence).encoded()
        bytes.appendLE(UInt32(pageSize))
        bytes.appendLE(UInt32(0))
        bytes.appendLE(CRC32C.mask(CRC32C.checksum(Array(bytes[Format.indexPageSizeOffset..<Format.indexHeaderChecksumOffset]))))
        assert(bytes.count == Format.indexHeaderUsedSize)
        bytes.append(contentsOf: [UInt8](repeating: 0, count: pageSize - bytes.count))
        return bytes
    }

    /// Decodes the 64-byte file header at the start of `bytes` and checks it is a `kind` file
    /// of database `uuid` (and numbered `number`, when given). The one header check of every
    /// index reader: magic, version, checksum (by `FileHeader.decode`), then kind, UUID, number.
    ///
    /// - Throws: `.notADatabase`, `.unsupportedVersion`, or `.corrupted` with
    ///   `.headerChecksum`, `.wrongKind`, `.wrongDatabase`, `.wrongFileNumber`.
    package static func check(_ bytes: [UInt8], path: String, kind: FileKindByte, uuid: [UInt8],
                              number: UInt32?) throws(IndexFileError) -> FileHeader {
        let header: FileHeader
        do throws(StorageError) {
            header = try FileHeader.decode(bytes, path: path)
        } catch {
            switch error {
            case .unsupportedVersion(let found, let supported): throw .unsupportedVersion(found: found, supported: supported)
            case .corrupted:
                // `decode` refuses a header for its checksum, or (checksum good) its unknown kind.
                let stored = bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: Format.headerChecksumOffset, as: UInt32.self)) }
                if CRC32C.unmask(stored) == CRC32C.checksum(Array(bytes[0..<Format.headerChecksumOffset])) {
                    throw .corrupted(path: path, offset: Int64(Format.headerKindOffset), reason: .wrongKind(bytes[Format.headerKindOffset]))
                }
                throw .corrupted(path: path, offset: Int64(Format.headerChecksumOffset), reason: .headerChecksum)
            default: throw .notADatabase(path: path)
            }
        }
        // Sealed pages are not read yet (docs/format.md §12): refused as an unknown version.
        guard !header.encrypted else {
            throw .unsupportedVersion(found: Int(Format.version | Format.encryptedVersionFlag), supported: Int(Format.version))
        }
        guard header.kind == kind else {
            throw .corrupted(path: path, offset: Int64(Format.headerKindOffset), reason: .wrongKind(header.kind.rawValue))
        }
        guard header.uuid == uuid else {
            throw .corrupted(path: path, offset: Int64(Format.headerUUIDOffset), reason: .wrongDatabase)
        }
        if let number, header.fileNumber != number {
            throw .corrupted(path: path, offset: Int64(Format.headerFileNumberOffset), reason: .wrongFileNumber(header.fileNumber))
        }
        return header
    }

    /// Reads and checks the header page of the open index file `number`: the file header, then
    /// the page size, which must equal `pageSize`.
    ///
    /// - Throws: the errors of `check`; `.notADatabase` for a file shorter than a header;
    ///   `.corrupted` with `.truncated` (shorter than the header's used bytes),
    ///   `.checksumMismatch` (page-size crc) or `.badPageSize`; `.io`.
    package static func read(_ file: any StorageFile, number: UInt32, uuid: [UInt8], pageSize: Int) throws(IndexFileError) {
        let size: Int64
        do { size = try file.size() } catch { throw .io(error) }
        guard size >= Int64(Format.headerSize) else { throw .notADatabase(path: file.path) }
        guard size >= Int64(Format.indexHeaderUsedSize) else {
            throw .corrupted(path: file.path, offset: size, reason: .truncated)
        }
        let bytes: [UInt8]
        do { bytes = try file.readExactly(Format.indexHeaderUsedSize, at: 0) } catch { throw .io(error) }
        _ = try check(bytes, path: file.path, kind: .index, uuid: uuid, number: number)
        let stored = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: Format.indexHeaderChecksumOffset, as: UInt32.self) }
        let crc = CRC32C.checksum(Array(bytes[Format.indexPageSizeOffset..<Format.indexHeaderChecksumOffset]))
        guard CRC32C.unmask(UInt32(littleEndian: stored)) == crc else {
            throw .corrupted(path: file.path, offset: Int64(Format.indexHeaderChecksumOffset), reason: .checksumMismatch)
        }
        let found = bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: Format.indexPageSizeOffset, as: UInt32.self)) }
        guard Int(found) == pageSize, isValidPageSize(pageSize) else {
            throw .corrupted(path: file.path, offset: Int64(Format.indexPageSizeOffset), reason: .badPageSize(found))
        }
        guard bytes[Format.indexReservedOffset..<Format.indexHeaderChecksumOffset].allSatisfy({ $0 == 0 }) else {
            throw .corrupted(path: file.path, offset: Int64(Format.indexReservedOffset), reason: .invalidField("reserved"))
        }
    }
}
