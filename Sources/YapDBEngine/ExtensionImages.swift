import Synchronization
import YapDBIndex

/// Extension state that a checkpoint can store (a view's index), as bytes the extension
/// decodes itself (docs/format.md §4, extension records).
package protocol PersistentExtensionState: Sendable {
    /// The state's image, written into checkpoints.
    func persistentImage() -> [UInt8]
}

/// Extension images loaded from the checkpoint at open and not yet claimed by a registering
/// extension, with the keys written since that checkpoint (which the extension must re-place).
///
/// Threading: one `Mutex`. The writer adds keys under the writer lock (lock order: writer,
/// then this).
final class UnclaimedImages: Sendable {
    struct State {
        var images: [String: [UInt8]] = [:]
        var changedKeys: Set<CollectionKeyPair> = []
    }
    let state = Mutex(State())

    var isEmpty: Bool { state.withLock { $0.images.isEmpty } }

    func load(_ images: [String: [UInt8]], changedKeys: Set<CollectionKeyPair>) {
        state.withLock { $0 = State(images: images, changedKeys: changedKeys) }
    }

    func recordChanges(_ changeset: Changeset) {
        state.withLock { state in
            guard !state.images.isEmpty else { return }
            for key in changeset.changes.keys { state.changedKeys.insert(key) }
        }
    }

    func claim(_ name: String) -> (image: [UInt8], changedKeys: Set<CollectionKeyPair>)? {
        state.withLock { state in
            guard let image = state.images.removeValue(forKey: name) else { return nil }
            let keys = state.changedKeys
            if state.images.isEmpty { state.changedKeys.removeAll() }
            return (image, keys)
        }
    }

    /// A new checkpoint was written: images not claimed by then are dropped (their extensions
    /// rebuild when they register).
    func dropAll() { state.withLock { $0 = State() } }
}

extension Engine {
    /// Takes the checkpoint image of extension `name` (once): the bytes and the keys written
    /// since that checkpoint, or nil when there is none. Call inside the registering write
    /// transaction, so no commit falls between the claim and the rebuilt state.
    package func claimExtensionImage(_ name: String) -> (image: [UInt8], changedKeys: Set<CollectionKeyPair>)? {
        unclaimedImages.claim(name)
    }
}
