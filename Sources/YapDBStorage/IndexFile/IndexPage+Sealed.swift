import YapDBCrypto

/// An index page of an encrypted database (docs/format.md §12, "Sealed units"): a page of
/// `pageSize` bytes on disk holds `nonce ‖ ciphertext ‖ tag`, and the tree layer works with the
/// `pageSize − CipherFormat.sealOverhead` bytes inside (its codec and checksum unchanged). A
/// page is sealed for its file and page number, so no page can be moved or swapped, and with a
/// fresh nonce every time: the index writer, resuming after a failed checkpoint, writes new
/// pages under page numbers it wrote before.
package enum SealedPage {
    /// The bytes of a page the tree layer sees in a file of `pageSize`-byte pages.
    package static func plainSize(pageSize: Int) -> Int { pageSize - CipherFormat.sealOverhead }

    /// `plain` (exactly `plainSize(pageSize:)` bytes) sealed as page `page` of the file
    /// `header` starts: `pageSize` bytes.
    package static func seal(_ plain: [UInt8], page: UInt32, pageSize: Int, sealer: UnitSealer, header: FileHeader) throws(StorageError) -> [UInt8] {
        precondition(plain.count == plainSize(pageSize: pageSize), "a sealed page holds \(plainSize(pageSize: pageSize)) bytes, got \(plain.count)")
        do { return try sealer.seal(plain, at: header.unitAddress(position: UInt64(page), type: .indexPage)) } catch {
            throw .corrupted(offset: 0, reason: "sealing page \(page): \(error)")
        }
    }

    /// The plain bytes of page `page`, read as `sealed` (`pageSize` bytes).
    ///
    /// - Throws: `corrupted` at the page's offset when it does not authenticate: damaged,
    ///   torn, changed, or another page's bytes (moved or swapped).
    package static func open(_ sealed: [UInt8], page: UInt32, sealer: UnitSealer, header: FileHeader, path: String) throws(StorageError) -> [UInt8] {
        let offset = Int64(page) * Int64(sealed.count)
        guard sealed.count >= Format.encryptedIndexMinimumPageSize else {
            throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): a sealed page of \(sealed.count) bytes is below the minimum")
        }
        do { return try sealer.open(sealed, at: header.unitAddress(position: UInt64(page), type: .indexPage)) } catch {
            throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): page \(page) did not authenticate")
        }
    }
}

/// How the pages of one encrypted index file are sealed and opened: its sealer (file key),
/// its header (the address every page names) and its page size on disk.
///
/// Threading: an immutable value; any thread.
package struct PageSealing: Sendable {
    package let sealer: UnitSealer
    package let header: FileHeader
    /// The size of a page on disk; the tree works with `plainSize` bytes of it.
    package let pageSize: Int

    package init(sealer: UnitSealer, header: FileHeader, pageSize: Int) {
        self.sealer = sealer
        self.header = header
        self.pageSize = pageSize
    }

    /// The bytes of a page the tree layer sees.
    package var plainSize: Int { SealedPage.plainSize(pageSize: pageSize) }

    /// `plain` sealed as page `page`: `pageSize` bytes, with a fresh nonce.
    package func seal(_ plain: UnsafeRawBufferPointer, page: UInt32) throws(StorageError) -> [UInt8] {
        try SealedPage.seal([UInt8](plain), page: page, pageSize: pageSize, sealer: sealer, header: header)
    }

    /// The plain bytes of page `page`, read as `sealed`.
    package func open(_ sealed: UnsafeRawBufferPointer, page: UInt32, path: String) throws(StorageError) -> [UInt8] {
        try SealedPage.open([UInt8](sealed), page: page, sealer: sealer, header: header, path: path)
    }
}
