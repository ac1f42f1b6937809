// The simulated disk's directory tree: open, rename, remove, directory sync, listing, locks.
// Every method here runs with `SimulatedDisk.state` locked.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import YapDBStorage

extension SimulatedDisk.State {
    /// Opens (and maybe creates) `path`; returns the new handle's id and epoch.
    mutating func open(_ path: String, mode: OpenMode) throws(IOFailure) -> (id: Int, epoch: Int) {
        try checkPower(path)
        if mode == .create || mode == .createNew { countMutation("open(\(mode))", path) }
        if let effect = firingFault(.open, path) {
            throw IOFailure(errno: Self.errno(of: effect), operation: "open", path: path)
        }
        if isDirectory(path) {
            throw IOFailure(errno: mode == .createNew ? EEXIST : EISDIR, operation: "open", path: path)
        }
        var inode = currentEntries[path]
        switch mode {
        case .readWrite, .readOnly:
            if inode == nil {
                try checkParent(of: path, "open")
                throw IOFailure(errno: ENOENT, operation: "open", path: path)
            }
        case .createNew:
            if inode != nil { throw IOFailure(errno: EEXIST, operation: "open", path: path) }
        case .create:
            break
        }
        if inode == nil {
            try checkParent(of: path, "open")
            if Paths.fileName(of: path).isEmpty { throw IOFailure(errno: ENOENT, operation: "open", path: path) }
            let created = nextInode
            nextInode += 1
            inodes[created] = SimulatedDisk.Inode()
            currentEntries[path] = created
            pendingNames.append(.create(path: path, inode: created))
            record("created \(path) (inode \(created)); durable once \(Self.parent(path)) is synced")
            inode = created
        }
        let id = nextHandle
        nextHandle += 1
        handles[id] = inode
        return (id, epoch)
    }

    /// What `path` names now.
    func kind(of path: String) -> FileKind {
        if isDirectory(path) { return .directory }
        return currentEntries[path] != nil ? .file : .missing
    }

    /// The names of the files and directories directly inside `path`, sorted.
    mutating func listDirectory(_ path: String) throws(IOFailure) -> [String] {
        try checkPower(path)
        if let effect = firingFault(.listDirectory, path) {
            throw IOFailure(errno: Self.errno(of: effect), operation: "opendir", path: path)
        }
        let directory = Self.trimmed(path)
        guard directories.contains(directory) else {
            let code = currentEntries[directory] != nil ? ENOTDIR : ENOENT
            throw IOFailure(errno: code, operation: "opendir", path: path)
        }
        var names = currentEntries.keys.filter { Self.parent($0) == directory }.map(Paths.fileName(of:))
        names += directories.filter { $0 != directory && Self.parent($0) == directory }.map(Paths.fileName(of:))
        return names.sorted()
    }

    /// Renames the file `from` to `to`, replacing any file at `to`. Directories cannot be
    /// renamed (`EISDIR`).
    mutating func rename(_ from: String, to: String) throws(IOFailure) {
        let both = from + " -> " + to
        try checkPower(both)
        countMutation("rename", both)
        if let effect = firingFault(.rename, from, to) {
            throw IOFailure(errno: Self.errno(of: effect), operation: "rename", path: both)
        }
        if isDirectory(from) || isDirectory(to) {
            throw IOFailure(errno: EISDIR, operation: "rename", path: both)
        }
        guard let inode = currentEntries[from] else {
            try checkParent(of: from, "rename")
            throw IOFailure(errno: ENOENT, operation: "rename", path: both)
        }
        try checkParent(of: to, "rename")
        if Paths.fileName(of: to).isEmpty { throw IOFailure(errno: ENOENT, operation: "rename", path: both) }
        if from == to { return }
        let replaced = currentEntries[to]
        currentEntries[to] = inode
        currentEntries[from] = nil
        // A lock belongs to the file, not the name (flock): it moves with the rename, and a
        // lock on a replaced file stays with that file, which no name reaches any more.
        locks[to] = locks.removeValue(forKey: from)
        sharedLocks[to] = sharedLocks.removeValue(forKey: from)
        pendingNames.append(.rename(from: from, to: to, inode: inode))
        record("renamed \(from) -> \(to) (inode \(inode)); durable once the directory is synced")
        if let replaced { collect(replaced) }
    }

    /// Removes the file at `path`. Its data lives on while a handle or a durable name holds it.
    mutating func remove(_ path: String) throws(IOFailure) {
        try checkPower(path)
        countMutation("remove", path)
        if let effect = firingFault(.remove, path) {
            throw IOFailure(errno: Self.errno(of: effect), operation: "unlink", path: path)
        }
        if isDirectory(path) { throw IOFailure(errno: EISDIR, operation: "unlink", path: path) }
        guard let inode = currentEntries[path] else {
            try checkParent(of: path, "unlink")
            throw IOFailure(errno: ENOENT, operation: "unlink", path: path)
        }
        currentEntries[path] = nil
        locks[path] = nil   // the lock stays with the unlinked file; a new file here is unlocked
        sharedLocks[path] = nil
        pendingNames.append(.remove(path: path, inode: inode))
        record("removed \(path) (inode \(inode)); durable once \(Self.parent(path)) is synced")
        collect(inode)
    }

    /// Makes the entries of directory `path` durable: every name in it takes its current
    /// value, and so do both names of a pending rename into or out of it (a rename is one
    /// journal transaction).
    mutating func syncDirectory(_ path: String) throws(IOFailure) {
        try checkPower(path)
        countMutation("syncDirectory", path)
        if let effect = firingFault(.syncDirectory, path) {
            throw IOFailure(errno: Self.errno(of: effect), operation: "fsync", path: path)
        }
        let directory = Self.trimmed(path)
        guard directories.contains(directory) else {
            let code = currentEntries[directory] != nil ? ENOTDIR : ENOENT
            throw IOFailure(errno: code, operation: "open", path: path)
        }
        var synced = Set(currentEntries.keys.filter { Self.parent($0) == directory })
        synced.formUnion(durableEntries.keys.filter { Self.parent($0) == directory })
        for operation in pendingNames where operation.paths.contains(where: { Self.parent($0) == directory }) {
            synced.formUnion(operation.paths)
        }
        let before = pendingNames.count
        pendingNames.removeAll { $0.paths.allSatisfy(synced.contains) }
        var released: [Int] = []
        for name in synced.sorted() {
            if let old = durableEntries[name], old != currentEntries[name] { released.append(old) }
            durableEntries[name] = currentEntries[name]
        }
        record("synced directory \(directory): \(before - pendingNames.count) name operation(s) now durable")
        for inode in released { collect(inode) }
    }

    /// Creates directory `path` and its missing parents, durably at once.
    mutating func mkdir(_ path: String) throws(IOFailure) {
        let directory = Self.trimmed(path)
        if directories.contains(directory) { return }
        if directory.isEmpty { throw IOFailure(errno: ENOENT, operation: "mkdir", path: path) }
        if currentEntries[directory] != nil { throw IOFailure(errno: EEXIST, operation: "mkdir", path: path) }
        let parent = Self.parent(directory)
        if parent != directory && !directories.contains(parent) {
            if currentEntries[parent] != nil { throw IOFailure(errno: ENOTDIR, operation: "mkdir", path: path) }
            try mkdir(parent)
        }
        directories.insert(directory)
        record("mkdir \(directory)")
    }

    /// Takes the lock on `path` (exclusive, or shared); returns the token that releases it.
    mutating func lock(_ path: String, shared: Bool) throws(IOFailure) -> Int {
        try checkPower(path)
        if let effect = firingFault(.lock, path) {
            throw IOFailure(errno: Self.errno(of: effect), operation: "flock", path: path)
        }
        guard kind(of: path) != .missing else { throw IOFailure(errno: ENOENT, operation: "open", path: path) }
        if locks[path] != nil || (!shared && !(sharedLocks[path] ?? []).isEmpty) {
            throw IOFailure(errno: EWOULDBLOCK, operation: "flock", path: path)
        }
        let token = nextLockToken
        nextLockToken += 1
        if shared {
            sharedLocks[path, default: []].insert(token)
            record("locked \(path) (shared)")
        } else {
            locks[path] = token
            record("locked \(path)")
        }
        return token
    }

    /// Releases the lock `token` holds, under whatever name its file has now (a rename moves
    /// it), if it still holds one (a power cut may have released it and someone else may hold
    /// it now).
    mutating func unlock(_ path: String, token: Int) {
        if let name = sharedLocks.first(where: { $0.value.contains(token) })?.key {
            sharedLocks[name]?.remove(token)
            if sharedLocks[name]?.isEmpty == true { sharedLocks[name] = nil }
            record(name == path ? "unlocked \(path) (shared)" : "unlocked \(path) (shared, now \(name))")
            return
        }
        guard let name = locks.first(where: { $0.value == token })?.key else { return }
        locks[name] = nil
        record(name == path ? "unlocked \(path)" : "unlocked \(path) (now \(name))")
    }

    /// Forgets a handle; its file's data goes too if nothing else refers to it.
    mutating func closeHandle(_ id: Int) {
        guard let inode = handles.removeValue(forKey: id) else { return }
        collect(inode)
    }
}
