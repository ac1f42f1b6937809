// Open files on the simulated disk: the handle class and the data operations behind it.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import YapDBStorage

/// An open file on a `SimulatedDisk`.
///
/// Sendable: every stored property is an immutable `let`; the file's contents live in the
/// disk's state behind `SimulatedDisk.state` (a `Mutex`). Threading: any call from any thread;
/// calls are serialised by the disk's lock.
///
/// After a power cut (or once the crash point has passed) every call throws
/// `IOFailure(errno: EIO, operation: "power lost", …)`; after `close()` every call throws
/// `EBADF`.
package final class SimulatedFile: StorageFile {
    package let path: String
    private let disk: SimulatedDisk
    private let id: Int
    private let epoch: Int
    private let writable: Bool

    init(disk: SimulatedDisk, path: String, id: Int, epoch: Int, writable: Bool) {
        self.disk = disk
        self.path = path
        self.id = id
        self.epoch = epoch
        self.writable = writable
    }

    deinit { close() }

    /// Copies bytes of the file's current image into `buffer`.
    ///
    /// - Throws: `IOFailure` — "power lost" `EIO`, `EBADF` after close, `EINVAL` for a
    ///   negative offset, or an injected `.read` fault.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(IOFailure) -> Int {
        try disk.state.withLock { state throws(IOFailure) -> Int in
            try state.read(handle: id, epoch: epoch, path: path, into: buffer, at: offset)
        }
    }

    /// Writes into the current image and queues the write until the next `sync()`.
    ///
    /// - Throws: `IOFailure` — "power lost" `EIO`, `EBADF` (closed or read-only), `EINVAL`
    ///   (negative offset), `EFBIG` (past `maximumFileSize`), `ENOSPC` (past `capacity`,
    ///   nothing written), or an injected `.write` fault (a `.shortWrite` lands a prefix first).
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(IOFailure) {
        try disk.state.withLock { state throws(IOFailure) in
            try state.write(handle: id, epoch: epoch, path: path, writable: writable, bytes: bytes, at: offset)
        }
    }

    /// Applies the file's pending writes and truncates, in order, to its durable image.
    ///
    /// - Throws: `IOFailure` — "power lost" `EIO`, `EBADF`, or an injected `.sync` fault.
    package func sync() throws(IOFailure) {
        try disk.state.withLock { state throws(IOFailure) in
            try state.sync(handle: id, epoch: epoch, path: path)
        }
    }

    /// Resizes the current image (zero-filling growth) and queues the truncate.
    ///
    /// - Throws: `IOFailure` — "power lost" `EIO`, `EBADF` (closed or read-only), `EINVAL`
    ///   (negative size), `EFBIG` (past `maximumFileSize`), or an injected `.truncate` fault.
    package func truncate(to size: Int64) throws(IOFailure) {
        try disk.state.withLock { state throws(IOFailure) in
            try state.truncate(handle: id, epoch: epoch, path: path, writable: writable, to: size)
        }
    }

    /// The size of the current image.
    ///
    /// - Throws: `IOFailure` — "power lost" `EIO` or `EBADF`.
    package func size() throws(IOFailure) -> Int64 {
        try disk.state.withLock { state throws(IOFailure) -> Int64 in
            let inode = try state.inode(ofHandle: id, epoch: epoch, "fstat", path)
            return Int64(state.inodes[inode]?.current.count ?? 0)
        }
    }

    /// The simulated inode this handle reaches (device 0).
    ///
    /// - Throws: `IOFailure` — "power lost" `EIO` or `EBADF`.
    package func identity() throws(IOFailure) -> FileIdentity? {
        try disk.state.withLock { state throws(IOFailure) -> FileIdentity? in
            FileIdentity(device: 0, inode: UInt64(try state.inode(ofHandle: id, epoch: epoch, "fstat", path)))
        }
    }

    /// False: `map(length:)` is a heap copy of the image (the engine reads segments with
    /// `pread` here).
    package var mapsInPlace: Bool { false }

    /// A copy of the first `length` bytes of the file's current image (what reads see now);
    /// later writes do not change it, as the caller promises not to rewrite mapped bytes. Not
    /// a mutating call (no crash-point count).
    ///
    /// - Throws: `IOFailure` — "power lost" `EIO`, `EBADF` after close, `EINVAL` ("mmap") for
    ///   a negative length or one past the current size, or an injected `.map` fault.
    package func map(length: Int) throws(IOFailure) -> FileMapping {
        try disk.state.withLock { state throws(IOFailure) -> FileMapping in
            let inode = try state.inode(ofHandle: id, epoch: epoch, "mmap", path)
            if let effect = state.firingFault(.map, path) {
                throw IOFailure(errno: SimulatedDisk.State.errno(of: effect), operation: "mmap", path: path)
            }
            let image = state.inodes[inode]?.current ?? []
            guard length >= 0, length <= image.count else {
                throw IOFailure(errno: EINVAL, operation: "mmap", path: path)
            }
            return image.withUnsafeBytes { FileMapping.copy(of: UnsafeRawBufferPointer(rebasing: $0[0..<length]), path: path) }
        }
    }

    /// Releases the handle. Harmless to call twice or after a power cut.
    package func close() {
        disk.state.withLock { $0.closeHandle(id) }
    }
}

extension SimulatedDisk.State {
    mutating func read(handle: Int, epoch: Int, path: String,
                       into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(IOFailure) -> Int {
        let inode = try self.inode(ofHandle: handle, epoch: epoch, "pread", path)
        if let effect = firingFault(.read, path) {
            throw IOFailure(errno: Self.errno(of: effect), operation: "pread", path: path)
        }
        guard offset >= 0 else { throw IOFailure(errno: EINVAL, operation: "pread", path: path) }
        let image = inodes[inode]?.current ?? []
        guard offset < Int64(image.count), buffer.count > 0 else { return 0 }
        let start = Int(offset)
        let count = min(buffer.count, image.count - start)
        image.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[start..<(start + count)]))
        }
        return count
    }

    mutating func write(handle: Int, epoch: Int, path: String, writable: Bool,
                        bytes: UnsafeRawBufferPointer, at offset: Int64) throws(IOFailure) {
        let inode = try self.inode(ofHandle: handle, epoch: epoch, "pwrite", path)
        countMutation("write \(bytes.count) bytes at \(offset)", path)
        guard writable else { throw IOFailure(errno: EBADF, operation: "pwrite", path: path) }
        var data = Self.array(bytes)
        var failure: IOFailure?
        if let effect = firingFault(.write, path) {
            let code = Self.errno(of: effect)
            guard case .shortWrite = effect, !data.isEmpty else {
                throw IOFailure(errno: code, operation: "pwrite", path: path)
            }
            let kept = random.below(data.count)
            record("short write to \(path): \(kept) of \(data.count) bytes land")
            data.removeLast(data.count - kept)
            failure = IOFailure(errno: code, operation: "pwrite", path: path)
        }
        guard offset >= 0 else { throw IOFailure(errno: EINVAL, operation: "pwrite", path: path) }
        let (end, overflow) = offset.addingReportingOverflow(Int64(data.count))
        guard !overflow, end <= Int64(maximumFileSize) else {
            throw IOFailure(errno: EFBIG, operation: "pwrite", path: path)
        }
        if !data.isEmpty {
            let growth = max(0, Int(end) - (inodes[inode]?.current.count ?? 0))
            if let capacity, growth > 0, usedBytes + growth > capacity {
                record("write to \(path) refused: \(usedBytes) + \(growth) bytes exceed capacity \(capacity)")
                throw IOFailure(errno: ENOSPC, operation: "pwrite", path: path)
            }
            Self.apply(data[...], at: Int(offset), to: &inodes[inode, default: SimulatedDisk.Inode()].current)
            inodes[inode, default: SimulatedDisk.Inode()].pending.append(.write(offset: Int(offset), bytes: data))
        }
        if let failure { throw failure }
    }

    mutating func sync(handle: Int, epoch: Int, path: String) throws(IOFailure) {
        let inode = try self.inode(ofHandle: handle, epoch: epoch, "fdatasync", path)
        countMutation("sync", path)
        if let effect = firingFault(.sync, path) {
            if effect == .syncFailsMarkingClean {
                var dropped = 0
                inodes[inode, default: SimulatedDisk.Inode()].pending.removeAll { operation in
                    guard case .write = operation else { return false }
                    dropped += 1
                    return true
                }
                record("sync of \(path) failed: \(dropped) pending write(s) marked clean, never durable")
            }
            throw IOFailure(errno: Self.errno(of: effect), operation: "fdatasync", path: path)
        }
        guard var file = inodes[inode] else { return }
        let count = file.pending.count
        for operation in file.pending { Self.apply(operation, to: &file.durable) }
        file.pending.removeAll()
        inodes[inode] = file
        record("synced \(path): \(count) pending operation(s) now durable")
    }

    mutating func truncate(handle: Int, epoch: Int, path: String, writable: Bool,
                           to size: Int64) throws(IOFailure) {
        let inode = try self.inode(ofHandle: handle, epoch: epoch, "ftruncate", path)
        countMutation("truncate to \(size)", path)
        guard writable else { throw IOFailure(errno: EBADF, operation: "ftruncate", path: path) }
        if let effect = firingFault(.truncate, path) {
            throw IOFailure(errno: Self.errno(of: effect), operation: "ftruncate", path: path)
        }
        guard size >= 0 else { throw IOFailure(errno: EINVAL, operation: "ftruncate", path: path) }
        guard size <= Int64(maximumFileSize) else {
            throw IOFailure(errno: EFBIG, operation: "ftruncate", path: path)
        }
        Self.apply(.truncate(size: Int(size)), to: &inodes[inode, default: SimulatedDisk.Inode()].current)
        inodes[inode, default: SimulatedDisk.Inode()].pending.append(.truncate(size: Int(size)))
    }

    // MARK: - Images

    /// Applies one data operation to an image.
    static func apply(_ operation: SimulatedDisk.DataOperation, to image: inout [UInt8]) {
        switch operation {
        case .write(let offset, let bytes): apply(bytes[...], at: offset, to: &image)
        case .truncate(let size): resize(&image, to: size)
        }
    }

    /// Copies `bytes` into `image` at `offset`, zero-filling any gap past the end.
    ///
    /// Byte copies go through `memcpy`/`memset`, not generic collection code: the tests run
    /// debug builds, where generic copying costs a protocol call per byte.
    static func apply(_ bytes: ArraySlice<UInt8>, at offset: Int, to image: inout [UInt8]) {
        guard !bytes.isEmpty, offset >= 0 else { return }
        let end = offset + bytes.count
        if end > image.count { resize(&image, to: end) }
        image.withUnsafeMutableBytes { target in
            bytes.withUnsafeBytes { source in
                (target.baseAddress! + offset).copyMemory(from: source.baseAddress!, byteCount: source.count)
            }
        }
    }

    /// Shrinks `image` or zero-extends it to `size` bytes.
    static func resize(_ image: inout [UInt8], to size: Int) {
        guard size != image.count else { return }
        let kept = min(size, image.count)
        image = image.withUnsafeBytes { old in
            [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
                let base = UnsafeMutableRawPointer(buffer.baseAddress!)
                if kept > 0 { base.copyMemory(from: old.baseAddress!, byteCount: kept) }
                if size > kept { memset(base + kept, 0, size - kept) }
                count = size
            }
        }
    }

    /// A copy of `bytes` as an array, by `memcpy`.
    static func array(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
            if let source = bytes.baseAddress, bytes.count > 0 {
                UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: source, byteCount: bytes.count)
            }
            count = bytes.count
        }
    }
}
