import Foundation
import YapDBEngine

// Where a search results view keeps its query: in its state's stored tag, so the query is in
// the snapshot with the rows it found (every connection sees both together) and, for a
// persistent view, in the checkpoint's extension roots (docs/format.md, "View trees").
//
// Stored tag: blocks mode `TAG 0x1E QUERY`; parent-view mode `TAG 0x1E QUERY 0x1F PARENT`
// (a filtered view's tag followed by its parent's stored tag). Neither separator can occur in
// TAG or QUERY: they are removed from both (control characters no one types).

extension YapDatabaseSearchResultsView {
    /// Separates the caller's tag from the query in the stored tag.
    static let querySeparator: Character = "\u{1E}"

    /// The stored tag for `query` (the filtered view adds its parent's).
    static func tag(_ base: String, query: String) -> String { clean(base) + String(querySeparator) + clean(query) }

    /// `text` without the tag separators.
    static func clean(_ text: String) -> String {
        text.contains(where: { $0 == querySeparator || $0 == "\u{1F}" })
            ? String(text.filter { $0 != querySeparator && $0 != "\u{1F}" }) : text
    }

    /// The query in a stored tag ("" when none).
    static func query(inTag tag: String) -> String {
        guard let start = tag.firstIndex(of: querySeparator) else { return "" }
        let rest = tag[tag.index(after: start)...]
        return String(rest.prefix { $0 != "\u{1F}" })
    }

    /// The caller's tag in a stored tag.
    static func base(inTag tag: String) -> String {
        String(tag.prefix { $0 != querySeparator && $0 != "\u{1F}" })
    }

    /// The current query as of `transaction`.
    func query(in transaction: YapDatabaseReadTransaction, name: String) -> String {
        guard let state = transaction.viewState(name) else { return "" }
        return Self.query(inTag: state.versionTag)
    }

    /// The query the view registered as `name` was stored with by the last checkpoint (its
    /// roots not yet claimed), whatever its tag; "" when nothing is stored. Reads no page.
    func storedQuery(name: String, database: YapDatabase) -> String {
        guard let bytes = database.engine.unclaimedExtensionRootBytes(Self.stateKey(name)),
              let tag = ViewState.versionTag(inRootBytes: bytes) else { return "" }
        return Self.query(inTag: tag)
    }
}

extension ViewState {
    /// The version tag in a view's root bytes (`rootBytes(catalog:rowGroups:)`); nil when they
    /// do not start like a view's.
    static func versionTag(inRootBytes bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { raw -> String? in
            guard raw.first == rootLayout else { return nil }
            var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[1...]))
            return try? reader.readString()
        }
    }
}
