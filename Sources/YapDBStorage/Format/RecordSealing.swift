#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import YapDBCrypto

extension Format {
    /// Where the first record of a segment or checkpoint starts: after the file header, and in
    /// an encrypted database after its cipher header too (docs/format.md §12).
    package static func firstRecordOffset(encrypted: Bool) -> Int {
        encrypted ? cipherHeaderOffset + cipherHeaderSize : headerSize
    }
}

/// How the records of one encrypted segment or checkpoint are sealed and opened
/// (docs/format.md §12, "Sealed units"): the file's sealer (its file key) and the fields of its
/// header that every record's address names. A record is sealed for the byte offset its frame
/// starts at, with a fresh random nonce: a rewrite of the same offset (a rollback, the cut-back
/// after a failed sync, a torn tail cut by recovery) never repeats a nonce.
///
/// Threading: an immutable value; any thread.
package struct RecordSealing: Sendable {
    package let sealer: UnitSealer
    package let header: FileHeader
    package let unitType: SealedUnitType

    package init(sealer: UnitSealer, header: FileHeader, unitType: SealedUnitType) {
        self.sealer = sealer
        self.header = header
        self.unitType = unitType
    }

    /// The address of the record whose frame starts at `offset`.
    package func address(_ offset: Int64) -> UnitAddress {
        header.unitAddress(position: UInt64(offset), type: unitType)
    }

    /// `record` (one whole plain record) sealed as the frame starting at `offset`, appended
    /// to `output`; returns the frame's size.
    @discardableResult
    package func seal(_ record: [UInt8], at offset: Int64, into output: inout [UInt8]) throws(StorageError) -> Int {
        let frame = try SealedRecord.seal(record, sealer: sealer, address: address(offset))
        output.append(contentsOf: frame)
        return frame.count
    }

    /// The plain record inside the frame `frame` (all its bytes) that starts at `offset` of
    /// the file at `path`.
    ///
    /// - Throws: `corrupted` at `offset` when it does not authenticate (changed, damaged,
    ///   torn, or moved from another place) or its length field disagrees with its size.
    package func open(_ frame: [UInt8], at offset: Int64, path: String) throws(StorageError) -> [UInt8] {
        try SealedRecord.open(frame, sealer: sealer, address: address(offset), path: path, offset: offset)
    }

    /// `open` for a frame given as raw bytes.
    package func open(_ frame: UnsafeRawBufferPointer, at offset: Int64, path: String) throws(StorageError) -> [UInt8] {
        try open([UInt8](frame), at: offset, path: path)
    }

    /// Checks a located sealed record's length (the whole frame's) before anything is read
    /// for it: its plain record holds at least a record header and at most a maximal payload.
    package static func checkLocatedLength(_ length: Int, offset: Int64, path: String) throws(StorageError) {
        try RecordCodec.checkLocatedLength(length - SealedRecord.overhead, offset: offset, path: path)
    }

    /// The bytes a new encrypted segment or checkpoint starts with: `header` (marked
    /// encrypted) and its cipher header.
    package static func fileStart(_ header: FileHeader, cipherHeader: CipherHeader) -> [UInt8] {
        var header = header
        header.encrypted = true
        return header.encoded() + cipherHeader.encoded()
    }

    /// The sealing of a file of `cipher`'s database whose header is `header` (already checked
    /// for its database, kind and number) and whose cipher header is `cipherBytes` (the file's
    /// bytes `Format.cipherHeaderOffset ..< +cipherHeaderSize`).
    ///
    /// - Throws: `corrupted` when the cipher header is damaged or names another data key.
    package static func of(header: FileHeader, cipherBytes: [UInt8], cipher: DatabaseCipher, unitType: SealedUnitType,
                           path: String) throws(StorageError) -> RecordSealing {
        let cipherHeader = try CipherHeader.decode(cipherBytes, path: path, fileOffset: Int64(Format.cipherHeaderOffset))
        return RecordSealing(sealer: try cipher.sealer(header: header, cipherHeader: cipherHeader), header: header, unitType: unitType)
    }

    /// Reads the headers of the encrypted segment or checkpoint `file` and returns its sealing.
    ///
    /// - Throws: `corrupted` when a header is damaged, names another database or number, or
    ///   is not encrypted; `io` when the file cannot be read.
    package static func read(_ file: any StorageFile, cipher: DatabaseCipher, unitType: SealedUnitType) throws(StorageError) -> RecordSealing {
        let count = Format.cipherHeaderOffset + Format.cipherHeaderSize
        let bytes: [UInt8]
        do { bytes = try file.readExactly(count, at: 0) } catch {
            if error.isShortRead { throw .corrupted(offset: 0, reason: "\(Paths.fileName(of: file.path)): encrypted file shorter than its headers") }
            throw .io(error)
        }
        let header = try FileHeader.decode(Array(bytes[0..<Format.headerSize]), path: file.path)
        guard header.encrypted, header.uuid == cipher.uuid else {
            throw .corrupted(offset: 0, reason: "\(Paths.fileName(of: file.path)): not a file of this encrypted database")
        }
        return try of(header: header, cipherBytes: Array(bytes[Format.cipherHeaderOffset..<count]), cipher: cipher,
                      unitType: unitType, path: file.path)
    }
}
