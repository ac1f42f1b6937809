/// Names one page of the index: an index file number and a page number inside that file
/// (docs/format.md §9).
///
/// Encoded in a `UInt64` as `file << 32 | page`: the high 32 bits are the file number
/// (`NAME-index-NNNNNNNNNN`, ≥ 1), the low 32 bits the page number (≥ 1; page 0 is the file's
/// header page). The page starts at byte `page × pageSize` of its file. `rawValue` 0
/// (`IndexPageID.none`) means "no page" (an empty tree). Ordered by file, then page.
package struct IndexPageID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// `file << 32 | page`, as stored on disk (u64, little-endian).
    package var rawValue: UInt64

    package init(rawValue: UInt64) { self.rawValue = rawValue }

    package init(file: UInt32, page: UInt32) {
        rawValue = UInt64(file) << 32 | UInt64(page)
    }

    /// "No page": the root of an empty tree.
    package static let none = IndexPageID(rawValue: 0)

    /// The index file number.
    package var file: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 32) }
    /// The page number inside the file (1-based; 0 is the header page).
    package var page: UInt32 { UInt32(truncatingIfNeeded: rawValue) }
    /// Whether the id can name a page at all: file ≥ 1 and page ≥ 1.
    package var isValid: Bool { file >= 1 && page >= 1 }

    /// The byte offset of the page in its file.
    package func offset(pageSize: Int) -> Int64 { Int64(page) * Int64(pageSize) }

    package static func < (a: IndexPageID, b: IndexPageID) -> Bool { a.rawValue < b.rawValue }

    package var description: String { "\(file):\(page)" }
}

/// An index file and the bytes of it that count: the length a root record or a writer's sync
/// vouches for (a multiple of the page size, the header page included).
package struct IndexFileExtent: Hashable, Sendable {
    package var number: UInt32
    package var length: Int64

    package init(number: UInt32, length: Int64) {
        self.number = number
        self.length = length
    }
}

extension DatabaseFiles {
    /// `NAME-index-NNNNNNNNNN`.
    package func indexPath(_ number: UInt32) -> String {
        mainPath + Format.indexInfix + Self.padded(number)
    }

    /// The numbers of the index files in the directory, ascending (whatever a root names or
    /// not: the engine removes those no root names at open).
    ///
    /// - Throws: `IOFailure` from listing the directory.
    package func listIndexFiles(_ fs: any FileSystem) throws(IOFailure) -> [UInt32] {
        var numbers: [UInt32] = []
        for name in try fs.listDirectory(directory) where name.hasPrefix(mainName + Format.indexInfix) {
            if let number = Self.number(name.dropFirst(mainName.count + Format.indexInfix.count)) {
                numbers.append(number)
            }
        }
        return numbers.sorted()
    }
}
