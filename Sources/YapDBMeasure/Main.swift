import ArgumentParser
import YapDBStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `yapdb-measure`: figures for the storage and engine layers, measured in one run.
/// Build with `swift build -c release --product yapdb-measure`.
@main
struct Measure: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "yapdb-measure",
        abstract: "Measure the storage and engine layers (build with -c release).",
        subcommands: [MeasureStorage.self, MeasureEngine.self, MeasureIndex.self, MeasureOpen.self, MeasureVisit.self, MeasureTokenize.self, MeasureCrypto.self]
    )
}

/// Temporary folders for measurements.
enum TemporaryFolder {
    static func make() throws -> String {
        var template = Array("/tmp/yapdb-measure-XXXXXX".utf8CString)
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
