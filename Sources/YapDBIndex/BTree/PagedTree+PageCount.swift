// PagedTree+PageCount: how many written pages a tree still references, for statistics.

extension PagedTree where Node: PagedNode {
    /// The written pages this tree value references: every clean page reachable from the root
    /// (through clean and dirty nodes), and every dirty node a published flush already wrote
    /// (its page holds its current contents). Pages a newer, unwritten dirty node replaced are
    /// not counted: they are garbage once the next checkpoint publishes.
    ///
    /// Reads only branch pages (a clean page at level 0 is counted without reading it), so the
    /// cost is about one page read per branch page. For `stats()`.
    ///
    /// - Throws: `PageError` from reading a branch page.
    func countWrittenPages() throws(PageError) -> Int {
        let pages = self.pages, format = self.format
        func count(_ ref: ChildRef<Node>, level: Int) throws(PageError) -> Int {
            if let node = ref.node {
                var total = node.mark.flushedPage == .none ? 0 : 1
                for child in node.children { total += try count(child, level: level - 1) }
                return total
            }
            guard ref.page != .none else { return 0 }
            guard level > 0 else { return 1 }
            let node = try Node.load(ref.page, level: level, count: ref.count, format: format, pages: pages)
            var total = 1
            for child in node.children { total += try count(child, level: level - 1) }
            return total
        }
        guard height > 0 else { return 0 }
        return try count(root, level: height - 1)
    }
}

extension PagedBTree {
    /// The written pages this tree references; see `PagedTree.countWrittenPages()`.
    package func writtenPageCount() throws(PageError) -> Int { try countWrittenPages() }
}

extension PagedRowTree {
    /// The written pages this tree references; see `PagedTree.countWrittenPages()`.
    package func writtenPageCount() throws(PageError) -> Int { try countWrittenPages() }
}
