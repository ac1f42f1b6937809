import YapDBEngine

/// A full-text index on index pages (`ExtensionTreesState`): the index checkpoint writes the
/// four trees' unwritten nodes with the key directory's pages and records their roots; a
/// reopen opens the trees from them without reading a page.
///
/// Root bytes (docs/format.md §10, "Extension roots"): the tag and the signature (varint length
/// + UTF-8 each), the column count, the document count and the total length (varints), then
/// the `ExtensionTreeRoot` of `terms`, `postings`, `positions` and `documents`, then the layout
/// number (`layout`; roots without it, or with another, are an older layout: the index rebuilds).
extension FullTextState: ExtensionTreesState {
    var extensionTrees: [ExtensionTree] { [terms, postings, positions, documents] }

    /// The layout of the trees' entries this build writes (docs/format.md §11): 4 since postings
    /// and positions are keyed by term id (3: term entries carry their tail count; 2: positions
    /// beside the postings blocks; layout 1 wrote no number).
    static let layout: UInt64 = 4

    func rootBytes(_ roots: [ExtensionTreeRoot]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendString(versionTag)
        bytes.appendString(signature)
        bytes.appendVarint(UInt64(columnCount))
        bytes.appendVarint(UInt64(documentCount))
        bytes.appendVarint(UInt64(totalLength))
        for root in roots { root.append(to: &bytes) }
        bytes.appendVarint(Self.layout)
        return bytes
    }

    /// This state with `transform(i, tree)` applied to each tree (`extensionTrees` order).
    func mapExtensionTrees(_ transform: (Int, ExtensionTree) -> ExtensionTree) -> FullTextState {
        var state = self
        state.terms = transform(0, terms)
        state.postings = transform(1, postings)
        state.positions = transform(2, positions)
        state.documents = transform(3, documents)
        return state
    }

    /// Opens the state a claim hands back (reading no page); nil when the bytes are not a
    /// full-text index's roots.
    init?(claimed: ClaimedExtensionRoots) {
        var decoded: FullTextState?
        claimed.rootBytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            do throws(ByteReader.Overrun) {
                let tag = try reader.readString()
                let signature = try reader.readString()
                let columnCount = try reader.readLength(max: 4096)
                let documentCount = try reader.readLength(max: Int(Int64.max / 2))
                let totalLength = try reader.readLength(max: Int(Int64.max / 2))
                var cursor = reader.position
                var roots: [ExtensionTreeRoot] = []
                for _ in 0..<4 {
                    guard let root = ExtensionTreeRoot.read(raw, &cursor) else { return }
                    roots.append(root)
                }
                var tail = ByteReader(UnsafeRawBufferPointer(rebasing: raw[cursor...]))
                guard columnCount > 0, (try? tail.readVarint()) == Self.layout, tail.isAtEnd else { return }
                var state = FullTextState(versionTag: tag, signature: signature, columnCount: columnCount,
                                          empty: ExtensionTree(emptyIn: claimed))
                state.terms = ExtensionTree(root: roots[0], in: claimed)
                state.postings = ExtensionTree(root: roots[1], in: claimed)
                state.positions = ExtensionTree(root: roots[2], in: claimed)
                state.documents = ExtensionTree(root: roots[3], in: claimed)
                state.documentCount = documentCount
                state.totalLength = totalLength
                decoded = state
            } catch {
                return
            }
        }
        guard let decoded else { return nil }
        self = decoded
    }
}
