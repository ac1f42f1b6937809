import YapDBCrypto

/// The plaintext cipher header of an encrypted segment, checkpoint or index file
/// (docs/format.md §12, "Plaintext headers"): which cipher, which data key, and the file's
/// random salt, from which its file key derives.
package struct CipherHeader: Equatable, Sendable {
    package var dataKeyID: UInt32
    package var salt: [UInt8]

    /// A header with a fresh random salt: every file created, even under a reused number,
    /// gets a new file key.
    package static func fresh(dataKeyID: UInt32) -> CipherHeader {
        CipherHeader(dataKeyID: dataKeyID, salt: DataKey.randomBytes(CipherFormat.fileSaltSize))
    }

    package init(dataKeyID: UInt32, salt: [UInt8]) {
        precondition(salt.count == CipherFormat.fileSaltSize, "a file salt is \(CipherFormat.fileSaltSize) bytes")
        self.dataKeyID = dataKeyID
        self.salt = salt
    }

    /// The header's `Format.cipherHeaderSize` bytes.
    package func encoded() -> [UInt8] {
        var bytes: [UInt8] = [CipherFormat.aes256GCM, 0, 0, 0]
        bytes.appendLE(dataKeyID)
        bytes.append(contentsOf: salt)
        bytes.append(contentsOf: [UInt8](repeating: 0, count: Format.cipherHeaderChecksumOffset - bytes.count))
        bytes.appendLE(CRC32C.mask(CRC32C.checksum(bytes)))
        return bytes
    }

    /// Checks and decodes a cipher header: crc, then cipher, then zero bytes. `path` and
    /// `fileOffset` label the error.
    package static func decode(_ bytes: [UInt8], path: String, fileOffset: Int64) throws(StorageError) -> CipherHeader {
        func damaged(_ what: String) -> StorageError {
            .corrupted(offset: fileOffset, reason: "\(Paths.fileName(of: path)): cipher header \(what)")
        }
        guard bytes.count == Format.cipherHeaderSize else { throw damaged("is short") }
        return try bytes.withBytes { (raw) throws(StorageError) -> CipherHeader in
            let stored = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: Format.cipherHeaderChecksumOffset, as: UInt32.self))
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<Format.cipherHeaderChecksumOffset]))
            guard CRC32C.unmask(stored) == crc else { throw damaged("checksum mismatch") }
            guard raw[0] == CipherFormat.aes256GCM else { throw damaged("names unknown cipher \(raw[0])") }
            let saltEnd = 8 + CipherFormat.fileSaltSize
            guard raw[1..<4].allSatisfy({ $0 == 0 }), raw[saltEnd..<Format.cipherHeaderChecksumOffset].allSatisfy({ $0 == 0 }) else {
                throw damaged("has non-zero reserved bytes")
            }
            return CipherHeader(dataKeyID: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self)),
                                salt: Array(bytes[8..<saltEnd]))
        }
    }

    /// The sealer of the file this header starts: its file key from `dataKey`.
    ///
    /// - Throws: `corrupted` when the header names another data key than `dataKey` (the key
    ///   check already proved `dataKey`, and a database has one data key until rotation exists).
    package func sealer(dataKey: DataKey, header: FileHeader) throws(StorageError) -> UnitSealer {
        guard dataKeyID == dataKey.id else {
            throw .corrupted(offset: 0, reason: "cipher header names data key \(dataKeyID), the database's is \(dataKey.id)")
        }
        do {
            return try dataKey.fileSealer(salt: salt, databaseUUID: header.uuid, fileKind: header.kind.rawValue, fileNumber: header.fileNumber)
        } catch {
            throw .corrupted(offset: 0, reason: "cipher header: \(error)")
        }
    }
}
