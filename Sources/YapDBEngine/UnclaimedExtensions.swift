import Synchronization
import YapDBIndex

/// Extension state that a checkpoint can store as an image: bytes the extension decodes itself
/// (docs/format.md §4, extension records). Views no longer use it (their trees are on index
/// pages, `PagedExtensionState`); an image read from an older checkpoint is offered to its
/// extension once and otherwise dropped.
package protocol PersistentExtensionState: Sendable {
    /// The state's image, written into checkpoints.
    func persistentImage() -> [UInt8]
}

/// What the index root record (extension roots) and the checkpoint (extension images) held at
/// open, not yet claimed by a registering extension, with what changed in the rows since
/// (which the extension must catch up with).
///
/// Both are dropped when the next checkpoint is captured: that checkpoint moves the replay
/// position past the changes recorded here, so after a reopen nothing could tell the
/// extension what changed since its roots were written (it rebuilds when it registers). While
/// anything is unclaimed, every commit's changes are recorded.
///
/// Threading: one `Mutex`. The writer records changes and checkpoints capture under the writer
/// lock (lock order: writer, then this).
final class UnclaimedExtensions: Sendable {
    struct State {
        var images: [String: [UInt8]] = [:]
        var roots: [String: [UInt8]] = [:]
        var catchUp = ExtensionCatchUp()
    }
    let state = Mutex(State())

    func load(images: [String: [UInt8]], roots: [String: [UInt8]], catchUp: ExtensionCatchUp) {
        state.withLock { $0 = State(images: images, roots: roots, catchUp: catchUp) }
    }

    /// Whether changes must be recorded (something is unclaimed).
    var isEmpty: Bool { state.withLock { $0.images.isEmpty && $0.roots.isEmpty } }

    func recordChanges(_ changeset: Changeset) {
        state.withLock { state in
            guard !state.images.isEmpty || !state.roots.isEmpty else { return }
            state.catchUp.record(changeset)
        }
    }

    func claimImage(_ name: String) -> (image: [UInt8], catchUp: ExtensionCatchUp)? { claim(name, from: \.images) }

    func claimRoots(_ name: String) -> (bytes: [UInt8], catchUp: ExtensionCatchUp)? { claim(name, from: \.roots) }

    /// The root bytes of `name`, left unclaimed.
    func peekRoots(_ name: String) -> [UInt8]? { state.withLock { $0.roots[name] } }

    private func claim(_ name: String, from kind: WritableKeyPath<State, [String: [UInt8]]>) -> ([UInt8], ExtensionCatchUp)? {
        state.withLock { state in
            guard let bytes = state[keyPath: kind].removeValue(forKey: name) else { return nil }
            let catchUp = state.catchUp
            state.trimIfEmpty()
            return (bytes, catchUp)
        }
    }

    /// A checkpoint is being captured (under the writer lock): whatever is unclaimed is
    /// dropped. From here on nothing can be claimed, so no state can reach pages an index
    /// compaction retires without having been copied.
    func dropAll() { state.withLock { $0 = State() } }
}

extension UnclaimedExtensions.State {
    mutating func trimIfEmpty() {
        if images.isEmpty && roots.isEmpty { catchUp = ExtensionCatchUp() }
    }
}

extension Engine {
    /// Takes the checkpoint image of extension `name` (once): the bytes and the rows changed
    /// since that checkpoint, or nil when there is none. Call inside the registering write
    /// transaction, so no commit falls between the claim and the rebuilt state.
    package func claimExtensionImage(_ name: String) -> (image: [UInt8], catchUp: ExtensionCatchUp)? {
        unclaimed.claimImage(name)
    }

    /// Takes the roots extension state `name` recorded in the index (once; see
    /// `PagedExtensionState`): the bytes, a source and format to open its trees with, and the
    /// rows changed since they were written; nil when there are none. Reads no page. Call
    /// inside the registering write transaction, so no commit or checkpoint falls between the
    /// claim and the state that replaces it.
    package func claimExtensionRoots(_ name: String) -> ClaimedExtensionRoots? {
        guard let (bytes, catchUp) = unclaimed.claimRoots(name) else { return nil }
        return ClaimedExtensionRoots(rootBytes: bytes, catchUp: catchUp, format: index.format, source: extensionSource(index.source()))
    }

    /// The root bytes extension state `name` recorded in the index, without claiming them (an
    /// extension reads what it stored, such as a search results view's query, before it
    /// decides how to register); nil when there are none or they were claimed or dropped.
    package func unclaimedExtensionRootBytes(_ name: String) -> [UInt8]? {
        unclaimed.peekRoots(name)
    }

    /// The source extension trees read through: `source`, counting pages when
    /// `EngineOptions.countsExtensionPageReads` asked for it.
    func extensionSource(_ source: IndexPageSource) -> any PageSource {
        guard let counter = extensionPageReads else { return source }
        return ExtensionCountingPageSource(base: source, counter: counter)
    }

    /// Pages read by extension trees since open (`EngineOptions.countsExtensionPageReads`; nil
    /// otherwise). For tests that prove a read touched no page.
    package var extensionPagesRead: Int? { extensionPageReads?.value.load(ordering: .relaxed) }
}

/// A page counter shared by the sources extension trees read through.
final class PageReadCounter: Sendable {
    let value = Atomic<Int>(0)
}

/// A page source that counts the pages it hands out.
struct ExtensionCountingPageSource: PageSource {
    let base: IndexPageSource
    let counter: PageReadCounter

    func withPage(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> Void) throws(PageError) {
        counter.value.add(1, ordering: .relaxed)
        try base.withPage(id, body)
    }
}
