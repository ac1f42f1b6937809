/// A row's address: a key within a collection (YapDatabase's `YapCollectionKey`).
///
/// Changesets and notifications hold sets of these. Threading: a plain value.
public struct YapCollectionKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The collection; `""` is the default collection (a `nil` collection in the API means `""`).
    public let collection: String
    /// The key within ``collection``.
    public let key: String

    /// A key in a collection.
    /// - Parameters:
    ///   - collection: the collection; `nil` means `""`.
    ///   - key: the key.
    public init(collection: String?, key: String) {
        self.collection = collection ?? ""
        self.key = key
    }

    /// Orders by collection, then key (so sorted output is stable for tests and tools).
    public static func < (lhs: YapCollectionKey, rhs: YapCollectionKey) -> Bool {
        lhs.collection != rhs.collection ? lhs.collection < rhs.collection : lhs.key < rhs.key
    }

    /// `collection/key`, e.g. `people/alice` (`/alice` in the default collection).
    public var description: String { "\(collection)/\(key)" }
}
