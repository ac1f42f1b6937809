import Foundation

/// Options of a search results view (YapDatabase's `YapDatabaseSearchResultsViewOptions`).
///
/// YapDatabase makes this a subclass of `YapDatabaseViewOptions`; here it is a class of its own
/// with the same properties (`YapDatabaseViewOptions` is final), so code that sets them reads
/// the same.
///
/// Threading: a plain mutable object; the view copies what it needs when it is made.
public final class YapDatabaseSearchResultsViewOptions: NSObject, NSCopying, @unchecked Sendable {
    /// Whether the results outlive the process (default false, unlike other views). The results
    /// view starts empty at every registration either way (perform the search again); the
    /// flag is accepted for compatibility.
    public var isPersistent = false
    /// The collections whose rows may appear (nil: all).
    public var allowedCollections: YapWhitelistBlacklist?
    /// Accepted for compatibility: a search results view starts empty anyway.
    public var skipInitialViewPopulation = false
    /// In parent-view mode, the parent's groups whose rows may appear (nil: all).
    public var allowedGroups: YapWhitelistBlacklist?
    /// Set to keep snippets for `snippet(forKey:inCollection:)` (nil: no snippets).
    public var snippetOptions: YapDatabaseFullTextSearchSnippetOptions?

    /// The defaults: not persistent, every collection and group, no snippets.
    public override init() { super.init() }

    /// A copy (the snippet options copied too).
    public func copy(with zone: NSZone? = nil) -> Any {
        let copy = YapDatabaseSearchResultsViewOptions()
        copy.isPersistent = isPersistent
        copy.allowedCollections = allowedCollections
        copy.skipInitialViewPopulation = skipInitialViewPopulation
        copy.allowedGroups = allowedGroups
        copy.snippetOptions = snippetOptions?.copy() as? YapDatabaseFullTextSearchSnippetOptions
        return copy
    }
}
