import ArgumentParser
import Foundation
import YapDB

/// `yapdb demo`: a guided run of the library on a database in a temporary folder.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the guided demo on a database in a temporary folder.")

    @Option(help: "Folder to create the demo database in (default: a new temporary folder).")
    var directory: String?

    @Flag(help: "Keep the demo database afterwards.")
    var keep = false

    struct Person: Codable, Equatable {
        var name: String
        var born: Int
        var field: String
    }

    struct Seen: Codable, Equatable {
        var by: String
    }

    func run() throws {
        try reportingFailures { try guided() }
    }

    func guided() throws {
        let folder = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("yapdb-demo-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { if !keep { try? FileManager.default.removeItem(atPath: folder) } }
        let url = URL(fileURLWithPath: folder).appendingPathComponent("demo.yapdb")

        print("YapDB demo — database at \(url.path)")
        step(1, "Open the database (it is created) and register a Codable type for the \"people\" collection.")
        var database = try open(url)
        print("   snapshot \(database.snapshot): a new database is empty")

        step(2, "Two connections: `writer` for background work, `ui` for the interface. The ui starts a long-lived read transaction: every read it makes sees one stable snapshot until it moves forward.")
        var writer = database.newConnection()
        let ui = database.newConnection()
        ui.beginLongLivedReadTransaction()
        print("   ui is on snapshot \(ui.snapshot)")

        step(3, "The writer commits three transactions.")
        let people = [("ada", Person(name: "Ada Lovelace", born: 1815, field: "mathematics")),
                      ("grace", Person(name: "Grace Hopper", born: 1906, field: "compilers")),
                      ("alan", Person(name: "Alan Turing", born: 1912, field: "computability"))]
        try writer.write { tx in
            for (key, person) in people { tx.setObject(person, forKey: key, inCollection: "people") }
        }
        print("   snapshot \(database.snapshot): inserted \(people.map(\.0).joined(separator: ", "))")
        try writer.write { tx in
            tx.setObject(Person(name: "Edsger Dijkstra", born: 1930, field: "algorithms"), forKey: "edsger", inCollection: "people",
                         withMetadata: Seen(by: "writer"))
        }
        print("   snapshot \(database.snapshot): inserted edsger, with metadata")
        try writer.write { tx in
            if var ada = tx.object(forKey: "ada", inCollection: "people") as? Person {
                ada.field = "mathematics, the first program"
                tx.replaceObject(ada, forKey: "ada", inCollection: "people")
            }
        }
        print("   snapshot \(database.snapshot): replaced ada's object")
        let before = ui.read { $0.numberOfKeys(inCollection: "people") }
        print("   ui still reads snapshot \(ui.snapshot): \(before) people")

        step(4, "The ui moves forward. It gets the notification of every commit it skipped, in order, and asks them what changed.")
        let notifications = ui.beginLongLivedReadTransaction()
        for note in notifications {
            let snapshot = note.userInfo?["snapshot"] as? UInt64 ?? 0
            let inserted = (note.userInfo?["insertedKeys"] as? Set<YapCollectionKey> ?? []).map(\.key).sorted()
            let changed = (note.userInfo?["objectChanges"] as? Set<YapCollectionKey> ?? []).map(\.key).sorted()
            print("   notification for snapshot \(snapshot): inserted \(inserted), objects changed \(changed)")
        }
        print("   ui.hasChange(forKey: \"ada\") → \(ui.hasChange(forKey: "ada", inCollection: "people", in: notifications)); for \"nobody\" → \(ui.hasChange(forKey: "nobody", inCollection: "people", in: notifications))")
        let after = ui.read { $0.numberOfKeys(inCollection: "people") }
        print("   ui now reads snapshot \(ui.snapshot): \(after) people")

        step(5, "Caches: each connection keeps decoded objects. The first read decodes; the second is a cache hit.")
        let first = measure { ui.read { tx in _ = tx.object(forKey: "grace", inCollection: "people") } }
        let second = measure { ui.read { tx in _ = tx.object(forKey: "grace", inCollection: "people") } }
        print("   first read (decode): \(first) µs; second read (cache hit): \(second) µs, transaction included")
        try writer.write { tx in tx.setObject(Person(name: "Grace Brewster Hopper", born: 1906, field: "compilers"), forKey: "grace", inCollection: "people") }
        ui.beginLongLivedReadTransaction()
        let grace = ui.read { $0.object(forKey: "grace", inCollection: "people") as? Person }
        print("   after the writer changes grace, the ui's cache follows the changeset: \(grace?.name ?? "?")")

        step(6, "A transaction that rolls back leaves no trace: no snapshot, no notification.")
        let snapshotBefore = database.snapshot
        try writer.write { tx in
            tx.removeAllObjectsInAllCollections()
            tx.rollback()
        }
        print("   snapshot still \(database.snapshot) (was \(snapshotBefore)); people: \(writer.read { $0.numberOfKeys(inCollection: "people") })")

        step(7, "A view: people grouped by century, sorted by birth year, and a filtered view of it holding the computer scientists. The ui reads them through mappings, as a table view would.")
        try viewsAndMappings(database, writer: writer, ui: ui)

        step(8, "Full-text search: index the people's names and fields, then search as a user types — a search queue keeps only the newest keystroke's query, and a search results view over the century view shows the matches.")
        try searchAsYouType(database, writer: writer, ui: ui)

        step(9, "A connection pool hands out idle connections and makes new ones up to its limit.")
        let pool = YapDatabaseConnectionPool(database: database)
        pool.connectionLimit = 2
        let a = pool.connection(), b = pool.connection()
        print("   limit \(pool.connectionLimit): two connections \(a === b ? "(the same one, idle)" : "(two of them)"); each reads \(a.read { $0.numberOfKeys(inCollection: "people") }) people")

        step(10, "Close the database and open it again: everything is still there, and verify() checks every byte.")
        writer = database.newConnection()
        try database.close()
        database = try open(url)
        let reopened = database.newConnection()
        reopened.read { tx in
            var names: [String] = []
            tx.iterateKeysAndObjects(inCollection: "people") { (_: String, person: Person, _: inout Bool) in names.append(person.name) }
            print("   snapshot \(database.snapshot): \(names.sorted().joined(separator: ", "))")
            print("   edsger's metadata: \(tx.metadata(forKey: "edsger", inCollection: "people") as? Seen ?? Seen(by: "?"))")
        }
        let report = try database.verify()
        let stats = try database.stats()
        print("   verify(): \(report.isValid ? "valid" : "INVALID"), \(report.commitsChecked) commits, \(report.recordsChecked) records, \(report.bytesChecked) bytes checked")
        print("   stats: \(stats.rowCount) rows, \(stats.fileBytes) bytes in files, \(stats.liveBytes) live")
        try database.close()
        print(keep ? "\nKept the database in \(folder)." : "\nRemoved \(folder).")
        guard report.isValid else { throw ToolFailure("verify found problems", code: 4) }
    }

    /// Step 7: a view and a filtered view, mappings, and the row changes a background commit
    /// turns into.
    func viewsAndMappings(_ database: YapDatabase, writer: YapDatabaseConnection, ui: YapDatabaseConnection) throws {
        let grouping = YapDatabaseViewGrouping.withObjectBlock { (_, _, _, object) -> String? in
            guard let person = object as? Person else { return nil }
            return "\(person.born / 100)00s"
        }
        let sorting = YapDatabaseViewSorting.withObjectBlock { (_, _, _, _, object1, _, _, object2) -> ComparisonResult in
            let born1 = (object1 as? Person)?.born ?? 0, born2 = (object2 as? Person)?.born ?? 0
            return born1 < born2 ? .orderedAscending : (born1 == born2 ? .orderedSame : .orderedDescending)
        }
        guard database.register(YapDatabaseAutoView(grouping: grouping, sorting: sorting, versionTag: "1"), withName: "byCentury") else {
            throw ToolFailure("registering the view failed", code: 1)
        }
        let computing = YapDatabaseViewFiltering.withObjectBlock { (_, _, _, _, object) -> Bool in
            guard let field = (object as? Person)?.field else { return false }
            return ["compilers", "computability", "algorithms"].contains(field)
        }
        guard database.register(YapDatabaseFilteredView(parentViewName: "byCentury", filtering: computing, versionTag: "1"), withName: "computing") else {
            throw ToolFailure("registering the filtered view failed", code: 1)
        }
        ui.beginLongLivedReadTransaction()
        let mappings = YapDatabaseViewMappings(groups: ["1800s", "1900s"], view: "byCentury")
        ui.read { tx in
            mappings.update(with: tx)
            for section in 0..<mappings.numberOfSections() {
                let names = (0..<mappings.numberOfItems(inSection: section)).compactMap { row in
                    ((tx.ext("byCentury") as? YapDatabaseAutoViewTransaction)?.object(atRow: row, inSection: section, with: mappings) as? Person)?.name
                }
                print("   section \(section) (\(mappings.group(forSection: section) ?? "?")): \(names.joined(separator: ", "))")
            }
            let computingCount = (tx.ext("computing") as? YapDatabaseViewTransaction)?.numberOfItems(inGroup: "1900s") ?? 0
            print("   the filtered view holds \(computingCount) computer scientists of the 1900s")
        }
        try writer.write { tx in
            tx.setObject(Person(name: "Barbara Liskov", born: 1939, field: "algorithms"), forKey: "barbara", inCollection: "people")
            tx.setObject(Person(name: "John von Neumann", born: 1903, field: "computability"), forKey: "john", inCollection: "people")
        }
        let notifications = ui.beginLongLivedReadTransaction()
        guard let viewConnection = ui.ext("byCentury") as? YapDatabaseViewConnection else { return }
        let (sectionChanges, rowChanges) = viewConnection.getChanges(forNotifications: notifications, withMappings: mappings)
        print("   the writer inserts barbara (1939) and john (1903); the ui's table view gets \(sectionChanges.count) section change(s) and these row changes:")
        for change in rowChanges {
            print("     \(change.type == .insert ? "insert" : "\(change.type)") \(change.collectionKey.key) at section \(change.finalSection), row \(change.finalIndex)")
        }
    }

    func open(_ url: URL) throws -> YapDatabase {
        do {
            let database = try YapDatabase.open(url: url)
            database.registerCodableSerialization(Person.self, metadata: Seen.self, forCollection: "people")
            return database
        } catch {
            throw ToolFailure(error, path: url.path)
        }
    }

    func step(_ n: Int, _ text: String) {
        print("\n\(n). \(text)")
    }

    func measure(_ body: () -> Void) -> String {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return String(format: "%.1f", Double(DispatchTime.now().uptimeNanoseconds - start) / 1000)
    }
}
