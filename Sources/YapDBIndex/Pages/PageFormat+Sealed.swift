extension PageFormat {
    /// The format of an encrypted database's trees (docs/format.md §12): each page of
    /// `diskPageSize` bytes on disk (a valid page size) holds `overhead` bytes of seal (nonce and
    /// tag) around the tree's page, so the tree works with `diskPageSize − overhead` bytes, which
    /// is not a power of two. The codec and checksum inside the page are unchanged.
    package init(sealedIn diskPageSize: Int, overhead: Int, checksum: PageChecksum = .crc32c) {
        precondition(Self.isValid(pageSize: diskPageSize) && overhead >= 0 && diskPageSize - overhead >= PageLayout.pageSizes.lowerBound / 2,
                     "PageFormat: a sealed page of \(diskPageSize) bytes with \(overhead) bytes of seal")
        pageSize = diskPageSize - overhead
        self.checksum = checksum
    }
}
