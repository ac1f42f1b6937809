import YapDBIndex  // page ids, formats and sources: the probe opens trees at pages of its own
import YapDBEngine
import YapDBFullText

/// The full-text index's trees over pages the caller supplies, for the `postings` fuzz target
/// (`YapDBFuzzEntry`, which sees `package` API only): every query form, a verify, and changes
/// run over them and must end in a value or a typed error (`PageError` opening a tree, `EngineError` after), never a trap, a hang or a huge
/// allocation.
package enum FullTextPagesProbe {
    /// Queries run over the pages: one of each plan the searcher makes.
    static let queries = ["alpha", "alpha beta", "\"beta alpha\"", "al*", "c0:gamma", "NEAR(alpha gamma, 2)",
                          "beta NOT gamma", "^gamma", "(alpha OR delta) AND NOT beta"]

    /// Opens the four trees at `roots` (terms, postings, positions, documents; `PageID.none`:
    /// empty) with `columnCount` columns and exercises them. Returns how many steps ended in a
    /// typed error (for the harness's statistics); traps are the finding.
    @discardableResult
    package static func exercise(roots: [PageID], columnCount: Int, format: PageFormat, source: any PageSource) -> Int {
        guard roots.count == 4, columnCount > 0 else { return 0 }
        let empty = ExtensionTree(PagedBTree(format: format, source: source))
        var state = FullTextState(versionTag: "", signature: "", columnCount: columnCount, empty: empty)
        do throws(PageError) {
            func open(_ page: PageID) throws(PageError) -> ExtensionTree {
                page == .none ? empty : ExtensionTree(try PagedBTree(rootPage: page, format: format, source: source))
            }
            state.terms = try open(roots[0])
            state.postings = try open(roots[1])
            state.positions = try open(roots[2])
            state.documents = try open(roots[3])
        } catch {
            return 1
        }
        state.documentCount = state.documents.count
        var errors = 0
        let tokenizer = FTSTokenizer(.default)
        let columns = (0..<columnCount).map { "c\($0)" }
        for text in queries {
            guard let query = try? FTSQuery.parse(text, columnNames: columns, tokenizer: tokenizer) else { continue }
            let searcher = FullTextSearcher(state: state, query: query)
            do throws(EngineError) {
                _ = try searcher.count()
                _ = try searcher.ranked(weights: [2], limit: 3)
                _ = try searcher.ranked(weights: [], limit: nil)
                _ = try searcher.matches(1)
            } catch {
                errors += 1
            }
        }
        do throws(EngineError) {
            try state.validateTrees()
            _ = try state.figures()
            var problems: [String] = []
            _ = try state.allPostings(checking: &problems)
        } catch {
            errors += 1
        }
        // Changes over hostile pages: typed errors or a state that can still be written.
        do throws(EngineError) {
            try state.removeRow(1)
            let texts: [String?] = Array(repeating: "alpha beta gamma", count: columnCount)
            let document = FTSDocument(texts: texts, tokenizer: tokenizer)
            try state.setRow(1 << 40, FullTextAnalysis(columns: document.columns.map { $0.map { ($0.term, $0.position) } },
                                                       indexable: state.isIndexable))
        } catch {
            errors += 1
        }
        return errors
    }

    /// A real index of `rows` rows over `columnCount` columns, written as pages numbered from 1
    /// (the seeds of the fuzz target): its four roots and its pages.
    package static func writtenIndex(rows: Int, columnCount: Int, format: PageFormat) -> (roots: [PageID], pages: [PageID: [UInt8]])? {
        var state = FullTextState(versionTag: "", signature: "", columnCount: columnCount,
                                  empty: ExtensionTree(PagedBTree(format: format, source: EmptyPageSource())))
        let tokenizer = FTSTokenizer(.default)
        let words = ["alpha", "beta", "gamma", "delta", "alps", "Résumé"]
        do throws(EngineError) {
            for i in 0..<rows {
                let texts: [String?] = (0..<columnCount).map { c in
                    (0..<(1 + (i + c) % 5)).map { words[(i * 7 + c * 3 + $0) % words.count] }.joined(separator: " ")
                }
                let document = FTSDocument(texts: texts, tokenizer: tokenizer)
                try state.setRow(UInt64(i + 1), FullTextAnalysis(columns: document.columns.map { $0.map { ($0.term, $0.position) } },
                                                                 indexable: state.isIndexable))
            }
        } catch {
            return nil
        }
        var pages: [PageID: [UInt8]] = [:]
        var next: PageID = 0
        var roots: [PageID] = []
        for tree in state.extensionTrees {
            let flush = tree.pagedTree.flush(allocate: { () throws(Never) -> PageID in next += 1; return next },
                                   write: { (id, bytes) throws(Never) in pages[id] = Array(bytes) })
            roots.append(flush.root)
        }
        return (roots, pages)
    }
}
