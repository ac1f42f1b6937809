import Foundation
import Testing
@testable import YapDBStorage

/// docs/format.md is the specification of the bytes; these tests keep its version line and its
/// limits table equal to `Format`, and keep every command the docs quote runnable, so the
/// documents cannot drift from the code unnoticed.
@Suite struct FormatDocumentTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ relativePath: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relativePath), encoding: .utf8)
    }

    @Test func versionLineMatchesTheCode() throws {
        let text = try Self.read("docs/format.md")
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("Format version:") })
        let digits = line.drop { !$0.isNumber }.prefix { $0.isNumber }
        #expect(UInt32(digits) == Format.version, "docs/format.md says \(line); Format.version is \(Format.version)")
        // The changelog's newest entry names the same version.
        #expect(text.contains("- Version \(Format.version) ("), "the changelog has no entry for version \(Format.version)")
    }

    /// Each row of §6 "Limits" that names a `Format` constant states its value; compare it.
    @Test func limitsTableMatchesTheCode() throws {
        let text = try Self.read("docs/format.md")
        let rows = limitsRows(text)
        let expected: [String: Int] = [
            "Format.maxValueSize": Format.maxValueSize,
            "Format.maxKeyLength": Format.maxKeyLength,
            "Format.maxRecordPayload": Format.maxRecordPayload,
            "Format.defaultSegmentSize": Int(Format.defaultSegmentSize),
            "Format.compressionMinimum": Format.compressionMinimum,
            "Format.checkpointBlockSize": Format.checkpointBlockSize,
            "Format.indexDefaultPageSize": Format.indexDefaultPageSize,
            "Format.indexDefaultFileSize": Int(Format.indexDefaultFileSize),
            "Format.rootMaximumSize": Format.rootMaximumSize,
        ]
        for (name, value) in expected {
            let row = try #require(rows[name], "§6 has no row for \(name)")
            let stated = try #require(DocumentedSize(row), "cannot read the size in §6's row for \(name): \(row)")
            #expect(stated.matches(value), "§6 says \(name) = \(row); the code has \(value)")
        }
    }

    /// Every `yapdb SUBCOMMAND` and `yapdb-measure SUBCOMMAND` quoted in code spans of the docs
    /// exists in the tools' sources.
    @Test func quotedCommandsExist() throws {
        let tools = try toolSubcommands()
        var files = ["README.md", "Benchmarks/README.md", "Benchmarks/profiles.md", "Fuzz/README.md"]
        for folder in ["docs", "Sources/YapDB/YapDB.docc"] {
            let names = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent(folder).path)
            files += names.filter { $0.hasSuffix(".md") }.map { "\(folder)/\($0)" }
        }
        for file in files {
            guard let text = try? Self.read(file) else { continue }
            for (tool, subcommand) in quotedCommands(in: text) {
                let known = tools[tool] ?? []
                #expect(known.contains(subcommand), "\(file) quotes `\(tool) \(subcommand)`, which \(tool) does not have")
            }
        }
    }

    // MARK: Reading the documents

    func limitsRows(_ text: String) -> [String: String] {
        guard let start = text.range(of: "## 6. Limits") else { return [:] }
        let section = text[start.upperBound...].prefix { _ in true }
        var rows: [String: String] = [:]
        for line in section.split(separator: "\n") {
            if line.hasPrefix("## ") { break }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, cells[0].hasPrefix("`Format.") else { continue }
            let name = cells[0].split(separator: "`")[0]
            rows[String(name)] = cells[1]
        }
        return rows
    }

    /// Subcommand names per executable, read from the tools' sources (`commandName:` and the
    /// default name ArgumentParser derives from a subcommand type).
    func toolSubcommands() throws -> [String: Set<String>] {
        func names(in folder: String, tool: String) throws -> Set<String> {
            let path = Self.root.appendingPathComponent(folder).path
            var found: Set<String> = []
            for file in try FileManager.default.contentsOfDirectory(atPath: path) where file.hasSuffix(".swift") {
                let source = try String(contentsOfFile: "\(path)/\(file)", encoding: .utf8)
                for match in source.matches(of: /commandName: "([a-z-]+)"/) where match.1 != tool {
                    found.insert(String(match.1))
                }
                for match in source.matches(of: /subcommands: \[([^\]]*)\]/) {
                    for type in match.1.split(separator: ",") {
                        let name = type.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: ".self", with: "")
                        found.insert(name.lowercased())
                    }
                }
            }
            return found
        }
        return ["yapdb": try names(in: "Sources/yapdb", tool: "yapdb"),
                "yapdb-measure": try names(in: "Sources/YapDBMeasure", tool: "yapdb-measure")]
    }

    /// `yapdb X` / `yapdb-measure X` inside backtick spans and fenced code blocks.
    func quotedCommands(in text: String) -> [(String, String)] {
        var code: [Substring] = []
        var inFence = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") { inFence.toggle(); continue }
            if inFence { code.append(line); continue }
            let pieces = line.split(separator: "`", omittingEmptySubsequences: false)
            code += pieces.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        }
        var commands: [(String, String)] = []
        for piece in code {
            for match in piece.matches(of: /(?:^|[\s\/])(yapdb(?:-measure)?) ([a-z][a-z-]+)/) {
                commands.append((String(match.1), String(match.2)))
            }
        }
        return commands
    }
}

/// A size as format.md writes it: a sum of terms such as "1 GiB + 64 KiB", "65,536 bytes",
/// "10 + 65,536 + 10 bytes" or "4096 bytes"; a leading "≈" means within 10 %.
struct DocumentedSize {
    var value: Int
    var approximate: Bool

    init?(_ cell: String) {
        var text = cell
        if let paren = text.firstIndex(of: "(") { text = String(text[..<paren]) }
        approximate = text.contains("≈")
        text = text.replacingOccurrences(of: "≈", with: "").replacingOccurrences(of: ",", with: "")
        var total = 0
        for term in text.split(separator: "+") {
            let words = term.split(separator: " ")
            guard let number = words.first.flatMap({ Int($0) }) else { return nil }
            let unit = words.dropFirst().first.map(String.init) ?? "bytes"
            switch unit {
            case "bytes", "byte": total += number
            case "KiB": total += number << 10
            case "MiB": total += number << 20
            case "GiB": total += number << 30
            default: return nil
            }
        }
        value = total
    }

    func matches(_ actual: Int) -> Bool {
        approximate ? abs(Double(actual - value)) <= 0.1 * Double(actual) : actual == value
    }
}
