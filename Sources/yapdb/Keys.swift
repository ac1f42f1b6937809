import ArgumentParser
import Foundation
import YapDB

/// Where the key of an encrypted database comes from: an environment variable or a file,
/// never an argument (arguments show in `ps` and in shell history). Without either the
/// database is opened as a plain one; an encrypted one then fails with exit code 8.
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("key-env"), help: ArgumentHelp("The environment variable that holds the key.", valueName: "NAME"))
    var environmentName: String?

    @Option(name: .customLong("key-file"), help: ArgumentHelp("A file that holds the key (one trailing newline is ignored).", valueName: "PATH"))
    var file: String?

    @Flag(name: .customLong("raw-key"), help: "The key is a raw 256-bit key (64 hexadecimal digits, or 32 bytes in a key file), not a passphrase.")
    var raw = false

    /// The key these options name, nil when they name none.
    func key() throws -> YapDatabaseCipherKey? {
        try KeySource(environmentName: environmentName, file: file, raw: raw, what: "key").key()
    }
}

/// One key source as the options give it (`--key-env`/`--key-file`/`--raw-key`, or the
/// `--new-…` forms of `yapdb rekey`), read and checked.
struct KeySource {
    var environmentName: String?
    var file: String?
    var raw: Bool
    /// "key" or "new key", for the messages.
    var what: String

    func key() throws -> YapDatabaseCipherKey? {
        let bytes: Data
        switch (environmentName, file) {
        case (nil, nil):
            if raw { throw ToolFailure("--\(flagPrefix)raw-key needs --\(flagPrefix)key-env or --\(flagPrefix)key-file", code: 1) }
            return nil
        case (_?, _?):
            throw ToolFailure("give the \(what) by --\(flagPrefix)key-env or --\(flagPrefix)key-file, not both", code: 1)
        case (let name?, nil):
            guard let value = ProcessInfo.processInfo.environment[name] else {
                throw ToolFailure("the environment variable \(name) (the \(what)) is not set", code: 1)
            }
            bytes = Data(value.utf8)
        case (nil, let path?):
            do { bytes = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                throw ToolFailure("cannot read the \(what) file \(path): \(error.localizedDescription)", code: 1)
            }
        }
        var text = bytes
        if text.last == UInt8(ascii: "\n") { text.removeLast() }
        if text.last == UInt8(ascii: "\r") { text.removeLast() }
        guard !text.isEmpty else { throw ToolFailure("the \(what) is empty", code: 8) }
        if raw {
            if let decoded = Self.hex(text) { return .raw(decoded) }
            // A key file may hold the raw bytes themselves (exactly as read: no newline taken off).
            if file != nil, bytes.count == 32 { return .raw(bytes) }
            throw ToolFailure("a raw \(what) is 64 hexadecimal digits (or exactly 32 bytes in a key file)", code: 1)
        }
        guard let passphrase = String(data: text, encoding: .utf8) else {
            throw ToolFailure("the \(what) is not UTF-8 text (give a raw key with --\(flagPrefix)raw-key)", code: 1)
        }
        return .passphrase(passphrase)
    }

    private var flagPrefix: String { what == "key" ? "" : "new-" }

    /// 32 bytes from 64 hexadecimal digits, nil for anything else.
    static func hex(_ text: Data) -> Data? {
        guard text.count == 64 else { return nil }
        var bytes = Data(capacity: 32)
        var index = text.startIndex
        while index < text.endIndex {
            guard let high = digit(text[index]), let low = digit(text[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func digit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// `yapdb rekey PATH`.
struct Rekey: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change the key of an encrypted database.",
        discussion: """
        The current key comes from --key-env or --key-file, the new one from --new-key-env or --new-key-file \
        (never from the command line). The data key is rewrapped in the main file's two key slots, one after the \
        other: no data file is rewritten, and a crash at any point leaves a database that opens with the old key \
        or the new one.
        """)
    @Argument(help: "The database's main file.") var path: String
    @OptionGroup var cipher: KeyOptions
    @Option(name: .customLong("new-key-env"), help: ArgumentHelp("The environment variable that holds the new key.", valueName: "NAME"))
    var newEnvironmentName: String?
    @Option(name: .customLong("new-key-file"), help: ArgumentHelp("A file that holds the new key.", valueName: "PATH"))
    var newFile: String?
    @Flag(name: .customLong("new-raw-key"), help: "The new key is a raw 256-bit key (64 hexadecimal digits, or 32 bytes in a key file).")
    var newRaw = false
    @OptionGroup var lock: WriteLockOptions

    func run() throws {
        try reportingFailures {
            guard let current = try cipher.key() else {
                throw ToolFailure("give the current key with --key-env NAME or --key-file PATH", code: 8)
            }
            guard let fresh = try KeySource(environmentName: newEnvironmentName, file: newFile, raw: newRaw, what: "new key").key() else {
                throw ToolFailure("give the new key with --new-key-env NAME or --new-key-file PATH", code: 1)
            }
            let database = try openExisting(path, readOnly: false, busyTimeout: lock.busyTimeout, key: current)
            do throws(YapDatabaseError) {
                try database.rekey(to: fresh)
                try database.close()
            } catch {
                if case .io(let code, "rekey") = error, code == ENOTSUP {
                    throw ToolFailure("\(path) is not encrypted: there is no key to change", code: 1)
                }
                throw ToolFailure(error, path: path)
            }
            print("rekeyed \(path)")
        }
    }
}
