import YapDBIndex

/// How many index pages are dirty (changed since the last index checkpoint, held in memory),
/// counted without walking the dirty nodes on every change (docs/architecture.md, "Dirty pages
/// and spills").
///
/// A count walks the dirty nodes of the key directory and of every paged extension state:
/// O(dirty nodes). It is taken when the work done since the last count — rows applied to the
/// trees, extension states replaced, rows removed by a collection removal — reaches an eighth
/// of the pages counted then (at least `minimumWork`), so counting costs O(1) node visits per
/// change amortized, and the pages dirtied between two counts are at most that work times the
/// pages one change touches. A write transaction starts from the committed state's gauge (its
/// trees start as the committed ones) and hands its gauge back at commit.
struct DirtyPageGauge: Sendable {
    /// Dirty pages at the last count.
    private(set) var counted = 0
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

    /// Records a count of `pages` dirty pages.
    mutating func record(_ pages: Int) {
        counted = pages
        workSinceCount = 0
        peak = max(peak, pages)
    }

    /// Notes a spill.
    mutating func noteSpill() { spills += 1 }

    /// Takes over a committed transaction's gauge (its peak included).
    mutating func committed(_ transaction: DirtyPageGauge) { self = transaction }
}

extension WriterState {
    /// The dirty pages of `keydir` and of the paged states in `extensions`: the nodes the next
    /// index checkpoint (or spill) would write. O(dirty nodes).
    static func dirtyPageCount(keydir: Keydir, extensions: [String: any Sendable]) -> Int {
        extensions.values.reduce(keydir.unwrittenPageCount) { total, state in
            total + ((state as? any PagedExtensionState)?.unwrittenPageCount ?? 0)
        }
    }

    /// Whether the committed state's dirty pages have reached `budget` bytes of pages of
    /// `pageSize` bytes (counting them first when a count is due). False when `budget` is 0.
    func dirtyPagesReach(budget: Int, pageSize: Int) -> Bool {
        guard budget > 0 else { return false }
        if dirtyPages.isCountDue { dirtyPages.record(Self.dirtyPageCount(keydir: keydir, extensions: extensions)) }
        return dirtyPages.counted.multipliedReportingOverflow(by: pageSize).partialValue >= budget
    }
}

extension Engine {
    /// The most dirty index pages a count found since open, inside transactions included (tests
    /// check the budget with it; a count is taken at most `minimumWork` changes apart).
    package var peakDirtyPages: Int { writer.withLock { $0.dirtyPages.peak } }

    /// Spills written by committed transactions since open.
    package var spillCount: Int { writer.withLock { $0.dirtyPages.spills } }

    /// Dirty index pages the committed state holds now, counted (a walk of the dirty nodes).
    package var dirtyPageCount: Int {
        writer.withLock { WriterState.dirtyPageCount(keydir: $0.keydir, extensions: $0.extensions) }
    }
}
