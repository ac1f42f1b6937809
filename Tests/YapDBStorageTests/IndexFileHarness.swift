import TestSupport
@testable import YapDBStorage

/// Shared steps of the index file tests: deterministic pages, a "write pages + sync + publish
/// root" cycle, and reading everything a root can reach back.
struct IndexFileHarness {
    static let uuid: [UInt8] = Array(1...16)
    let fs: any FileSystem
    let files: DatabaseFiles
    var pageSize = 256
    /// Small so that a cycle rolls files.
    var fileSizeLimit: Int64 = 256 * 5

    init(fs: any FileSystem, mainPath: String) {
        self.fs = fs
        files = DatabaseFiles(mainPath: mainPath)
    }

    /// The bytes of the `index`-th page written by checkpoint `sequence`: every byte derived
    /// from both, so a page read from the wrong place or torn never matches.
    func page(sequence: UInt64, index: Int) -> [UInt8] {
        var random = SeededRandom(seed: sequence &* 1_000_003 &+ UInt64(index))
        return random.bytes(pageSize)
    }

    /// What a completed cycle published: its root and every page it wrote.
    struct Published {
        var root: IndexRoot
        var pages: [IndexPageID: [UInt8]]
    }

    /// One checkpoint: a writer (new file 1, or resuming the last file of `previous`) appends
    /// `count` pages, syncs, and publishes root `previous.sequence + 1` naming one tree per
    /// checkpoint. Returns what it published and the writer (still open). `onWriter` runs
    /// right after the writer exists (tests lower its buffer there).
    func cycle(after previous: Published?, count: Int) throws(IndexFileError) -> (Published, IndexFileWriter) {
        let sequence = (previous?.root.sequence ?? 0) + 1
        let writer: IndexFileWriter
        if let last = previous?.root.files.last {
            writer = try IndexFileWriter(files: files, fileSystem: fs, uuid: Self.uuid, pageSize: pageSize,
                                         fileSizeLimit: fileSizeLimit, resume: last.number, length: last.length, sequence: sequence)
        } else {
            writer = try IndexFileWriter(files: files, fileSystem: fs, uuid: Self.uuid, pageSize: pageSize,
                                         fileSizeLimit: fileSizeLimit, newFile: 1, sequence: sequence)
        }
        writer.bufferLimit = pageSize * 2
        var pages = previous?.pages ?? [:]
        var last = IndexPageID.none
        for index in 0..<count {
            let bytes = page(sequence: sequence, index: index)
            last = try writer.append(bytes)
            pages[last] = bytes
        }
        let extents = try writer.sync()
        var fileTable: [UInt32: IndexRoot.File] = [:]
        for file in previous?.root.files ?? [] { fileTable[file.number] = file }
        for extent in extents {
            fileTable[extent.number] = IndexRoot.File(number: extent.number, length: extent.length,
                                                      liveBytes: UInt64(extent.length - Int64(pageSize)), deadBytes: 0)
        }
        var trees = previous?.root.trees ?? []
        trees.append(IndexRoot.Tree(name: "tree-\(sequence)", root: last, count: UInt64(count), height: 1))
        let root = IndexRoot(uuid: Self.uuid, pageSize: pageSize, sequence: sequence, snapshot: sequence * 10,
                             replay: LogPosition(segment: UInt32(sequence), offset: 64), nextRowID: sequence * 100,
                             trees: trees, files: fileTable.values.sorted { $0.number < $1.number })
        try publish(root)
        return (Published(root: root, pages: pages), writer)
    }

    /// Publishes `root` the way the engine does: checkpoint file number `root.sequence` with the
    /// root as its index root record, written to `.tmp`, synced, renamed, directory synced.
    func publish(_ root: IndexRoot, bytes: [UInt8]? = nil) throws(IndexFileError) {
        let number = UInt32(truncatingIfNeeded: root.sequence)
        let info = CheckpointInfo(snapshot: root.snapshot, nextRowid: root.nextRowID, replay: root.replay)
        do throws(StorageError) {
            let writer = try CheckpointWriter(files: files, fileSystem: fs, uuid: Self.uuid, number: number, info: info)
            do throws(StorageError) {
                try writer.setSegmentUsage([:])
                try writer.setIndexRoot(bytes ?? root.encoded())
                _ = try writer.finish()
            } catch {
                writer.abandon()
                throw error
            }
        } catch {
            throw Self.indexError(error, path: files.checkpointPath(number))
        }
    }

    /// Loads the published root: the index root record of the newest checkpoint file; nil when
    /// there is none.
    func load() throws(IndexFileError) -> IndexRoot? {
        let number: UInt32
        do throws(IOFailure) {
            guard let newest = try files.list(fs).checkpoints.last else { return nil }
            number = newest
        } catch { throw .io(error) }
        var bytes: [UInt8]?
        do throws(StorageError) {
            _ = try CheckpointReader.read(files: files, fileSystem: fs, uuid: Self.uuid, number: number, indexRoot: { bytes = $0 })
        } catch {
            throw Self.indexError(error, path: files.checkpointPath(number))
        }
        guard let bytes else { return nil }
        return try IndexRoot.decode(bytes, path: files.checkpointPath(number), uuid: Self.uuid)
    }

    /// The checkpoint layer's errors as the index tests expect them: I/O failures as they are,
    /// anything else as a damaged file.
    static func indexError(_ error: StorageError, path: String) -> IndexFileError {
        if case .io(let failure) = error { return .io(failure) }
        return .notADatabase(path: path)
    }

    /// A store over `root`'s files in `mode`.
    func store(_ root: IndexRoot, mode: IndexReadMode) throws(IndexFileError) -> IndexPageStore {
        let store = IndexPageStore(files: files, fileSystem: fs, uuid: Self.uuid, pageSize: pageSize, mode: mode)
        try store.open(root: root)
        return store
    }

    /// The pages of `expected` that `view` reads back differently (or cannot read), by id.
    static func mismatches(_ view: IndexPageView, _ expected: [IndexPageID: [UInt8]]) -> [IndexPageID] {
        expected.keys.sorted().filter { id in
            guard let page = try? view.page(id) else { return true }
            return page.array != expected[id]
        }
    }
}
