#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import YapDBStorage
import YapDBEngine
@testable import YapDB

/// How file-system refusals reach the caller (docs/reliability.md, "Permissions").
@Suite struct OpenPermissionTests {
    static func mapped(_ code: Int32, _ operation: String = "open") -> YapDatabaseError {
        YapDatabaseError(EngineError.io(errno: code, operation: operation, path: "/x/db"))
    }

    /// Bug: `EACCES`/`EPERM` (permissions, data protection on a locked device) were reported
    /// as a read-only volume.
    @Test func permissionErrorsAreNotReadOnly() {
        #expect(Self.mapped(EACCES) == .permissionDenied(operation: "open"))
        #expect(Self.mapped(EPERM, "pwrite") == .permissionDenied(operation: "pwrite"))
        #expect(Self.mapped(EROFS) == .readOnly)
        #expect(Self.mapped(ENOSPC) == .diskFull && Self.mapped(EDQUOT) == .diskFull)
        #expect(YapDatabaseError.permissionDenied(operation: "open").description.contains("permission denied during open"))
    }

    @Test func missingFilesAreNamed() {
        let error = YapDatabaseError(EngineError.missingFiles(["db-seg-0000000003"]))
        #expect(error == .missingFiles(names: ["db-seg-0000000003"]))
        #expect(error.description.contains("db-seg-0000000003"))
    }

    /// A database whose main file was copied alone fails to open through the public API, and
    /// the copy is left as it was (beside it only the empty lock file).
    @Test func aMainFileCopiedAloneIsRefused() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("yapdb-perm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("db")
        let database = try YapDatabase.open(url: url)
        database.newConnection().readWrite { tx in tx.setObject("v", forKey: "k", inCollection: "c") }
        try database.close()
        let copy = dir.appendingPathComponent("copy")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: url, to: copy.appendingPathComponent("db"))
        #expect(throws: YapDatabaseError.self) { _ = try YapDatabase.open(url: copy.appendingPathComponent("db")) }
        do { _ = try YapDatabase.open(url: copy.appendingPathComponent("db")) } catch {
            guard case .missingFiles(let names) = error else { Issue.record("threw \(error)"); return }
            #expect(names.contains { $0.hasPrefix("db-seg-") })
        }
        // The empty lock file, taken before anything is read, is the one file the open adds.
        #expect(try FileManager.default.contentsOfDirectory(atPath: copy.path).sorted() == ["db", "db-lock"])
    }
}
