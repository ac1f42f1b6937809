import YapDBCrypto

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
    ///
    /// With `cipherHeader` (an encrypted database), the file header carries the encrypted
    /// version and the cipher header sits at `Format.indexCipherHeaderOffset` (docs/format.md §12).
    package static func encoded(uuid: [UInt8], number: UInt32, sequence: UInt64, pageSize: Int,
                                cipherHeader: CipherHeader? = nil) -> [UInt8] {
        precondition(isValidPageSize(pageSize), "index page size \(pageSize) is not allowed")
        var header = FileHeader(kind: .index, uuid: uuid, fileNumber: number, baseSnapshot: sequence)
        header.encrypted = cipherHeader != nil
        var bytes = header.encoded()
        bytes.appendLE(UInt32(pageSize))
        bytes.appendLE(UInt32(0))
        bytes.appendLE(CRC32C.mask(CRC32C.checksum(Array(bytes[Format.indexPageSizeOffset..<Format.indexHeaderChecksumOffset]))))
        assert(bytes.count == Format.indexHeaderUsedSize)
        bytes.append(contentsOf: [UInt8](repeating: 0, count: pageSize - bytes.count))
        if let cipherHeader {
            let start = Format.indexCipherHeaderOffset
            bytes.replaceSubrange(start..<(start + Format.cipherHeaderSize), with: cipherHeader.encoded())
        }
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
    ///
    /// With `cipher` (an encrypted database) the file must be encrypted, and its sealing (the
    /// file's sealer and header) is returned; without, it must be plain.
    @discardableResult
    package static func read(_ file: any StorageFile, number: UInt32, uuid: [UInt8], pageSize: Int,
                             cipher: DatabaseCipher? = nil) throws(IndexFileError) -> PageSealing? {
        let size: Int64
        do { size = try file.size() } catch { throw .io(error) }
        guard size >= Int64(Format.headerSize) else { throw .notADatabase(path: file.path) }
        guard size >= Int64(Format.indexHeaderUsedSize) else {
            throw .corrupted(path: file.path, offset: size, reason: .truncated)
        }
        let bytes: [UInt8]
        do { bytes = try file.readExactly(Format.indexHeaderUsedSize, at: 0) } catch { throw .io(error) }
        let header = try check(bytes, path: file.path, kind: .index, uuid: uuid, number: number)
        guard header.encrypted == (cipher != nil) else {
            throw .corrupted(path: file.path, offset: Int64(Format.headerVersionOffset), reason: .invalidField("encryption"))
        }
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
        guard let cipher else { return nil }
        let start = Int64(Format.indexCipherHeaderOffset)
        guard size >= start + Int64(Format.cipherHeaderSize), pageSize >= Format.encryptedIndexMinimumPageSize else {
            throw .corrupted(path: file.path, offset: start, reason: .truncated)
        }
        do throws(StorageError) {
            let cipherBytes: [UInt8]
            do { cipherBytes = try file.readExactly(Format.cipherHeaderSize, at: start) } catch { throw .io(error) }
            let cipherHeader = try CipherHeader.decode(cipherBytes, path: file.path, fileOffset: start)
            return PageSealing(sealer: try cipher.sealer(header: header, cipherHeader: cipherHeader), header: header, pageSize: pageSize)
        } catch {
            if case .io(let failure) = error { throw .io(failure) }
            throw .corrupted(path: file.path, offset: start, reason: .invalidField("cipher header"))
        }
    }
}
