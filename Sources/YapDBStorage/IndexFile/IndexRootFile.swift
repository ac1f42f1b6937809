#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Publishing and loading the root record `NAME-root` (docs/format.md §10).
///
/// Publication is *tmp + rename + directory sync*: the record is written whole to
/// `NAME-root.tmp`, `fdatasync`ed, renamed over `NAME-root`, and the directory synced. The
/// bytes under the name `NAME-root` were always synced before they got that name, so a crash
/// at any step leaves the previous published record or the new one, never a torn one; the new
/// one counts as published once the directory sync returned. (docs/format.md §10 explains the
/// choice against two alternating slots.)
package enum IndexRootFile {
    /// Publishes `root`: the caller has synced every page it names (`IndexFileWriter.sync()`).
    ///
    /// Steps: remove a leftover `NAME-root.tmp`; create it (`createNew`); write the record;
    /// `fdatasync`; close; rename to `NAME-root`; sync the directory. On failure the temporary
    /// file is removed when possible, and the error is thrown; the previous record is then
    /// still the published one *unless* the failure came from the final directory sync, after
    /// which either may be found at the next open (both are complete). A failed publication
    /// proves nothing about the disk: the caller treats the checkpoint as not done.
    ///
    /// - Throws: `.io` from any step.
    package static func publish(_ root: IndexRoot, files: DatabaseFiles, fileSystem fs: any FileSystem) throws(IndexFileError) {
        let bytes = root.encoded()
        let temporary = files.rootTemporaryPath
        var renamed = false
        do throws(IOFailure) {
            if fs.kind(of: temporary) != .missing { try fs.remove(temporary) }
            let file = try fs.open(temporary, mode: .createNew)
            defer { file.close() }
            try file.write(bytes, at: 0)
            try file.sync()
            try fs.rename(temporary, to: files.rootPath)
            renamed = true
            try fs.syncDirectory(files.directory)
        } catch {
            if !renamed, fs.kind(of: temporary) == .file { try? fs.remove(temporary) }
            throw .io(error)
        }
    }

    /// Loads and validates the published root record; `nil` when there is none (a database
    /// that never had an index checkpoint). A leftover `NAME-root.tmp` is ignored (it was never
    /// published; the next `publish` replaces it).
    ///
    /// - Parameter uuid: the database's UUID, from the main file.
    /// - Throws: `.corrupted` with `.overLimit` for a file larger than
    ///   `Format.rootMaximumSize` (checked before reading); the errors of `IndexRoot.decode`;
    ///   `.io`.
    package static func load(files: DatabaseFiles, fileSystem fs: any FileSystem, uuid: [UInt8]) throws(IndexFileError) -> IndexRoot? {
        let path = files.rootPath
        let file: any StorageFile
        do {
            file = try fs.open(path, mode: .readOnly)
        } catch {
            if error.errno == ENOENT { return nil }
            throw .io(error)
        }
        defer { file.close() }
        let size: Int64
        do { size = try file.size() } catch { throw .io(error) }
        guard size <= Int64(Format.rootMaximumSize) else { throw .corrupted(path: path, offset: 0, reason: .overLimit) }
        guard size >= Int64(Format.headerSize) else { throw .notADatabase(path: path) }
        let bytes: [UInt8]
        do { bytes = try file.readExactly(Int(size), at: 0) } catch { throw .io(error) }
        return try IndexRoot.decode(bytes, path: path, uuid: uuid)
    }
}
