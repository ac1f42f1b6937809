/// How other connections' caches follow a committed change (YapDatabase's `YapDatabasePolicy`).
///
/// Set per collection with `database.setObjectPolicy(_:forCollection:)` /
/// `setMetadataPolicy(_:forCollection:)`, or for every collection with the `setDefault…` forms.
/// Raw values match YapDatabase's.
public enum YapDatabasePolicy: Int, Sendable, Hashable, CaseIterable {
    /// Other connections evict the changed key; their next read deserializes the stored bytes.
    /// The default: no instance is shared between connections.
    case containment = 0
    /// Other connections store the writer's instance itself (only safe for immutable or
    /// thread-safe objects).
    case share = 1
    /// Other connections store a copy of the writer's instance (made with `NSCopying` where the
    /// object supports it; otherwise the key is evicted as with `containment`).
    case copy = 2
}
