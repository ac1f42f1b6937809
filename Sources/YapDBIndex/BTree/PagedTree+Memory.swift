// PagedTree+Memory: what a tree's dirty nodes hold in memory — whole keys and values, Swift
// arrays with their spare capacity, the node objects — the figure the engine charges against
// its dirty-page budget (an encoded page is smaller: it shares prefixes and has no per-array
// overhead).

/// Heap bytes of a block of `size` bytes from the C allocator: its 8-byte header, rounded up to
/// 16-byte granules, at least 32 (glibc's smallest chunk).
@inline(__always)
func heapBlockBytes(_ size: Int) -> Int { max(32, (size &+ 8 &+ 15) & ~15) }

/// Heap bytes of a Swift array's storage holding room for `capacity` elements of `stride`
/// bytes (its 32-byte header included); 0 for an empty array, which shares one static storage.
@inline(__always)
func heapArrayBytes(capacity: Int, stride: Int) -> Int {
    capacity > 0 ? heapBlockBytes(32 &+ capacity &* stride) : 0
}

extension LeafEntries {
    /// Heap bytes of the entry array and the offsets, with their spare capacity.
    var memoryBytes: Int {
        heapArrayBytes(capacity: bytes.capacity, stride: 1) &+ heapArrayBytes(capacity: starts.capacity, stride: MemoryLayout<Int>.stride)
    }
}

extension KeyedNode {
    /// Heap bytes of the node object (16-byte object header and its stored properties, 104
    /// bytes) and of its flush mark (24).
    package static let objectBytes = heapBlockBytes(104) + heapBlockBytes(24)

    /// Heap bytes this node holds: the object, and a leaf's entries or a branch's children and
    /// separators (each separator its own array).
    var memoryBytes: Int {
        if isLeaf { return Self.objectBytes &+ entries.memoryBytes }
        var total = Self.objectBytes
            &+ heapArrayBytes(capacity: children.capacity, stride: MemoryLayout<ChildRef<KeyedNode>>.stride)
            &+ heapArrayBytes(capacity: keys.capacity, stride: MemoryLayout<[UInt8]>.stride)
        for key in keys { total &+= heapArrayBytes(capacity: key.capacity, stride: 1) }
        return total
    }
}

extension RowNode {
    /// Heap bytes of the node object (49 bytes with its header) and of its flush mark (24).
    package static let objectBytes = heapBlockBytes(49) + heapBlockBytes(24)

    /// Heap bytes this node holds: the object, and a leaf's row ids or a branch's children.
    var memoryBytes: Int {
        Self.objectBytes &+ heapArrayBytes(capacity: rowids.capacity, stride: MemoryLayout<UInt64>.stride)
            &+ heapArrayBytes(capacity: children.capacity, stride: MemoryLayout<ChildRef<RowNode>>.stride)
    }
}

/// The dirty nodes under `ref` that a flush would write (published ones excluded, as
/// `unwrittenNodeCount`), and the heap bytes they hold. Nodes that share arrays with another
/// tree value (copy-on-write) are counted whole: the figure errs high. O(dirty nodes).
func unwrittenNodeTally<Node: PagedNode>(_ ref: ChildRef<Node>) -> UnwrittenNodes {
    guard let node = ref.node, node.mark.flushedPage == .none else { return UnwrittenNodes() }
    var tally = UnwrittenNodes(nodes: 1, bytes: node.memoryBytes)
    for child in node.children { tally.add(unwrittenNodeTally(child)) }
    return tally
}

/// Dirty nodes not yet written, and the heap bytes they hold.
package struct UnwrittenNodes: Sendable, Equatable {
    /// The nodes: the pages the next flush writes.
    package var nodes = 0
    /// The heap bytes they hold (`PagedNode.memoryBytes`).
    package var bytes = 0

    package init(nodes: Int = 0, bytes: Int = 0) {
        self.nodes = nodes
        self.bytes = bytes
    }

    /// Adds another tally.
    package mutating func add(_ other: UnwrittenNodes) {
        nodes &+= other.nodes
        bytes &+= other.bytes
    }
}

extension PagedBTree {
    /// The dirty nodes the next `flush` would write and the heap bytes they hold. O(dirty
    /// nodes).
    package var unwrittenNodes: UnwrittenNodes { unwrittenNodeTally(root) }
}

extension PagedRowTree {
    /// The dirty nodes the next `flush` would write and the heap bytes they hold. O(dirty
    /// nodes).
    package var unwrittenNodes: UnwrittenNodes { unwrittenNodeTally(root) }
}

extension Keydir {
    /// Both trees' dirty nodes not yet written and the heap bytes they hold: what the engine
    /// charges against its dirty-page budget. O(dirty nodes).
    package var unwrittenNodes: UnwrittenNodes {
        var tally = rows.unwrittenNodes
        tally.add(rowids.unwrittenNodes)
        return tally
    }
}
