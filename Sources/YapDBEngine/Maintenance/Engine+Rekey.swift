#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import YapDBStorage

extension Engine {
    /// Changes the key that wraps an encrypted database's data key (docs/format.md §12,
    /// "Rekey"): `MainFile.rekey` on the main file, under `maintenance` so no checkpoint or
    /// other rekey runs beside it. No data file changes.
    ///
    /// - Parameters:
    ///   - current: the key the database opened with (it must still open the key slot).
    ///   - new: the key to wrap the data key with from now on.
    /// - Throws: `readOnly`, `closed`; `wrongKey`/`keyUnavailable` when `current` does not open
    ///   the slot or `new` cannot wrap; `io`; `corrupted` when the new slot does not read back.
    ///   A plain database is refused before anything is written (`io` with `ENOTSUP`).
    package func rekey(current: CipherKeyOptions, new: CipherKeyOptions) throws(EngineError) {
        guard cipher != nil else {
            throw EngineError(StorageError.io(IOFailure(errno: ENOTSUP, operation: "rekey", path: path)))
        }
        try engineBoundary { () throws(StorageError) in
            try maintenance.withLock { _ throws(StorageError) in
                let refusal = writer.withLock { state -> StorageError? in
                    state.closed ? .closed : state.readOnly ? .readOnly : nil
                }
                if let refusal { throw refusal }
                let file: any StorageFile
                do throws(IOFailure) { file = try fileSystem.open(path, mode: .readWrite) } catch { throw .io(error) }
                defer { file.close() }
                try MainFile.rekey(file: file, path: path, uuid: uuid, current: current.key, new: new.key,
                                   iterations: new.creationIterations, kdfSalt: new.creationSalt)
            }
        }
    }
}
