#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// SQLite FTS5's bm25 ranking: k1 = 1.2, b = 0.75, idf floored at 1e-6.
package enum FTSRanking {
    package static let k1 = 1.2
    package static let b = 0.75
    /// The smallest idf: FTS5 raises a non-positive idf (a phrase in more than half the rows) to this.
    package static let minimumIDF = 1e-6

    /// idf = ln((N - n + 0.5) / (n + 0.5)), at least `minimumIDF`, for a phrase found in `documentsMatching` of `documentCount` rows.
    package static func idf(documentCount: Int, documentsMatching: Int) -> Double {
        let total = Double(documentCount), matching = Double(documentsMatching)
        let value = log((total - matching + 0.5) / (matching + 0.5))
        return value > 0 ? value : minimumIDF
    }

    /// The bm25 score of one row. Higher is better (FTS5's `bm25()` returns the negation of this).
    ///
    /// - Parameters:
    ///   - hitCounts: `hitCounts[phrase][column]`, as `FTSMatcher.phraseHitCounts` gives them.
    ///   - idfs: per phrase, `idf(documentCount:documentsMatching:)`.
    ///   - weights: per column (a missing one is 1).
    ///   - documentLength: tokens in all columns of the row; `averageLength`: the mean over all rows.
    package static func bm25(hitCounts: [[Int]], idfs: [Double], weights: [Double], documentLength: Int, averageLength: Double) -> Double {
        let lengthFactor = averageLength > 0 ? Double(documentLength) / averageLength : 0
        let norm = k1 * (1 - b + b * lengthFactor)
        var score = 0.0
        for (phrase, counts) in hitCounts.enumerated() {
            var frequency = 0.0
            for (column, count) in counts.enumerated() where count > 0 {
                frequency += (column < weights.count ? weights[column] : 1) * Double(count)
            }
            let idf = phrase < idfs.count ? idfs[phrase] : minimumIDF
            score += idf * (frequency * (k1 + 1)) / (frequency + norm)
        }
        return score
    }
}
