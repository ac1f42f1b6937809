import Foundation
import Testing
import YapDB
import TestSupport

/// The `yapdb` tool on encrypted databases (issue 26, item 4): the key comes from an
/// environment variable or a file, never the command line; `rekey` changes it; `verify` names
/// the file and offset of a sealed unit that does not authenticate.
@Suite(.serialized) struct ToolEncryptionTests {
    /// Runs the tool to its end with `environment` added; its exit status and every line it
    /// wrote (standard output and standard error together).
    static func tool(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, lines: [String]) {
        let child = try ChildProcess(arguments, executable: ChildProcess.builtProgram("yapdb"), environment: environment, mergingErrors: true)
        let status = child.waitForExit()
        return ((status >> 8) & 0xFF, child.remainingLines())
    }

    static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// Whether any file in `directory` holds `marker`'s bytes.
    static func anyFileHolds(_ marker: String, in directory: TemporaryDirectory) throws -> Bool {
        let needle = Data(marker.utf8)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.file(name)))
            if bytes.range(of: needle) != nil { return true }
        }
        return false
    }

    @Test func theKeyComesFromAFileOrAnEnvironmentVariableAndOpensEveryCommand() throws {
        let directory = TemporaryDirectory("yapdb-toolkey")
        defer { directory.remove() }
        let path = directory.file("db")
        let keyFile = directory.file("key.txt")
        let wrongFile = directory.file("wrong.txt")
        try Self.write("correct horse battery staple\n", to: keyFile)
        try Self.write("another passphrase", to: wrongFile)

        let put = try Self.tool(["put", "--key-file", keyFile, path, "rows", "a", "marker-value-4711"])
        #expect(put.status == 0, "\(put.lines)")
        #expect(try !Self.anyFileHolds("marker-value-4711", in: directory), "the value is stored sealed")

        let noKey = try Self.tool(["get", path, "rows", "a"])
        #expect(noKey.status == 8)
        #expect(noKey.lines.contains { $0.contains("--key-file") }, "the message says how to give the key: \(noKey.lines)")
        #expect(try Self.tool(["get", "--key-file", wrongFile, path, "rows", "a"]).status == 8)

        let fromFile = try Self.tool(["get", "--key-file", keyFile, path, "rows", "a"])
        #expect(fromFile.status == 0 && fromFile.lines == ["marker-value-4711"], "\(fromFile.lines)")
        // The file's trailing newline is not part of the passphrase: the variable has none.
        let fromEnvironment = try Self.tool(["get", "--key-env", "YAPDB_TEST_KEY", path, "rows", "a"],
                                            environment: ["YAPDB_TEST_KEY": "correct horse battery staple"])
        #expect(fromEnvironment.status == 0 && fromEnvironment.lines == ["marker-value-4711"], "\(fromEnvironment.lines)")
        #expect(try Self.tool(["get", "--key-env", "YAPDB_TEST_KEY_NOT_SET", path, "rows", "a"]).status == 1)
        #expect(try Self.tool(["get", "--key-env", "YAPDB_TEST_KEY", "--key-file", keyFile, path, "rows", "a"],
                              environment: ["YAPDB_TEST_KEY": "x"]).status == 1, "one source at a time")

        for command in [["stats"], ["dump"], ["verify"]] {
            let run = try Self.tool(command + ["--key-file", keyFile, path])
            #expect(run.status == 0, "\(command): \(run.lines)")
        }
        #expect(try Self.tool(["dump", "--key-file", keyFile, path]).lines.contains("rows/a = marker-value-4711"))
        #expect(try Self.tool(["put", "--key-file", keyFile, path, "rows", "b", "second"]).status == 0)
        #expect(try Self.tool(["compact", "--key-file", keyFile, path]).status == 0)
        #expect(try Self.tool(["get", "--key-file", keyFile, path, "rows", "b"]).lines == ["second"])

        // A key given for a plain database is refused, and changes nothing.
        let plain = directory.file("plain")
        #expect(try Self.tool(["put", plain, "rows", "a", "clear"]).status == 0)
        #expect(try Self.tool(["get", "--key-file", keyFile, plain, "rows", "a"]).status == 8)
        #expect(try Self.tool(["get", plain, "rows", "a"]).lines == ["clear"])
    }

    @Test func rekeyChangesTheKeyAndTakesBothFromOutsideTheCommandLine() throws {
        let directory = TemporaryDirectory("yapdb-toolkey")
        defer { directory.remove() }
        let path = directory.file("db")
        let raw = String(repeating: "0123456789abcdef", count: 4)
        let environment = ["YAPDB_TEST_RAW": raw]
        #expect(try Self.tool(["put", "--key-env", "YAPDB_TEST_RAW", "--raw-key", path, "rows", "a", "sealed"], environment: environment).status == 0)
        // A raw key taken as a passphrase is another key.
        #expect(try Self.tool(["get", "--key-env", "YAPDB_TEST_RAW", path, "rows", "a"], environment: environment).status == 8)
        #expect(try Self.tool(["get", "--key-env", "YAPDB_TEST_SHORT", "--raw-key", path, "rows", "a"],
                              environment: ["YAPDB_TEST_SHORT": "abcd"]).status == 1, "a raw key is 64 hex digits")

        let newFile = directory.file("new.txt")
        try Self.write("the new passphrase", to: newFile)
        #expect(try Self.tool(["rekey", path, "--new-key-file", newFile]).status == 8, "the current key is needed")
        #expect(try Self.tool(["rekey", "--key-env", "YAPDB_TEST_RAW", "--raw-key", path], environment: environment).status == 1,
                "the new key is needed")
        let rekey = try Self.tool(["rekey", "--key-env", "YAPDB_TEST_RAW", "--raw-key", "--new-key-file", newFile, path], environment: environment)
        #expect(rekey.status == 0, "\(rekey.lines)")
        #expect(try Self.tool(["get", "--key-env", "YAPDB_TEST_RAW", "--raw-key", path, "rows", "a"], environment: environment).status == 8,
                "the old key no longer opens it")
        #expect(try Self.tool(["get", "--key-file", newFile, path, "rows", "a"]).lines == ["sealed"])

        let plain = directory.file("plain")
        #expect(try Self.tool(["put", plain, "rows", "a", "clear"]).status == 0)
        let refused = try Self.tool(["rekey", "--key-file", newFile, "--new-key-file", newFile, plain])
        #expect(refused.status != 0, "a plain database has no key to change: \(refused.lines)")
    }

    @Test func verifyNamesTheFileAndOffsetOfASealedRecordThatDoesNotAuthenticate() throws {
        let directory = TemporaryDirectory("yapdb-toolkey")
        defer { directory.remove() }
        let path = directory.file("db")
        let keyFile = directory.file("key.txt")
        try Self.write("a passphrase", to: keyFile)
        let options = YapDatabaseOptions()
        options.cipherKey = .passphrase("a passphrase")
        options.kdfIterNumber = 1_000
        let database = try YapDatabase.open(url: URL(fileURLWithPath: path), options: options)
        for batch in 0..<20 {
            try database.newConnection().write { tx in
                for row in 0..<20 { tx.setObject("row \(batch)-\(row) " + String(repeating: "x", count: 100), forKey: "\(batch)-\(row)", inCollection: "rows") }
            }
        }
        try database.close()
        #expect(try Self.tool(["verify", "--key-file", keyFile, path]).status == 0)

        // One bit flipped in the middle of the log: commits after it still authenticate, so
        // this is damage, not a torn tail.
        let segment = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains("-seg-") }.sorted().first
        let segmentPath = directory.file(try #require(segment))
        var bytes = try Data(contentsOf: URL(fileURLWithPath: segmentPath))
        bytes[bytes.count / 2] ^= 0x10
        try bytes.write(to: URL(fileURLWithPath: segmentPath))

        let run = try Self.tool(["verify", "--key-file", keyFile, path])
        #expect(run.status == 4, "\(run.lines)")
        #expect(run.lines.contains { $0.contains(segment!) && $0.contains("authenticate") },
                "the report names the file and says the record did not authenticate: \(run.lines)")
        #expect(run.lines.contains { $0.range(of: #"offset \d+|at \d+"#, options: .regularExpression) != nil }, "and where: \(run.lines)")
    }
}
