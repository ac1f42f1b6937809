import YapDBIndex

/// How much of the index is dirty (changed since the last index checkpoint, held in memory),
/// counted without walking the dirty nodes on every change (docs/architecture.md, "Dirty pages
/// and spills").
///
/// What the budget is compared with is the dirty nodes' heap bytes (`UnwrittenNodes.bytes`:
/// whole keys and values, arrays with their spare capacity, the node objects), not the bytes of
/// the pages they encode to, which share prefixes and carry no per-array overhead: charged by
/// page bytes, a budget let resident memory run to several times itself. Extension states'
/// dirty pages are charged a page each.
///
/// A count walks the dirty nodes of the key directory and of every paged extension state:
/// O(dirty nodes). It is taken when the work done since the last count — rows applied to the
/// trees, extension states replaced, rows removed by a collection removal — reaches an eighth
/// of the pages counted then (at least `minimumWork`), so counting costs O(1) node visits per
/// change amortized, and the pages dirtied between two counts are at most that work times the
/// pages one change touches. A write transaction starts from the committed state's gauge (its
/// trees start as the committed ones) and hands its gauge back at commit.
struct DirtyPageGauge: Sendable {
    /// The dirty bytes at the last count, as pages' worth (rounded up): what the budget is
    /// compared with (times the page size), and what paces the counts.
    private(set) var counted = 0
    /// Dirty pages (nodes the next checkpoint writes) at the last count.
    private(set) var countedPages = 0
    /// Dirty heap bytes at the last count.
    private(set) var countedBytes = 0
    /// The most dirty bytes any count found.
    private(set) var peakBytes = 0
    /// Work done since the last count.
    private(set) var workSinceCount = 0
    /// The most dirty pages any count found (tests read it through `Engine.peakDirtyPages`).
    private(set) var peak = 0
    /// Spills written by transactions since open (tests read it through `Engine.spillCount`).
    private(set) var spills = 0
    /// The least work between two counts; tests set 1 to count after every change.
    var minimumWork = 64

    /// Whether the work since the last count calls for a new one.
    var isCountDue: Bool { workSinceCount >= max(minimumWork, counted / 8) }

    /// Notes `work` changes.
    mutating func note(work: Int) { workSinceCount &+= max(0, work) }

    /// Records a count (`WriterState.dirtyCount`).
    mutating func record(_ count: DirtyCount) {
        counted = count.bytes / count.pageSize + (count.bytes % count.pageSize == 0 ? 0 : 1)
        countedPages = count.pages
        countedBytes = count.bytes
        workSinceCount = 0
        peak = max(peak, count.pages)
        peakBytes = max(peakBytes, count.bytes)
    }

    /// Notes a spill.
    mutating func noteSpill() { spills += 1 }

    /// Takes over a committed transaction's gauge (its peak included).
    mutating func committed(_ transaction: DirtyPageGauge) { self = transaction }
}

/// One count of the dirty index: the pages the next checkpoint (or spill) would write, and the
/// heap bytes their nodes hold.
struct DirtyCount: Sendable {
    var pages: Int
    var bytes: Int
    /// The index page size (to express `bytes` as pages' worth).
    var pageSize: Int
}

extension WriterState {
    /// The dirty nodes of `keydir` and of the paged states in `extensions`: the pages the next
    /// index checkpoint (or spill) would write, and the heap bytes they hold (an extension
    /// state's pages are charged a page each). O(dirty nodes).
    static func dirtyPageCount(keydir: Keydir, extensions: [String: any Sendable]) -> DirtyCount {
        let nodes = keydir.unwrittenNodes
        let pageSize = keydir.format.pageSize
        var count = DirtyCount(pages: nodes.nodes, bytes: nodes.bytes, pageSize: pageSize)
        for state in extensions.values {
            let pages = (state as? any PagedExtensionState)?.unwrittenPageCount ?? 0
            count.pages &+= pages
            count.bytes &+= pages.multipliedReportingOverflow(by: pageSize).partialValue
        }
        return count
    }

    /// Whether the committed state's dirty bytes have reached `budget` (counting them first
    /// when a count is due). False when `budget` is 0.
    func dirtyPagesReach(budget: Int, pageSize: Int) -> Bool {
        guard budget > 0 else { return false }
        if dirtyPages.isCountDue { dirtyPages.record(Self.dirtyPageCount(keydir: keydir, extensions: extensions)) }
        return dirtyPages.countedBytes >= budget
    }
}

extension Engine {
    /// The most dirty index pages a count found since open, inside transactions included (tests
    /// check the budget with it; a count is taken at most `minimumWork` changes apart).
    package var peakDirtyPages: Int { writer.withLock { $0.dirtyPages.peak } }

    /// Spills written by committed transactions since open.
    package var spillCount: Int { writer.withLock { $0.dirtyPages.spills } }

    /// The most dirty heap bytes a count found since open (`peakDirtyPages`' companion: what
    /// the budget is compared with).
    package var peakDirtyBytes: Int { writer.withLock { $0.dirtyPages.peakBytes } }

    /// Dirty index pages the committed state holds now, counted (a walk of the dirty nodes).
    package var dirtyPageCount: Int {
        writer.withLock { WriterState.dirtyPageCount(keydir: $0.keydir, extensions: $0.extensions).pages }
    }
}
