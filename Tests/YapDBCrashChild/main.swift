// The child process of the reliability tests (not a product):
//
//   YapDBCrashChild run PATH SEED   opens PATH (durability .full) and commits transactions
//                                   snapshot+1, snapshot+2, … of `CrashChildScript` for SEED,
//                                   writing "N\n" to standard output after commit N returned,
//                                   until killed (or 120 s pass).
//   YapDBCrashChild hold PATH       opens PATH, writes "ready\n", holds it open until standard
//                                   input closes.
//
// Exit status: 0 normal end, 2 usage, 3 open failed, 4 commit failed (the error on stderr).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import YapDB
import TestSupport

/// Writes `line` and a newline to descriptor `fd` in one `write` (unbuffered: a line the
/// parent reads was written before the kill, never lost in a buffer).
func report(_ line: String, to fd: Int32 = 1) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}

func open(_ path: String) -> YapDatabase {
    let options = YapDatabaseOptions()
    options.durability = .full
    options.checkpointThreshold = 256 << 10
    do {
        return try YapDatabase.open(url: URL(fileURLWithPath: path), options: options)
    } catch {
        report("open failed: \(error)", to: 2)
        exit(3)
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    report("usage: YapDBCrashChild run PATH SEED | hold PATH | srvbadinit PATH | srvsetgrouping PATH", to: 2)
    exit(2)
}

switch arguments[1] {
case "run" where arguments.count == 4:
    guard let seed = UInt64(arguments[3]) else { exit(2) }
    let database = open(arguments[2])
    let connection = database.newConnection()
    let started = Date()
    var number = database.snapshot + 1
    while Date().timeIntervalSince(started) < 120 {
        let operations = CrashChildScript.transaction(seed: seed, number: number)
        do {
            try connection.write { tx in
                for operation in operations {
                    switch operation {
                    case .set(let collection, let key, let value): tx.setObject(Data(value), forKey: key, inCollection: collection)
                    case .remove(let collection, let key): tx.removeObject(forKey: key, inCollection: collection)
                    case .removeCollection(let collection): tx.removeAllObjects(inCollection: collection)
                    }
                }
            }
            report("\(number)")
            if number % 40 == 0 { try database.compact() }
        } catch {
            report("commit \(number) failed: \(error)", to: 2)
            exit(4)
        }
        number += 1
    }
case "hold":
    let database = open(arguments[2])
    report("ready")
    while getchar() != EOF {}
    withExtendedLifetime(database) {}
case "srvbadinit":
    // YapDatabase's test_badInit: the plain view initializer on a search results view.
    report("making")
    let view = YapDatabaseSearchResultsView(grouping: .withKeyBlock { _, _, _ in "" },
                                            sorting: .withKeyBlock { _, _, _, _, _, _ in .orderedSame }, versionTag: "1", options: nil)
    report("made \(view)")   // not reached
case "srvsetgrouping":
    // A new grouping on a search results view of a parent view (YapDatabase throws).
    let database = open(arguments[2])
    let handler = YapDatabaseFullTextSearchHandler.withObjectBlock { _, dict, _, _, object in dict["content"] = object }
    _ = database.register(YapDatabaseFullTextSearch(columnNames: ["content"], handler: handler), withName: "fts")
    let grouping = YapDatabaseViewGrouping.withKeyBlock { _, _, _ in "" }
    let sorting = YapDatabaseViewSorting.withKeyBlock { _, _, _, _, _, _ in .orderedSame }
    _ = database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: "1"), withName: "order")
    _ = database.register(YapDatabaseSearchResultsView(fullTextSearchName: "fts", parentViewName: "order", versionTag: "1", options: nil),
                          withName: "results")
    report("registered")
    database.newConnection().readWrite { tx in
        (tx.ext("results") as? YapDatabaseAutoViewTransaction)?.setGrouping(grouping, sorting: sorting, versionTag: "2")
    }
    report("regrouped")   // not reached
default:
    exit(2)
}
