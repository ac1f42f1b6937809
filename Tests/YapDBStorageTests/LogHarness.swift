import YapDBStorage
import TestSupport

/// A tiny key-value model over the raw log, for storage tests: each commit sets keys in
/// collection "c" to values; recovery replays the log into the same model.
struct LogHarness {
    var path: String
    var fs: any FileSystem
    var mode: SyncMode = .full
    var segmentLimit = Format.defaultSegmentSize
    /// The key of an encrypted database (nil: plain).
    var cipherKey: CipherKeyOptions?

    /// Opens (creating if needed), returning the opened log and the recovered state.
    func open(create: Bool = true) throws(StorageError) -> (LogStore.Opened, [String: [UInt8]]) {
        var options = LogStore.Options()
        options.createIfMissing = create
        options.syncMode = mode
        options.segmentLimit = segmentLimit
        options.cipherKey = cipherKey
        var state: [String: [UInt8]] = [:]
        var locations: [(String, RecordLocation)] = []
        let opened = try LogStore.open(path: path, fileSystem: fs, options: options) { (commit) throws(StorageError) in
            for op in commit.operations {
                switch op {
                case .value(_, _, _, let key, _, let location): locations.append((key, location))
                case .remove(_, let key): locations.removeAll { $0.0 == key }; state[key] = nil
                case .removeCollection, .removeAll: locations.removeAll(); state.removeAll()
                case .extensionData: break
                }
            }
        }
        for (key, location) in locations {
            let file = try Self.openSegment(opened, location.segment, fs: fs)
            defer { file.close() }
            let sealing = try opened.cipher.map { (cipher) throws(StorageError) in try RecordSealing.read(file, cipher: cipher, unitType: .logRecord) }
            let (_, value) = try SegmentReader.value(at: location, in: file, sealing: sealing)
            state[key] = value ?? []
        }
        return (opened, state)
    }

    static func openSegment(_ opened: LogStore.Opened, _ number: UInt32, fs: any FileSystem) throws(StorageError) -> any StorageFile {
        do { return try fs.open(opened.writer.files.segmentPath(number), mode: .readOnly) } catch { throw .io(error) }
    }

    /// Writes one commit setting `values` (key → value) and returns its snapshot.
    @discardableResult
    static func commit(_ writer: LogWriter, _ values: [(String, [UInt8])], compress: Bool = true) throws(StorageError) -> UInt64 {
        try writer.begin()
        for (key, value) in values {
            var failure: StorageError?
            value.withUnsafeBytes { raw in
                do throws(StorageError) {
                    _ = try writer.appendValue(.object, rowid: 1, collection: "c", key: key, value: raw, noMetadata: true, compress: compress)
                } catch { failure = error }
            }
            if let failure { writer.rollback(); throw failure }
        }
        let snapshot = writer.lastSnapshot + 1
        _ = try writer.commit(snapshot: snapshot)
        return snapshot
    }

    /// The value commit `n` writes for key `k` in the standard stream.
    static func value(commit n: Int, key k: Int, size: Int = 40) -> [UInt8] {
        var rng = SeededRandom(seed: UInt64(n &* 1000 &+ k))
        return rng.bytes(size)
    }
}
