/// The brute-force evaluator of a query over one document: the reference the index is tested
/// against, and what the search results view uses to re-check one changed row.
package enum FTSMatcher {
    /// Whether `document` matches `query` (a query without terms matches nothing).
    package static func matches(_ query: FTSQuery, _ document: FTSDocument) -> Bool {
        guard let root = query.root else { return false }
        return matches(root, document)
    }

    /// Per leaf phrase (in `query.phrases` order), per column, the number of times the phrase occurs
    /// in that column: bm25's term frequencies. As in FTS5, an occurrence counts only where the
    /// query says it matters: inside its column filter, inside a clump that satisfies its NEAR group,
    /// and only when every expression around it matches this row (so the phrases of a failed `AND`
    /// branch of an `OR`, and of the excluded side of a `NOT`, count 0 even if they occur).
    package static func phraseHitCounts(_ query: FTSQuery, _ document: FTSDocument) -> [[Int]] {
        phraseInstances(query, document).map { $0.map(\.count) }
    }

    /// Per leaf phrase (in `query.phrases` order), per column, the token positions (ascending) where
    /// the phrase starts, counted as `phraseHitCounts` counts them: FTS5's phrase instances, which
    /// bm25, snippets and highlights read.
    package static func phraseInstances(_ query: FTSQuery, _ document: FTSDocument) -> [[[Int]]] {
        var result: [[[Int]]] = []
        result.reserveCapacity(query.phrases.count)
        let none = Array(repeating: [Int](), count: document.columns.count)
        func walk(_ node: FTSQueryNode, active parentActive: Bool) {
            let active = parentActive && matches(node, document)
            switch node {
            case .phrase(let phrase, let columns):
                result.append(document.columns.indices.map { column in
                    active && allows(columns, column) ? starts(of: phrase, in: document.columns[column]) : []
                })
            case .near(let group, let distance, let columns):
                var lists = Array(repeating: none, count: group.count)
                for column in document.columns.indices where active && allows(columns, column) {
                    let used = nearInstances(group, distance: distance, in: document.columns[column])
                    for index in group.indices { lists[index][column] = used[index] }
                }
                result.append(contentsOf: lists)
            case .and(let children), .or(let children):
                for child in children { walk(child, active: active) }
            case .not(let left, let right):
                walk(left, active: active)
                walk(right, active: active)
            }
        }
        if let root = query.root { walk(root, active: true) }
        return result
    }

    static func matches(_ node: FTSQueryNode, _ document: FTSDocument) -> Bool {
        switch node {
        case .phrase(let phrase, let columns):
            return document.columns.indices.contains { column in
                allows(columns, column) && !starts(of: phrase, in: document.columns[column]).isEmpty
            }
        case .near(let group, let distance, let columns):
            return document.columns.indices.contains { column in
                allows(columns, column) && !nearInstances(group, distance: distance, in: document.columns[column])[0].isEmpty
            }
        case .and(let children): return children.allSatisfy { matches($0, document) }
        case .or(let children): return children.contains { matches($0, document) }
        case .not(let left, let right): return matches(left, document) && !matches(right, document)
        }
    }

    @inline(__always)
    static func allows(_ columns: [Int]?, _ column: Int) -> Bool {
        columns.map { $0.contains(column) } ?? true
    }

    /// Whether `term` (a token's) satisfies the phrase's term at `index`.
    @inline(__always)
    static func termMatches(_ phrase: FTSPhrase, _ index: Int, _ term: String) -> Bool {
        if phrase.lastIsPrefix && index == phrase.terms.count - 1 {
            return term.utf8.starts(with: phrase.terms[index].utf8)
        }
        return term == phrase.terms[index]
    }

    /// The token positions in `tokens` where `phrase` starts, ascending.
    package static func starts(of phrase: FTSPhrase, in tokens: [FTSToken]) -> [Int] {
        let length = phrase.terms.count
        guard length > 0, tokens.count >= length else { return [] }
        var result: [Int] = []
        let last = phrase.mustStartColumn ? 0 : tokens.count - length
        for start in 0...last {
            var all = true
            for offset in 0..<length where !termMatches(phrase, offset, tokens[start + offset].term) {
                all = false
                break
            }
            if all { result.append(tokens[start].position) }
        }
        return result
    }

    /// The index of the first element of ascending `list` that is at least `value`.
    static func firstIndex(in list: [Int], atLeast value: Int) -> Int {
        var low = 0, high = list.count
        while low < high {
            let middle = (low + high) / 2
            if list[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Per phrase of a NEAR group, the start positions (ascending) that belong to some clump in which
    /// every phrase occurs and at most `distance` tokens lie between the end of the clump's first
    /// phrase and the start of its last. Every list is empty when the group does not match.
    ///
    /// A clump is found from its first instance F (lowest start): every other phrase needs an instance
    /// starting in F.start ... F.end + distance; every instance in that window then belongs to a clump.
    package static func nearInstances(_ group: [FTSPhrase], distance: Int, in tokens: [FTSToken]) -> [[Int]] {
        let instances = group.map { starts(of: $0, in: tokens) }
        var used = Array(repeating: Set<Int>(), count: group.count)
        if instances.contains(where: \.isEmpty) { return Array(repeating: [], count: group.count) }
        for (first, starts) in instances.enumerated() {
            let length = group[first].terms.count
            for start in starts {
                let windowEnd = start + length + distance
                // Each other phrase's instances inside start...windowEnd (binary search: lists are ascending).
                var windows: [Range<Int>] = []
                windows.reserveCapacity(group.count)
                for other in group.indices {
                    let list = instances[other]
                    let low = firstIndex(in: list, atLeast: start), high = firstIndex(in: list, atLeast: windowEnd + 1)
                    windows.append(low..<high)
                }
                guard group.indices.allSatisfy({ $0 == first || !windows[$0].isEmpty }) else { continue }
                used[first].insert(start)
                for other in group.indices where other != first {
                    for index in windows[other] { used[other].insert(instances[other][index]) }
                }
            }
        }
        return used.map { $0.sorted() }
    }
}
