import Foundation

/// Options of a search results view (YapDatabase's `YapDatabaseSearchResultsViewOptions`, a
/// subclass of `YapDatabaseViewOptions`).
///
/// Inherited: `isPersistent` (here **false** by default, unlike other views: set it to keep the
/// results and the query across launches), `allowedCollections`, and
/// `skipInitialViewPopulation` (not used: the view is populated by searches).
///
/// Threading: a plain mutable object; the view copies what it needs when it is made.
public class YapDatabaseSearchResultsViewOptions: YapDatabaseViewOptions {
    /// In parent-view mode, the parent's groups whose rows may appear (nil: all). Ignored in
    /// blocks mode.
    public var allowedGroups: YapWhitelistBlacklist?

    /// Set to make `snippet(forKey:inCollection:)` answer (nil: no snippets). Stored as a copy
    /// and read back as a copy, so changing the object later changes nothing already set.
    public var snippetOptions: YapDatabaseFullTextSearchSnippetOptions? {
        get { storedSnippetOptions?.copy() as? YapDatabaseFullTextSearchSnippetOptions }
        set { storedSnippetOptions = newValue?.copy() as? YapDatabaseFullTextSearchSnippetOptions }
    }
    private var storedSnippetOptions: YapDatabaseFullTextSearchSnippetOptions?

    /// The defaults: not persistent, every collection and group, no snippets.
    public required init() {
        super.init()
        isPersistent = false
    }

    /// A copy (the snippet options copied too).
    public override func copy(with zone: NSZone? = nil) -> Any {
        let copy = super.copy(with: zone) as! YapDatabaseSearchResultsViewOptions
        copy.allowedGroups = allowedGroups
        copy.storedSnippetOptions = storedSnippetOptions
        return copy
    }
}
