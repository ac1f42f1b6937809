import Foundation
import YapDBFullText
import YapDBEngine

/// A row's tokens as the index stores them: its length per column and its distinct terms, each
/// with its occurrences (column, position) — in flat arrays, so analysing a row allocates a
/// handful of buffers rather than one array per term and column.
struct FullTextAnalysis {
    /// One occurrence of a term.
    struct Occurrence {
        var column: Int
        var position: Int
    }

    var lengths: [Int]
    /// The distinct indexable terms, in key (UTF-8 byte) order.
    private(set) var termNames: [String] = []
    /// Term `t`'s occurrences are `occurrences[starts[t]..<starts[t + 1]]`, by column, then
    /// position, ascending.
    private(set) var starts: [Int] = [0]
    private(set) var occurrences: [Occurrence] = []

    var totalLength: Int { lengths.reduce(0, +) }

    /// The terms with their positions by column (the row-at-a-time path and tests).
    var terms: [(term: String, columns: [(column: Int, positions: [Int])])] {
        termNames.indices.map { t in
            var columns: [(column: Int, positions: [Int])] = []
            for occurrence in occurrences[starts[t]..<starts[t + 1]] {
                if columns.last?.column == occurrence.column {
                    columns[columns.count - 1].positions.append(occurrence.position)
                } else {
                    columns.append((occurrence.column, [occurrence.position]))
                }
            }
            return (termNames[t], columns)
        }
    }

    /// Groups `columns` (one token list per column, as the tokenizer made them) by term,
    /// leaving out the terms `indexable` refuses: each token's term is looked up once in a
    /// dictionary of the row's terms, the occurrences are grouped by a counting sort, and the
    /// terms sorted by their UTF-8 bytes with `memcmp`.
    init(document columns: [[FTSToken]], indexable: (String) -> Bool) {
        lengths = columns.map(\.count)
        let tokenCount = lengths.reduce(0, +)
        var places: [String: Int] = [:]
        places.reserveCapacity(tokenCount)
        var names: [String] = []
        names.reserveCapacity(tokenCount)
        var counts: [Int] = []
        counts.reserveCapacity(tokenCount)
        var tokenPlaces: [Int] = []
        tokenPlaces.reserveCapacity(tokenCount)
        for tokens in columns {
            for token in tokens {
                let place: Int
                if let known = places[token.term] {
                    place = known
                } else if indexable(token.term) {
                    place = names.count
                    names.append(token.term)
                    counts.append(0)
                    places[token.term] = place
                } else {
                    place = -1
                    places[token.term] = place
                }
                tokenPlaces.append(place)
                if place >= 0 { counts[place] += 1 }
            }
        }
        let order = names.indices.sorted { FullTextState.utf8Precedes(names[$0], names[$1]) }
        var rank = [Int](repeating: 0, count: names.count)
        starts.reserveCapacity(names.count + 1)
        for (i, place) in order.enumerated() {
            rank[place] = i
            starts.append(starts[i] + counts[place])
        }
        termNames = order.map { names[$0] }
        var cursor = Array(starts.dropLast())
        occurrences = [Occurrence](repeating: Occurrence(column: 0, position: 0), count: starts[names.count])
        var token = 0
        for (column, tokens) in columns.enumerated() {
            for item in tokens {
                let place = tokenPlaces[token]
                token += 1
                guard place >= 0 else { continue }
                let t = rank[place]
                occurrences[cursor[t]] = Occurrence(column: column, position: item.position)
                cursor[t] += 1
            }
        }
        // Positions come in order from the tokenizer; sort only a term whose are not.
        for t in termNames.indices {
            let range = starts[t]..<starts[t + 1]
            var sorted = true
            for i in range.dropFirst() where occurrences[i].column == occurrences[i - 1].column
                && occurrences[i].position < occurrences[i - 1].position {
                sorted = false
                break
            }
            if !sorted {
                occurrences[range].sort { ($0.column, $0.position) < ($1.column, $1.position) }
            }
        }
    }

    /// The same from (term, position) pairs per column.
    init(columns: [[(term: String, position: Int)]], indexable: (String) -> Bool) {
        self.init(document: columns.map { $0.map { FTSToken(term: $0.term, position: $0.position, utf8Range: 0..<0) } },
                  indexable: indexable)
    }

    /// Appends term `t`'s counts as a postings block stores them (the number of columns, then
    /// (column step, occurrences) per column) to `counts`, and its positions (`FullTextPositions`
    /// bytes) to `positions`. Returns its occurrences over every column.
    func appendEncoded(_ t: Int, counts: inout [UInt8], positions: inout [UInt8]) -> Int {
        let range = starts[t]..<starts[t + 1]
        var columnCount = 0, previous = -1
        for i in range where occurrences[i].column != previous {
            columnCount += 1
            previous = occurrences[i].column
        }
        counts.appendVarint(UInt64(columnCount))
        var i = range.lowerBound, previousColumn = 0
        while i < range.upperBound {
            let column = occurrences[i].column
            var end = i + 1
            while end < range.upperBound && occurrences[end].column == column { end += 1 }
            counts.appendVarint(UInt64(column - previousColumn))
            counts.appendVarint(UInt64(end - i))
            positions.appendVarint(UInt64(column - previousColumn))
            positions.appendVarint(UInt64(end - i))
            var previousPosition = 0
            for j in i..<end {
                positions.appendVarint(UInt64(occurrences[j].position - previousPosition))
                previousPosition = occurrences[j].position
            }
            previousColumn = column
            i = end
        }
        return range.count
    }
}
