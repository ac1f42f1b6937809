import Foundation
import Testing
import TestSupport
import YapDB

/// What `corruptAction` may touch.
@Suite struct CorruptActionTests {
    /// A path that names somebody else's file (not a YapDB file, and no files of ours beside
    /// it) is an error under every action: `.rename` and `.delete` never touch it.
    @Test(arguments: [YapDatabaseCorruptAction.rename, .delete])
    func aForeignFileIsNeverRenamedOrDeleted(action: YapDatabaseCorruptAction) throws {
        let directory = TemporaryDirectory("yapdb-foreign")
        defer { directory.remove() }
        let path = directory.file("notes.txt")
        let contents = Data("somebody else's notes, long enough to hold a header and more: ".utf8 + Array(repeating: UInt8(ascii: "x"), count: 200))
        #expect(FileManager.default.createFile(atPath: path, contents: contents))
        let options = YapDatabaseOptions()
        options.corruptAction = action
        #expect(throws: YapDatabaseError.notADatabase) { try YapDatabase.open(url: URL(fileURLWithPath: path), options: options) }
        #expect(FileManager.default.contents(atPath: path) == contents, "the file is untouched")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names == ["notes.txt"], "nothing renamed or created: \(names)")
    }
}
