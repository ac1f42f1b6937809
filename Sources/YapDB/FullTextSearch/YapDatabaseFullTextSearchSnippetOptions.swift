import Foundation

/// How a full-text query's snippets look: the text around matched terms, the marks around each
/// match, the ellipses where the excerpt cuts the text, the column it comes from and its size
/// in tokens. Pass it to the `…(matching:with:using:)` enumerations or to a search results
/// view's options. Snippets are made the same way whatever the index's `ftsVersion`.
///
/// Threading: a plain mutable object; do not change it while a query uses it (the queries copy
/// its values when they start).
public final class YapDatabaseFullTextSearchSnippetOptions: NSObject, NSCopying, @unchecked Sendable {
    /// The default mark before a match: `"<b>"`.
    public class func defaultStartMatchText() -> String { "<b>" }
    /// The default mark after a match: `"</b>"`.
    public class func defaultEndMatchText() -> String { "</b>" }
    /// The default text where the excerpt cuts the column's text: `"..."` (three dots).
    public class func defaultEllipsesText() -> String { "..." }
    /// The default excerpt size: 15 tokens.
    public class func defaultNumberOfTokens() -> Int32 { 15 }

    /// The most tokens an excerpt holds (a larger `numberOfTokens` counts as this).
    public static let maximumNumberOfTokens: Int32 = 64

    /// Put before each matched token (default `"<b>"`).
    public var startMatchText: String = YapDatabaseFullTextSearchSnippetOptions.defaultStartMatchText()
    /// Put after each matched token (default `"</b>"`).
    public var endMatchText: String = YapDatabaseFullTextSearchSnippetOptions.defaultEndMatchText()
    /// Put where the excerpt does not reach the start or the end of the text (default `"..."`).
    public var ellipsesText: String = YapDatabaseFullTextSearchSnippetOptions.defaultEllipsesText()
    /// The column the excerpt is taken from; nil (the default) lets the best column win. A
    /// name that is not a column of the index counts as nil (logged).
    public var columnName: String?

    /// The excerpt's size in tokens (default 15). Setting 0 resets it to the default; a
    /// negative count is taken as its absolute value, and at most 64 are used.
    public var numberOfTokens: Int32 = YapDatabaseFullTextSearchSnippetOptions.defaultNumberOfTokens() {
        didSet { if numberOfTokens == 0 { numberOfTokens = Self.defaultNumberOfTokens() } }
    }

    /// Options with the defaults.
    public override init() { super.init() }

    /// A copy with the same values.
    public func copy(with zone: NSZone? = nil) -> Any {
        let copy = YapDatabaseFullTextSearchSnippetOptions()
        copy.startMatchText = startMatchText
        copy.endMatchText = endMatchText
        copy.ellipsesText = ellipsesText
        copy.columnName = columnName
        copy.numberOfTokens = numberOfTokens
        return copy
    }

    /// The tokens an excerpt holds: |numberOfTokens|, at most 64.
    var effectiveTokens: Int {
        Int(min(numberOfTokens.magnitude, UInt32(Self.maximumNumberOfTokens)))
    }
}
