/// Names of the files beside the main file (docs/format.md §1), and finding them.
package struct DatabaseFiles: Sendable {
    /// The main file's path; every other file's name starts with it.
    package let mainPath: String
    package let directory: String
    package let mainName: String

    package init(mainPath: String) {
        self.mainPath = mainPath
        self.directory = Paths.directory(of: mainPath)
        self.mainName = Paths.fileName(of: mainPath)
    }

    package func segmentPath(_ number: UInt32) -> String {
        mainPath + Format.segmentInfix + Self.padded(number)
    }

    /// The lock file, `NAME-lock` (docs/format.md §1): what every open locks.
    package var lockPath: String { mainPath + Format.lockSuffix }

    /// The shared-state file, `NAME-shm` (docs/format.md §14): the published state and the
    /// writer lock of a database opened with multi-process support.
    package var sharedStatePath: String { mainPath + Format.sharedStateSuffix }

    package func checkpointPath(_ number: UInt32) -> String {
        mainPath + Format.checkpointInfix + Self.padded(number)
    }

    static func padded(_ number: UInt32) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, Format.fileNumberDigits - digits.count)) + digits
    }

    /// What a directory listing holds for this database.
    package struct Listing: Sendable, Equatable {
        package var segments: [UInt32] = []
        package var checkpoints: [UInt32] = []
        /// Paths of temporary files (interrupted creations, checkpoints, compactions).
        package var temporaries: [String] = []

        package init() {}
    }

    /// Lists the database's segments and checkpoints (sorted by number) and temporaries: only
    /// names this engine creates (`isTemporary`), never another program's file that merely
    /// starts with the database's name.
    package func list(_ fs: any FileSystem) throws(IOFailure) -> Listing {
        var listing = Listing()
        for name in try fs.listDirectory(directory) where name.hasPrefix(mainName) && name != mainName {
            let rest = name.dropFirst(mainName.count)
            if Self.isTemporary(rest) {
                listing.temporaries.append(Paths.join(directory, name))
            } else if rest.hasPrefix(Format.segmentInfix), let n = Self.number(rest.dropFirst(Format.segmentInfix.count)) {
                listing.segments.append(n)
            } else if rest.hasPrefix(Format.checkpointInfix), let n = Self.number(rest.dropFirst(Format.checkpointInfix.count)) {
                listing.checkpoints.append(n)
            }
        }
        listing.segments.sort()
        listing.checkpoints.sort()
        listing.temporaries.sort()
        return listing
    }

    /// Whether `rest` (a name after the main file's name) is one of the temporary names the
    /// engine writes (docs/format.md §1): exactly `-creating`, or
    /// `-checkpoint-` + ten digits + `.tmp`.
    static func isTemporary(_ rest: Substring) -> Bool {
        if rest == Format.creatingSuffix { return true }
        guard rest.hasPrefix(Format.checkpointInfix), rest.hasSuffix(Format.temporarySuffix) else { return false }
        let digits = rest.dropFirst(Format.checkpointInfix.count).dropLast(Format.temporarySuffix.count)
        return number(digits) != nil
    }

    static func number(_ text: Substring) -> UInt32? {
        guard text.count == Format.fileNumberDigits, text.allSatisfy({ $0 >= "0" && $0 <= "9" }) else { return nil }
        return UInt32(text)
    }
}

/// The durability of commits (docs/format.md §7).
package enum SyncMode: Sendable, Equatable {
    /// Sync every commit before it returns.
    case full
    /// Sync when a segment rolls, at checkpoints and at close.
    case normal
    /// Never sync log segments.
    case off
}
