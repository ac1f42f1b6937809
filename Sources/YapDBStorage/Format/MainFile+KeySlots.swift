import YapDBCrypto

/// A key slot as the main file stores it (docs/format.md §12, "Key hierarchy and the main
/// file"): a u64 sequence, the slot body (`KeySlot.encoded()`), zero bytes, a crc. The two
/// slots alternate like the high-water mark's: an update with sequence *n* goes to the first
/// page when *n* is odd and to the second when it is even, so a rekey never overwrites the
/// newest slot and a torn rekey damages only its own.
package struct StoredKeySlot: Equatable, Sendable {
    package var sequence: UInt64
    package var slot: KeySlot

    package init(sequence: UInt64, slot: KeySlot) {
        self.sequence = sequence
        self.slot = slot
    }

    /// What one slot's bytes hold.
    package enum Decoded: Equatable, Sendable {
        /// All zero (or past the file's end): never written.
        case empty
        case valid(StoredKeySlot)
        /// A torn or damaged write: a failed crc, a sequence of 0, a malformed body.
        case damaged
    }

    /// The slot's `Format.mainKeySlotSize` bytes.
    package func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Format.mainKeySlotSize)
        bytes.appendLE(sequence)
        bytes.append(contentsOf: slot.encoded())
        bytes.append(contentsOf: [UInt8](repeating: 0, count: Format.mainKeySlotChecksumOffset - bytes.count))
        bytes.appendLE(CRC32C.mask(CRC32C.checksum(bytes)))
        return bytes
    }

    /// Decodes one slot: crc first, then the zero bytes, the sequence and the body's fields.
    package static func decode(_ bytes: [UInt8]) -> Decoded {
        guard bytes.count == Format.mainKeySlotSize else { return .damaged }
        if bytes.allSatisfy({ $0 == 0 }) { return .empty }
        let bodyEnd = Format.mainKeySlotBodyOffset + CipherFormat.keySlotBodySize
        return bytes.withBytes { (raw) -> Decoded in
            let stored = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: Format.mainKeySlotChecksumOffset, as: UInt32.self))
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<Format.mainKeySlotChecksumOffset]))
            guard CRC32C.unmask(stored) == crc else { return .damaged }
            guard raw[bodyEnd..<Format.mainKeySlotChecksumOffset].allSatisfy({ $0 == 0 }) else { return .damaged }
            let sequence = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
            guard sequence > 0, let slot = try? KeySlot(decoding: Array(bytes[Format.mainKeySlotBodyOffset..<bodyEnd])) else {
                return .damaged
            }
            return .valid(StoredKeySlot(sequence: sequence, slot: slot))
        }
    }

    /// The main file offset of the slot with `sequence`.
    package static func offset(sequence: UInt64) -> Int64 {
        Int64((sequence % 2 == 1 ? 0 : Format.mainHeaderCopyOffset) + Format.mainKeySlotOffset)
    }

    /// The newer valid slot; nil when both are empty (a database without a key slot).
    ///
    /// - Throws: `corrupted` when both are damaged, or one is damaged and the other empty
    ///   (a slot is written whole before the database exists, so that is damage too).
    static func newest(_ first: Decoded, _ second: Decoded, path: String) throws(StorageError) -> StoredKeySlot? {
        switch (first, second) {
        case (.valid(let a), .valid(let b)): return a.sequence >= b.sequence ? a : b
        case (.valid(let a), _), (_, .valid(let a)): return a
        case (.empty, .empty): return nil
        default:
            throw .corrupted(offset: Int64(Format.mainKeySlotOffset), reason: "\(Paths.fileName(of: path)): the key slots are damaged")
        }
    }
}

extension MainFile {
    /// The bytes of a new encrypted main file: the header (with the encrypted version) at 0
    /// and at `Format.mainHeaderCopyOffset`, `slot` in its page (sequence 1: the first), the
    /// key-check block in both pages.
    package static func encryptedImage(_ header: FileHeader, slot: StoredKeySlot, keyCheck: [UInt8]) -> [UInt8] {
        var header = header
        header.encrypted = true
        var image = Self.image(header)
        let slotStart = Int(StoredKeySlot.offset(sequence: slot.sequence))
        image.replaceSubrange(slotStart..<(slotStart + Format.mainKeySlotSize), with: slot.encoded())
        for page in [0, Format.mainHeaderCopyOffset] {
            let start = page + Format.mainKeyCheckOffset
            image.replaceSubrange(start..<(start + keyCheck.count), with: keyCheck)
        }
        return image
    }

    /// Opens an encrypted database's data key with `key`: reads both key slots, unwraps the
    /// newer valid one and checks the key-check block (either copy). Reads only the main file
    /// and changes nothing.
    ///
    /// - Throws: `keyUnavailable` when `key` is nil (before anything is read); `wrongKey` when
    ///   the key does not unwrap the slot (another key, another form, too short) or the key
    ///   check fails under the unwrapped data key; `corrupted` when both slots are damaged or
    ///   none was written; `io` when the file cannot be read.
    package static func unlock(file: any StorageFile, path: String, uuid: [UInt8], key: UserKey?) throws(StorageError) -> (dataKey: DataKey, slot: StoredKeySlot) {
        guard let key else { throw .keyUnavailable }
        let size: Int64
        do { size = try file.size() } catch { throw .io(error) }
        func read(_ offset: Int64, _ count: Int) throws(StorageError) -> [UInt8]? {
            guard size >= offset + Int64(count) else { return nil }
            do { return try file.readExactly(count, at: offset) } catch { throw .io(error) }
        }
        var decoded: [StoredKeySlot.Decoded] = []
        for page in [0, Format.mainHeaderCopyOffset] {
            let bytes = try read(Int64(page + Format.mainKeySlotOffset), Format.mainKeySlotSize)
            decoded.append(bytes.map(StoredKeySlot.decode) ?? .empty)
        }
        guard let stored = try StoredKeySlot.newest(decoded[0], decoded[1], path: path) else {
            throw .corrupted(offset: Int64(Format.mainKeySlotOffset), reason: "\(Paths.fileName(of: path)): an encrypted main file without a key slot")
        }
        let dataKey: DataKey
        do { dataKey = try stored.slot.unwrap(with: key, databaseUUID: uuid) } catch { throw .wrongKey }
        for page in [0, Format.mainHeaderCopyOffset] {
            guard let block = try read(Int64(page + Format.mainKeyCheckOffset), CipherFormat.keyCheckSize) else { continue }
            if (try? dataKey.verifyKeyCheck(block, databaseUUID: uuid)) != nil { return (dataKey, stored) }
        }
        throw .wrongKey
    }
}

extension MainFile {
    /// Changes the key that wraps the data key (docs/format.md §12, "Rekey"): unwraps it with
    /// `current`, writes it wrapped under `new` into the older slot with the next sequence and
    /// syncs, checks that `new` opens the main file, then overwrites the other slot the same
    /// way (so no slot wraps the data key under `current` any more) and syncs again. No data
    /// file changes.
    ///
    /// Crashes: after a crash, or a failure, at any call the database opens with `current` or
    /// with `new` (a torn slot is damage the other slot survives); keep both keys until this
    /// returns. The data key itself does not change: someone who read it with the old key
    /// still can (rotating it is later work).
    ///
    /// - Returns: the newest slot written.
    /// - Throws: `keyUnavailable`/`wrongKey` when `current` does not open the database (nothing
    ///   written); `wrongKey` when `new` cannot be used (a raw key under 32 bytes); `io` when a
    ///   write or sync fails; `corrupted` when the new slot does not read back.
    @discardableResult
    package static func rekey(file: any StorageFile, path: String, uuid: [UInt8], current: UserKey?, new newKey: UserKey,
                              iterations: UInt32 = UInt32(CipherFormat.defaultKDFIterations),
                              kdfSalt: [UInt8]? = nil) throws(StorageError) -> StoredKeySlot {
        let (dataKey, newest) = try unlock(file: file, path: path, uuid: uuid, key: current)
        var written = newest
        for _ in 0..<2 {
            let next: StoredKeySlot
            do {
                next = StoredKeySlot(sequence: written.sequence + 1,
                                     slot: try KeySlot.wrapping(dataKey, with: newKey, databaseUUID: uuid, iterations: iterations, kdfSalt: kdfSalt))
            } catch {
                throw .wrongKey
            }
            do {
                try file.write(next.encoded(), at: StoredKeySlot.offset(sequence: next.sequence))
                try file.sync()
            } catch {
                throw .io(error)
            }
            let check = try unlock(file: file, path: path, uuid: uuid, key: newKey)
            guard check.dataKey == dataKey, check.slot == next else {
                throw .corrupted(offset: StoredKeySlot.offset(sequence: next.sequence), reason: "\(Paths.fileName(of: path)): the new key slot did not read back")
            }
            written = next
        }
        return written
    }
}
