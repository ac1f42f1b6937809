import YapDBStorage
import YapDBIndex

extension Engine {
    /// With multi-process support: removes the files the newest published checkpoint does not
    /// need, unless another live process's slot pins an older checkpoint (its snapshots may
    /// still read them; docs/format.md §14). Called by a checkpoint or compaction once it is
    /// installed, and at close, holding the processes' writer lock and `maintenance` (so no
    /// checkpoint or compaction is half-written anywhere): the files a checkpoint could not
    /// remove because of a pin go with the next such call, in whichever process, once no slot
    /// pins them. What goes:
    /// - segments with no live bytes in the newest checkpoint, before its replay position, or
    ///   compaction segments anywhere (never the active segment, never a log segment the
    ///   replay still reads);
    /// - checkpoint files older than the newest;
    /// - index files the newest checkpoint does not name, numbered below one it names (a file
    ///   above may be another process's spill, not yet named by any checkpoint).
    ///
    /// This process's own older snapshots keep reading removed segments and index files
    /// through their pinned descriptors (`DescriptorCache.keepOpen`). A checkpoint that cannot
    /// be read here is reported and nothing is removed.
    func removeUnpinnedFiles(_ sharing: ProcessSharing) throws(StorageError) {
        guard let published = sharing.shared.read(), published.uuid == uuid, published.checkpoint > 0 else { return }
        let newest = published.checkpoint
        guard !sharing.othersPin(before: newest) else { return }
        let loaded: LoadedCheckpoint
        do throws(StorageError) { loaded = try Self.loadCheckpoint(newest, files: files, fs: fileSystem, uuid: uuid) } catch {
            options.reportFailure?("reading checkpoint \(newest) to remove the files it replaced failed: \(error)")
            return
        }
        let active = writer.withLock { $0.log.segmentNumber }
        let named = Set(loaded.root.files.map(\.number))
        let highestNamed = named.max() ?? 0
        do throws(IOFailure) {
            let listing = try files.list(fileSystem)
            var removed = false
            for number in listing.segments where (loaded.usage[number] ?? 0) == 0
                && number != published.logEnd.segment && number != active {
                let path = files.segmentPath(number)
                if number >= loaded.info.replay.segment {
                    guard try Self.segmentKind(path, fs: fileSystem) == .compactionSegment else { continue }
                }
                descriptors?.keepOpen(path: path)
                try fileSystem.remove(path)
                removed = true
            }
            for number in listing.checkpoints where number < newest {
                try fileSystem.remove(files.checkpointPath(number))
                removed = true
            }
            for number in try files.listIndexFiles(fileSystem) where !named.contains(number) && number < highestNamed {
                let path = files.indexPath(number)
                descriptors?.keepOpen(path: path)
                try fileSystem.remove(path)
                removed = true
            }
            if removed { try fileSystem.syncDirectory(files.directory) }
        } catch { throw .io(error) }
    }

    /// At close with multi-process support: removes what earlier checkpoints left because of
    /// pins that are gone now (`removeUnpinnedFiles`), when the writer lock is free at once.
    func removeUnpinnedFilesAtClose() {
        guard let sharing else { return }
        guard writer.withLock({ !$0.closed && !$0.readOnly }) else { return }
        do throws(StorageError) { try sharing.acquire(wait: .zero) } catch { return }
        defer { sharing.release() }
        do throws(StorageError) {
            try maintenance.withLock { (_: inout Void) throws(StorageError) in try removeUnpinnedFiles(sharing) }
        } catch {
            options.reportFailure?("removing files at close failed: \(error)")
        }
    }
}
