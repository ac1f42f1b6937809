import YapDBStorage
import YapDBIndex

extension Engine {
    /// What a checkpoint is built from, captured under the writer lock.
    struct CheckpointSource {
        var number: UInt32
        var keydir: Keydir
        var snapshot: UInt64
        var nextRowid: UInt64
        var replay: LogPosition
        var usage: [UInt32: UInt64]
        var extensions: [String: any Sendable] = [:]
    }

    /// Writes a checkpoint of the current state (docs/format.md §4), then removes older
    /// checkpoints and log segments nothing references any more. Readers and writers keep
    /// going while the file is written; only the capture and the final swap take the writer
    /// lock. Throws `closed`, `poisoned`, `io` (a failed log sync also poisons the engine).
    package func checkpoint() throws(StorageError) {
        try checkpoint(onlyIfLogGrew: false)
    }

    func checkpointIfDue() throws(StorageError) {
        guard options.checkpointThreshold > 0 else { return }
        let due = writer.withLock { $0.bytesSinceCheckpoint >= UInt64(options.checkpointThreshold) }
        if due { try checkpoint(onlyIfLogGrew: true) }
    }

    func checkpoint(onlyIfLogGrew: Bool) throws(StorageError) {
        try maintenance.withLock { (_: inout Void) throws(StorageError) in
            guard let source = try captureForCheckpoint(onlyIfLogGrew: onlyIfLogGrew) else { return }
            let path = try Self.writeCheckpoint(source, files: files, fs: fileSystem, uuid: uuid, compress: options.compression)
            try installCheckpoint(source, path: path)
        }
    }

    /// Syncs the log and captures the state to checkpoint (under the writer lock).
    func captureForCheckpoint(onlyIfLogGrew: Bool) throws(StorageError) -> CheckpointSource? {
        try writer.withLock { (state: inout WriterState) throws(StorageError) -> CheckpointSource? in
            if state.closed { throw .closed }
            if state.poisoned || state.log.isPoisoned { throw .poisoned }
            if onlyIfLogGrew && state.bytesSinceCheckpoint == 0 { return nil }
            do throws(StorageError) { try state.log.syncCommitted() } catch {
                state.poisoned = true
                throw error
            }
            state.bytesSinceCheckpoint = 0
            return CheckpointSource(number: state.checkpointNumber + 1, keydir: state.keydir, snapshot: state.snapshotNumber,
                                    nextRowid: state.nextRowid,
                                    replay: LogPosition(segment: state.log.segmentNumber, offset: state.log.end),
                                    usage: state.usage.filter { $0.value > 0 }, extensions: state.extensions)
        }
    }

    /// Streams a keydir image into checkpoint file `source.number`; returns its path.
    static func writeCheckpoint(_ source: CheckpointSource, files: DatabaseFiles, fs: any FileSystem, uuid: [UInt8], compress: Bool) throws(StorageError) -> String {
        let info = CheckpointInfo(snapshot: source.snapshot, nextRowid: source.nextRowid, replay: source.replay,
                                  rowCount: UInt64(source.keydir.count), collectionCount: UInt32(source.keydir.collectionCount))
        let writer = try CheckpointWriter(files: files, fileSystem: fs, uuid: uuid, number: source.number, info: info, compress: compress)
        do throws(StorageError) {
            for collection in source.keydir.collections {
                try writer.beginCollection(collection, rowCount: source.keydir.count(inCollection: collection))
                var failure: StorageError?
                source.keydir.forEachKey(inCollection: collection) { key, entry in
                    do throws(StorageError) {
                        try writer.add(CheckpointEntry(key: key, rowid: entry.rowid, object: RecordLocation(entry.object),
                                                       metadata: entry.metadata.map(RecordLocation.init)))
                        return true
                    } catch {
                        failure = error
                        return false
                    }
                }
                if let failure { throw failure }
            }
            try writer.setSegmentUsage(source.usage)
            for name in source.extensions.keys.sorted() {
                if let persistent = source.extensions[name] as? any PersistentExtensionState {
                    try writer.addExtensionImage(name: name, image: persistent.persistentImage())
                }
            }
            return try writer.finish()
        } catch {
            writer.abandon()
            throw error
        }
    }

    /// Records a finished checkpoint and removes what it made unnecessary: older checkpoints
    /// and log segments before its replay position that its image does not reference.
    /// Readers holding older snapshots keep their open handles (an unlinked file stays
    /// readable through them).
    func installCheckpoint(_ source: CheckpointSource, path: String) throws(StorageError) {
        unclaimedImages.dropAll()
        let (oldCheckpoint, retired) = writer.withLock { state -> (UInt32, [UInt32]) in
            let old = state.checkpointNumber
            state.checkpointNumber = source.number
            state.checkpointReplay = source.replay
            // Log segments at or after the replay position hold commits to replay: never retired.
            let retired = state.segments.files.keys.filter { number in
                number != state.log.segmentNumber
                    && (number < source.replay.segment || state.compactionSegments.contains(number))
                    && (source.usage[number] ?? 0) == 0 && (state.usage[number] ?? 0) == 0
            }
            if !retired.isEmpty {
                state.segments = state.segments.removing(retired)
                for number in retired {
                    state.usage[number] = nil
                    state.compactionSegments.remove(number)
                }
                state.generation += 1
                publish(state)
            }
            return (old, retired.sorted())
        }
        do throws(IOFailure) {
            if oldCheckpoint > 0 && fileSystem.kind(of: files.checkpointPath(oldCheckpoint)) == .file {
                try fileSystem.remove(files.checkpointPath(oldCheckpoint))
            }
            for number in retired { try fileSystem.remove(files.segmentPath(number)) }
            try fileSystem.syncDirectory(files.directory)
        } catch { throw .io(error) }
    }

    /// Reads checkpoint `number` into a replayer (keydir, usage, next row id), checking that
    /// no row id or key repeats.
    static func loadCheckpoint(_ number: UInt32, files: DatabaseFiles, fs: any FileSystem, uuid: [UInt8]) throws(StorageError) -> (info: CheckpointInfo, replayer: Replayer, images: [String: [UInt8]]) {
        var images: [String: [UInt8]] = [:]
        var loader = Keydir.Loader()
        let name = Paths.fileName(of: files.checkpointPath(number))
        func corrupt(_ conflict: Keydir.Loader.Conflict) -> StorageError {
            switch conflict {
            case .duplicateKey(let collection, let key):
                return .corrupted(offset: 0, reason: "\(name): \(collection)/\(key) appears twice")
            case .duplicateRowid(let rowid, let first, let second):
                return .corrupted(offset: 0, reason: "\(name): row id \(rowid) of \(second.collection)/\(second.key) also belongs to \(first.collection)/\(first.key)")
            }
        }
        let (info, usage) = try CheckpointReader.read(files: files, fileSystem: fs, uuid: uuid, number: number, collection: { (name, _) throws(StorageError) in
            do throws(Keydir.Loader.Conflict) { try loader.beginCollection(name) } catch { throw corrupt(error) }
        }, entry: { (entry) throws(StorageError) in
            loader.add(key: entry.key, entry: KeydirEntry(rowid: entry.rowid, object: ValueLocation(entry.object),
                                                          metadata: entry.metadata.map(ValueLocation.init)))
        }, extensionImage: { (extensionName, image) throws(StorageError) in
            images[extensionName] = image
        })
        let keydir: Keydir
        do throws(Keydir.Loader.Conflict) { keydir = try loader.finish() } catch { throw corrupt(error) }
        var replayer = Replayer(keydir: keydir)
        replayer.usage = usage
        replayer.nextRowid = max(info.nextRowid, 1)
        return (info, replayer, images)
    }
}
