import ArgumentParser
import YapDBStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `yapdb demo`: a guided run on a database in a temporary folder.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the guided demo on a database in a temporary folder.")

    @Option(help: "Folder to create the demo database in (default: a new temporary folder).")
    var directory: String?

    @Flag(help: "Keep the demo database afterwards.")
    var keep = false

    func run() throws {
        let folder = try directory ?? TemporaryFolder.make()
        let path = Paths.join(folder, "demo.yapdb")
        let fs = PosixFileSystem.shared
        print("YapDB storage demo — database at \(path)\n")

        print("1. Create the database and write 3 commits (each synced before it returns).")
        var options = LogStore.Options()
        options.syncMode = .full
        let first = try LogStore.open(path: path, fileSystem: fs, options: options) { _ in }
        let people = [("ada", "{\"name\":\"Ada Lovelace\",\"born\":1815}"),
                      ("grace", "{\"name\":\"Grace Hopper\",\"born\":1906}"),
                      ("alan", "{\"name\":\"Alan Turing\",\"born\":1912}")]
        for (index, (key, json)) in people.enumerated() {
            try first.writer.begin()
            _ = try Array(json.utf8).withBytes { (raw) throws(StorageError) in
                try first.writer.appendValue(.object, rowid: UInt64(index + 1), collection: "people", key: key,
                                             value: raw, noMetadata: true, compress: true)
            }
            let end = try first.writer.commit(snapshot: first.writer.lastSnapshot + 1)
            print("   commit \(first.writer.lastSnapshot): people/\(key) → log position \(end)")
        }

        print("\n2. Start a 4th commit and leave it half-written, as a crash would.")
        try first.writer.begin()
        _ = try Array("{\"name\":\"Edsger Dijkstra\"}".utf8).withBytes { (raw) throws(StorageError) in
            try first.writer.appendValue(.object, rowid: 4, collection: "people", key: "edsger", value: raw, noMetadata: true, compress: true)
        }
        let tornBytes = Array("{\"name\":\"Edsger".utf8)
        try first.writer.file.write(tornBytes, at: Int64(first.writer.end))
        print("   wrote \(tornBytes.count) bytes of a record with no commit record after them")
        first.lock.unlock()
        first.writer.file.close()

        print("\n3. Reopen: recovery scans the log, applies every valid commit, and cuts the torn tail.")
        var found: [(UInt64, String, RecordLocation)] = []
        let second = try LogStore.open(path: path, fileSystem: fs, options: options) { commit in
            for op in commit.operations {
                if case .value(_, _, let collection, let key, _, let location) = op {
                    found.append((commit.info.snapshot, "\(collection)/\(key)", location))
                }
            }
        }
        let report = second.report
        print("   commits recovered: \(report.commits), last snapshot: \(report.lastSnapshot)")
        print("   torn tail truncated: \(report.truncatedBytes) bytes" + (report.tornReason.map { " (\($0))" } ?? ""))
        for (snapshot, name, location) in found {
            let file = try fs.open(second.writer.files.segmentPath(location.segment), mode: .readOnly)
            let (_, value) = try SegmentReader.value(at: location, in: file)
            file.close()
            print("   snapshot \(snapshot): \(name) = \(String(decoding: value ?? [], as: UTF8.self))")
        }
        second.lock.unlock()
        second.writer.file.close()

        let listing = try DatabaseFiles(mainPath: path).list(fs)
        print("\n4. Files beside the main file: \(listing.segments.count) segment(s), \(listing.checkpoints.count) checkpoint(s).")
        if keep {
            print("\nKept the database at \(folder).")
        } else {
            TemporaryFolder.remove(folder)
            print("\nRemoved \(folder).")
        }
    }
}

/// Temporary folders for the demo and measurements.
enum TemporaryFolder {
    static func make() throws -> String {
        var template = Array("/tmp/yapdb-demo-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw ValidationError("could not create a temporary folder (errno \(errno))")
        }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func remove(_ folder: String) {
        if let names = try? PosixFileSystem.shared.listDirectory(folder) {
            for name in names { unlink(Paths.join(folder, name)) }
        }
        rmdir(folder)
    }
}
