import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// W7 (delete and compaction), and the child writer W8 kills.
extension Runner {
    /// W7: load every row (not timed), delete a random half in one durable transaction, then
    /// compact. Sizes are of the open database's files.
    func runW7() throws {
        let data = main
        let half = data.readOrder[0..<(data.count / 2)]
        let figures = try interleave([.yapdb, .sqliteNormal, .grdb, .lmdb], reps: settings.heavyReps) { engine, rep in
            let folder = try freshFolder("W7-\(engine)-\(rep)")
            defer { remove(folder) }
            let store = try openStore(engine, in: folder, durability: .durable, mapSize: settings.lmdbMapSize)
            defer { try? store.close() }
            try store.write(data, rows: Array(0..<data.count)[...])
            let before = Double(folderBytes(folder))
            let delete = try timed(engine == .yapdb) { try store.delete(data, rows: half) }
            let afterDelete = Double(folderBytes(folder))
            let compact = try timed(engine == .yapdb) { try store.compact() }
            let afterCompact = Double(folderBytes(folder))
            let reader = try store.makeReader()
            defer { reader.close() }
            let left = try reader.enumerateAll()
            guard left.count == data.count - half.count else {
                throw BenchError("\(engine.rawValue) W7: \(left.count) rows left after deleting \(half.count)")
            }
            try expectChecksum(left.checksum, expectedChecksum(data, data.readOrder[half.count...]), engine, "W7 rows left")
            return ["delete": delete, "compact": compact, "before": before, "afterDelete": afterDelete, "afterCompact": afterCompact]
        }
        let n = half.count.formatted()
        add("W7", "delete \(n) random rows in one durable transaction", .time, figures, "delete")
        var compactNote = "YapDB compact(); SQLite wal_checkpoint(TRUNCATE) + VACUUM; LMDB compacting mdb_env_copy2 swapped in"
        if let before = figures["afterDelete"]?[.yapdb], let after = figures["afterCompact"]?[.yapdb], median(after) >= median(before) {
            compactNote += ". YapDB's compact() reclaimed nothing: it rewrites only sealed segments (64 MiB) whose dead "
                + "fraction passes compactionThreshold (0.5), and the public API cannot seal the active one"
        }
        add("W7", "compaction after the delete", .time, figures, "compact", note: compactNote, charted: false)
        add("W7", "file size after loading \(data.count.formatted()) rows", .bytes, figures, "before", charted: false)
        add("W7", "file size after the delete", .bytes, figures, "afterDelete", charted: false)
        add("W7", "file size after compaction", .bytes, figures, "afterCompact",
            note: "raw payload of the \(n) rows left: \(format(Double(data.payloadBytes(rows: data.count - half.count)), .bytes))")
    }

    /// Starts `yapdb-bench child-writer ENGINE FOLDER`, waits for its first commit, lets it run
    /// 250 ms into the next transaction, and kills it with SIGKILL.
    func killWriterMidCommit(_ engine: Engine, _ folder: URL) throws {
        let child = Process()
        child.executableURL = selfExecutable()
        child.arguments = ["child-writer", engine.rawValue, folder.path]
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        let line = output.fileHandleForReading.readLine()
        guard line == "committed" else {
            child.terminate()
            throw BenchError("W8 child writer for \(engine.rawValue) said \(line ?? "nothing")")
        }
        usleep(250_000)
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
    }
}

/// The child of W8: opens the database and writes transactions of 100,000 rows (of its own
/// data) forever, saying "committed" after the first, until it is killed.
func childWriter(engine: String, folder: String) -> Never {
    do {
        guard let engine = Engine(rawValue: engine) else { throw BenchError("unknown engine \(engine)") }
        let data = Dataset(count: 100_000, valueSize: 100, kind: .random, seed: 0x5EED_0008)
        let store = try openStore(engine, in: URL(fileURLWithPath: folder), durability: .durable, mapSize: 32 << 30)
        var first = true
        while true {
            try store.write(data, rows: Array(0..<data.count)[...])
            if first {
                FileHandle.standardOutput.write(Data("committed\n".utf8))
                first = false
            }
        }
    } catch {
        FileHandle.standardOutput.write(Data("error: \(error)\n".utf8))
        exit(1)
    }
}

extension FileHandle {
    /// One line (without its newline), or nil at end of file.
    func readLine() -> String? {
        var bytes: [UInt8] = []
        while true {
            let byte = readData(ofLength: 1)
            guard let b = byte.first else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if b == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(b)
        }
    }
}
