import YapDBEngine

/// `YapDatabase.verify()`'s checks of a secondary index: the engine checks its trees' pages
/// (`validatePages`), the extension that they hold exactly what a rebuild from the handler holds.
extension SecondaryIndexState {
    /// One entry per indexed row in each column tree (the engine checks every tree's pages
    /// first: `ExtensionTreesState.validatePages`).
    func validateState() throws(EngineError) {
        for tree in columns where tree.count != rowCount {
            throw .extensionTreeCountMismatch(expected: rowCount, found: tree.count)
        }
    }

    /// The most differences reported for one index (the count of the rest is added).
    static let reportedDifferences = 20

    /// The ways this index differs from `expected` (a rebuild), one line each; empty when equal.
    /// (Tree shapes are `validatePages`'s and `validateState`'s.)
    /// - Throws: `EngineError` when a page of either cannot be read.
    ///
    /// Column entries must carry the rebuild's row keys; an object location may differ from
    /// the rebuild's (compaction moves records without rewriting the index) when
    /// `sameObject(rowid, stored, rebuilt)` accepts it: the record there is no longer that
    /// row's object (readers then use the key directory) or holds the same bytes.
    func differences(from expected: SecondaryIndexState,
                     sameObject: (UInt64, ValueLocation, ValueLocation) -> Bool) throws(EngineError) -> [String] {
        var problems: [String] = []
        let stored = try rowBytes(), rebuilt = try expected.rowBytes()
        for (rowid, bytes) in rebuilt.sorted(by: { $0.key < $1.key }) where stored[rowid] != bytes {
            problems.append(stored[rowid] == nil ? "row \(rowid) is missing" : "row \(rowid) holds other values")
        }
        for rowid in stored.keys.sorted() where rebuilt[rowid] == nil {
            problems.append("row \(rowid) is indexed but should not be")
        }
        for i in columns.indices where i < expected.columns.count {
            if try !Self.sameEntries(columns[i], expected.columns[i], sameObject: sameObject) {
                problems.append("column \(i) entries differ from a rebuild (\(columns[i].count), expected \(expected.columns[i].count))")
            }
        }
        guard problems.count > Self.reportedDifferences else { return problems }
        return Array(problems.prefix(Self.reportedDifferences)) + ["… and \(problems.count - Self.reportedDifferences) more"]
    }

    /// Every indexed row's encoded values, by row id.
    func rowBytes() throws(EngineError) -> [UInt64: [UInt8]] {
        var result: [UInt64: [UInt8]] = [:]
        try rows.forEach { key, value in
            let rowid = OrderedKeyEncoding.rowid(ofKey: UnsafeRawBufferPointer(rebasing: key[..<OrderedKeyEncoding.rowidSize]))
            result[rowid, default: []].append(contentsOf: value)
            return true
        }
        return result
    }

    /// Whether two column trees hold the same entries: the same keys, row keys, and objects
    /// (`sameObject`, as `differences(from:sameObject:)`).
    static func sameEntries(_ a: ExtensionTree, _ b: ExtensionTree,
                            sameObject: (UInt64, ValueLocation, ValueLocation) -> Bool) throws(EngineError) -> Bool {
        guard a.count == b.count else { return false }
        var entries: [(key: [UInt8], object: ValueLocation?, rowKey: [UInt8])] = []
        entries.reserveCapacity(a.count)
        var failure: EngineError?
        try a.forEach { key, value in
            do throws(EngineError) {
                let parts = try entryParts(value)
                entries.append((Array(key), parts?.object, parts.map { Array($0.rowKey) } ?? []))
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        var i = 0, same = true
        try b.forEach { key, value in
            defer { i += 1 }
            guard entries[i].key.elementsEqual(key) else { same = false; return false }
            do throws(EngineError) {
                guard let rebuilt = try entryParts(value) else { same = entries[i].object == nil; return same }
                guard let object = entries[i].object, entries[i].rowKey.elementsEqual(rebuilt.rowKey) else { same = false; return false }
                same = object == rebuilt.object || sameObject(OrderedKeyEncoding.rowid(ofKey: key), object, rebuilt.object)
            } catch {
                failure = error
                return false
            }
            return same
        }
        if let failure { throw failure }
        return same
    }
}
