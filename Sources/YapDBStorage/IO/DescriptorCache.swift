// A bounded set of open descriptors for files that are only read: sealed log segments and
// index files are opened on demand through it, so the descriptors a database holds do not grow
// with its number of files (docs/reliability.md, "File descriptors").

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Which file a handle reaches, whatever its name is now: device and inode on POSIX. Two
/// handles with the same identity read the same bytes; a path whose identity changed names
/// another file (replaced behind the database's back).
package struct FileIdentity: Sendable, Hashable {
    package var device: UInt64
    package var inode: UInt64

    package init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}

/// Open read-only handles of files read on demand (`CachedFile`), at most `limit` of them open
/// at once beyond those in use: the least recently used idle handle is closed when another
/// must open. A handle in use by a call is never closed under it; so with more concurrent
/// calls than `limit` the count passes the limit for the length of those calls.
///
/// Handles that must outlive their file's name (the file is about to be removed, and
/// snapshots may still read it: `keepOpen(path:)`) are pinned: open, outside the limit's
/// evictions, until their `CachedFile` goes.
///
/// Threading: any thread. One `Mutex` guards every entry; a file is opened (and its identity
/// checked) under it, so two calls never open the same entry twice. Reads themselves run
/// outside it.
package final class DescriptorCache: Sendable {
    /// The default bound: well under the soft descriptor limit of Apple's platforms (256),
    /// enough that a database of a few dozen segments never reopens one.
    package static let defaultLimit = 64

    /// The file system the files are (re)opened on.
    package let fileSystem: any FileSystem
    /// The most idle handles kept open (at least 1).
    package let limit: Int

    struct Entry {
        let path: String
        let identity: FileIdentity?
        let mapsInPlace: Bool
        var handle: (any StorageFile)?
        var users = 0
        var lastUse: UInt64 = 0
        var pinned = false
    }

    struct State {
        var entries: [Int: Entry] = [:]
        var nextID = 0
        var clock: UInt64 = 0
        /// Entries whose handle is open.
        var openCount = 0
        /// How many times a closed entry was opened again (tests and figures).
        var reopens = 0
    }

    private let state = Mutex(State())

    /// - Parameter limit: the most idle handles kept open; values below 1 act as 1.
    package init(fileSystem: any FileSystem, limit: Int = DescriptorCache.defaultLimit) {
        self.fileSystem = fileSystem
        self.limit = max(1, limit)
    }

    /// Opens `path` read-only and returns a handle that reopens it on demand whenever the
    /// cache closed it meanwhile.
    /// - Throws: the `IOFailure` of opening the file or reading its identity.
    package func open(_ path: String) throws(IOFailure) -> CachedFile {
        let handle = try fileSystem.open(path, mode: .readOnly)
        let identity: FileIdentity?
        do { identity = try handle.identity() } catch {
            handle.close()
            throw error
        }
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.clock += 1
            state.entries[state.nextID] = Entry(path: path, identity: identity, mapsInPlace: handle.mapsInPlace,
                                                handle: handle, lastUse: state.clock)
            state.openCount += 1
            evictIdle(&state)
            return state.nextID
        }
        return CachedFile(path: path, id: id, cache: self, mapsInPlace: handle.mapsInPlace)
    }

    /// Pins every handle of `path` open (reopening closed ones) before the file is removed,
    /// so that snapshots still reading it keep doing so. A handle that cannot be reopened
    /// stays closed: its later reads fail with a typed error.
    package func keepOpen(path: String) {
        state.withLock { state in
            for id in state.entries.keys where state.entries[id]!.path == path {
                if state.entries[id]!.handle == nil { _ = try? reopen(id, &state) }
                if state.entries[id]!.handle != nil { state.entries[id]!.pinned = true }
            }
            evictIdle(&state)
        }
    }

    /// Handles open now, and how many times a closed handle was reopened.
    package var counts: (open: Int, reopens: Int) { state.withLock { ($0.openCount, $0.reopens) } }

    // MARK: - For CachedFile

    /// The open handle of entry `id`, reopened if needed, marked in use until `release(id)`.
    func acquire(_ id: Int, _ operation: String, path: String) throws(IOFailure) -> any StorageFile {
        try state.withLock { (state: inout State) throws(IOFailure) -> any StorageFile in
            guard state.entries[id] != nil else { throw IOFailure(errno: EBADF, operation: operation, path: path) }
            let handle: any StorageFile
            if let open = state.entries[id]!.handle { handle = open } else { handle = try reopen(id, &state) }
            state.clock += 1
            state.entries[id]!.users += 1
            state.entries[id]!.lastUse = state.clock
            evictIdle(&state)
            return handle
        }
    }

    /// Ends a use begun by `acquire(id)`; closes idle handles past the limit.
    func release(_ id: Int) {
        state.withLock { state in
            guard state.entries[id] != nil else { return }
            state.entries[id]!.users -= 1
            evictIdle(&state)
        }
    }

    /// The open handle of entry `id` if it has one, for a call that need not open it (nil:
    /// closed, or the entry is gone), marked in use until `release(id)`.
    func acquireIfOpen(_ id: Int) -> (any StorageFile)? {
        state.withLock { state in
            guard let handle = state.entries[id]?.handle else { return nil }
            state.entries[id]!.users += 1
            return handle
        }
    }

    /// The identity entry `id` was opened with.
    func identity(_ id: Int) -> FileIdentity? { state.withLock { $0.entries[id]?.identity } }

    /// Forgets entry `id`, closing its handle (when its last call ends: a `StorageFile`'s
    /// `close()` waits for the calls in flight).
    func remove(_ id: Int) {
        let handle = state.withLock { state -> (any StorageFile)? in
            guard let entry = state.entries.removeValue(forKey: id) else { return nil }
            if entry.handle != nil { state.openCount -= 1 }
            return entry.handle
        }
        handle?.close()
    }

    /// Opens entry `id` again and checks that the path still names the file it was opened
    /// with. Called under the lock; the caller closes idle handles past the limit after
    /// marking this one in use or pinned.
    /// - Throws: the open's `IOFailure` (`ENOENT`: the file was removed), or `ESTALE`
    ///   ("reopen") when the path now names another file.
    private func reopen(_ id: Int, _ state: inout State) throws(IOFailure) -> any StorageFile {
        let entry = state.entries[id]!
        let handle = try fileSystem.open(entry.path, mode: .readOnly)
        do throws(IOFailure) {
            if let expected = entry.identity, try handle.identity() != expected {
                throw IOFailure(errno: ESTALE, operation: "reopen (the file was replaced)", path: entry.path)
            }
        } catch {
            handle.close()
            throw error
        }
        state.entries[id]!.handle = handle
        state.openCount += 1
        state.reopens += 1
        return handle
    }

    /// Closes the least recently used idle, unpinned handles while more than `limit` are open.
    private func evictIdle(_ state: inout State) {
        while state.openCount > limit {
            var victim: Int?
            var oldest = UInt64.max
            for (id, entry) in state.entries where entry.handle != nil && entry.users == 0 && !entry.pinned && entry.lastUse < oldest {
                victim = id
                oldest = entry.lastUse
            }
            guard let victim else { return }
            state.entries[victim]!.handle!.close()
            state.entries[victim]!.handle = nil
            state.openCount -= 1
        }
    }
}

/// A read-only file opened through a `DescriptorCache`: every call borrows the cache's handle,
/// reopening the file when the cache closed it meanwhile (and checking that its path still
/// names the same file). A memory map made through it does not need the handle: the cache may
/// close it while the map is read.
///
/// Sendable: `path`, `id`, `cache` and `mapsInPlace` never change; `closed` is an `Atomic`;
/// the handle itself lives in the cache, behind its `Mutex`.
package final class CachedFile: StorageFile {
    package let path: String
    let id: Int
    let cache: DescriptorCache
    package let mapsInPlace: Bool
    private let closed = Atomic<Bool>(false)

    init(path: String, id: Int, cache: DescriptorCache, mapsInPlace: Bool) {
        self.path = path
        self.id = id
        self.cache = cache
        self.mapsInPlace = mapsInPlace
    }

    deinit { close() }

    /// Runs `body` on the cache's open handle of this file, reopened if needed.
    /// - Throws: `EBADF` after `close()`, the reopen's errors (`ENOENT` for a removed file,
    ///   `ESTALE` for one replaced by another, `EMFILE`, …), or what `body` throws.
    private func using<R>(_ operation: String, _ body: (any StorageFile) throws(IOFailure) -> R) throws(IOFailure) -> R {
        let handle = try cache.acquire(id, operation, path: path)
        defer { cache.release(id) }
        return try body(handle)
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(IOFailure) -> Int {
        try using("pread") { (handle) throws(IOFailure) in try handle.read(into: buffer, at: offset) }
    }

    /// Always fails (`EBADF` from the read-only handle): the cache holds files that are only read.
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(IOFailure) {
        try using("pwrite") { (handle) throws(IOFailure) in try handle.write(bytes, at: offset) }
    }

    package func sync() throws(IOFailure) {
        try using("fdatasync") { (handle) throws(IOFailure) in try handle.sync() }
    }

    package func truncate(to size: Int64) throws(IOFailure) {
        try using("ftruncate") { (handle) throws(IOFailure) in try handle.truncate(to: size) }
    }

    /// The file's size: from the open handle when the cache has one, else from the path
    /// (`FileSystem.status(of:)`, no descriptor), checked to still name this file.
    /// - Throws: `ESTALE` ("reopen") when the path names another file now, `ENOENT` when it
    ///   names none, other `IOFailure`s of `fstat`/`stat`.
    package func size() throws(IOFailure) -> Int64 {
        if let handle = cache.acquireIfOpen(id) {
            defer { cache.release(id) }
            return try handle.size()
        }
        guard let status = try cache.fileSystem.status(of: path) else {
            return try using("fstat") { (handle) throws(IOFailure) in try handle.size() }
        }
        if let expected = cache.identity(id), status.identity != expected {
            throw IOFailure(errno: ESTALE, operation: "reopen (the file was replaced)", path: path)
        }
        return status.size
    }

    /// The identity the file was first opened with.
    package func identity() throws(IOFailure) -> FileIdentity? {
        if closed.load(ordering: .acquiring) { throw IOFailure(errno: EBADF, operation: "fstat", path: path) }
        return cache.identity(id)
    }

    package func map(length: Int) throws(IOFailure) -> FileMapping {
        try using("mmap") { (handle) throws(IOFailure) in try handle.map(length: length) }
    }

    /// Closes the cache's handle (once the calls in flight end) and forgets the file. Later
    /// calls throw `EBADF`. Harmless to call twice.
    package func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { cache.remove(id) }
    }
}
