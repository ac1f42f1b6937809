import Synchronization

/// A bounded least-recently-used cache of index pages, for the `pread` read mode
/// (`IndexReadMode.cached`).
///
/// Holds at most `capacity` pages, each with whether the reader's check (its checksum) passed
/// when it was read; a hit moves the page to the front, an insert past the capacity drops the
/// least recently used one. A dropped page stays valid for whoever still
/// holds its `IndexPage` (its bytes are reference counted).
///
/// Threading: any thread; one `Mutex` guards the table and the recency list, held only for
/// the lookup or insert (never during I/O).
package final class IndexPageCache: Sendable {
    /// The most pages held.
    package let capacity: Int
    private let state: Mutex<LRU>

    /// - Parameter capacity: at least 1 (smaller values act as 1).
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
        state = Mutex(LRU(capacity: max(1, capacity)))
    }

    /// A cached page: its bytes, and whether they passed the reader's check when read.
    package struct Entry: Sendable {
        package var page: FileMapping
        package var checked: Bool
    }

    /// The cached bytes of `id`, marked most recently used.
    package func lookup(_ id: IndexPageID) -> Entry? {
        state.withLock { $0.lookup(id) }
    }

    /// Caches `page` for `id` (`checked`: it passed the reader's check), dropping the least
    /// recently used page when full.
    package func insert(_ id: IndexPageID, _ page: FileMapping, checked: Bool = false) {
        state.withLock { $0.insert(id, Entry(page: page, checked: checked)) }
    }

    /// Drops every page of index file `file` (it was retired; its number may be used again).
    package func evict(file: UInt32) {
        state.withLock { $0.evict { $0.file == file } }
    }

    /// The number of pages held.
    package var count: Int { state.withLock { $0.table.count } }

    /// The table and a doubly linked recency list threaded through `nodes` by index.
    struct LRU {
        struct Node {
            var id: IndexPageID
            var page: Entry?
            var previous: Int
            var next: Int
        }

        let capacity: Int
        var table: [IndexPageID: Int] = [:]
        var nodes: [Node] = []
        var free: [Int] = []
        /// Most recently used node, or -1.
        var head = -1
        /// Least recently used node, or -1.
        var tail = -1

        init(capacity: Int) { self.capacity = capacity }

        mutating func lookup(_ id: IndexPageID) -> Entry? {
            guard let index = table[id] else { return nil }
            unlink(index)
            pushFront(index)
            return nodes[index].page
        }

        mutating func insert(_ id: IndexPageID, _ page: Entry) {
            if let index = table[id] {
                nodes[index].page = page
                unlink(index)
                pushFront(index)
                return
            }
            if table.count >= capacity, tail >= 0 { remove(tail) }
            let node = Node(id: id, page: page, previous: -1, next: -1)
            let index: Int
            if let reused = free.popLast() {
                nodes[reused] = node
                index = reused
            } else {
                nodes.append(node)
                index = nodes.count - 1
            }
            table[id] = index
            pushFront(index)
        }

        mutating func evict(where matches: (IndexPageID) -> Bool) {
            for (id, index) in table where matches(id) { remove(index) }
        }

        private mutating func remove(_ index: Int) {
            unlink(index)
            table[nodes[index].id] = nil
            nodes[index].page = nil
            free.append(index)
        }

        private mutating func unlink(_ index: Int) {
            let previous = nodes[index].previous, next = nodes[index].next
            if previous >= 0 { nodes[previous].next = next } else { head = next }
            if next >= 0 { nodes[next].previous = previous } else { tail = previous }
            nodes[index].previous = -1
            nodes[index].next = -1
        }

        private mutating func pushFront(_ index: Int) {
            nodes[index].next = head
            nodes[index].previous = -1
            if head >= 0 { nodes[head].previous = index }
            head = index
            if tail < 0 { tail = index }
        }
    }
}
