import YapDBIndex

/// How far `Engine.verify(progress:)` has got. Every figure only grows from one report to the
/// next; the last report has `recordsRead == recordsTotal`.
package struct VerifyProgress: Sendable, Equatable {
    /// Reports come every this many pages, commits or records (and once at the end).
    package static let stride = 1024

    /// Index pages read: checking the trees page by page, rebuilding the directory from the
    /// newest checkpoint and the log, comparing the two, and listing the records to read (a
    /// page read twice counts twice).
    package var pagesWalked = 0
    /// Commits of the log replayed into the rebuilt directory.
    package var commitsReplayed = 0
    /// Value records read and checked.
    package var recordsRead = 0
    /// Value records to read in all: 0 until the directory has been listed.
    package var recordsTotal = 0

    package init() {}
}

/// Counts what `verify` does and reports it every `VerifyProgress.stride` units.
///
/// `@unchecked Sendable` because the counting page source must be `Sendable`; a meter is made
/// by one `verify` call, used only on that call's thread (the walk never hands pages to other
/// threads), and dropped when it returns.
final class VerifyMeter: @unchecked Sendable {
    private let report: ((VerifyProgress) -> Void)?
    private(set) var progress = VerifyProgress()
    private var sinceReport = 0

    init(_ report: ((VerifyProgress) -> Void)?) { self.report = report }

    /// A source that counts every page read from `base`.
    func counting(_ base: any PageSource) -> any PageSource {
        report == nil ? base : CountingPageSource(base: base, meter: self)
    }

    func pageRead() { progress.pagesWalked += 1; tick() }
    func commitReplayed() { progress.commitsReplayed += 1; tick() }
    func recordsToRead(_ count: Int) { progress.recordsTotal = count; sinceReport = VerifyProgress.stride; tick() }
    func recordRead() { progress.recordsRead += 1; tick() }

    /// The last report. Every listed record is read (a bad one is counted and reported as a
    /// problem), so it has `recordsRead == recordsTotal`.
    func finish() { report?(progress) }

    private func tick() {
        guard let report else { return }
        sinceReport += 1
        if sinceReport >= VerifyProgress.stride {
            sinceReport = 0
            report(progress)
        }
    }
}

/// A page source that tells a `VerifyMeter` of every page it hands out.
struct CountingPageSource: PageSource {
    let base: any PageSource
    let meter: VerifyMeter

    var pageCapacity: Int? { base.pageCapacity }

    func withPage(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> Void) throws(PageError) {
        meter.pageRead()
        try base.withPage(id, body)
    }
}
