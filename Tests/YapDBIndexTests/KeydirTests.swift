// Model-based tests of Keydir against a plain nested Dictionary.
import Testing
import TestSupport
@testable import YapDBIndex

/// The model: collection → key → entry, with no empty collections.
private struct KeydirModel {
    var rows: [String: [String: KeydirEntry]] = [:]
    var count: Int { rows.values.reduce(0) { $0 + $1.count } }

    func rowid(_ rowid: UInt64) -> (String, String)? {
        for (c, keys) in rows { for (k, e) in keys where e.rowid == rowid { return (c, k) } }
        return nil
    }
}

private func expectEqual(_ keydir: Keydir, _ model: KeydirModel, _ context: String) {
    guard isValid(keydir.validate, context) else { return }
    #expect(keydir.count == model.count, "\(context)")
    #expect(keydir.collectionCount == model.rows.count, "\(context)")
    #expect(Set(keydir.collections) == Set(model.rows.keys), "\(context)")
    for (collection, keys) in model.rows {
        #expect(keydir.count(inCollection: collection) == keys.count, "\(context)")
        var seen: [String: KeydirEntry] = [:]
        keydir.forEachKey(inCollection: collection) { key, entry in seen[key] = entry; return true }
        #expect(seen == keys, "\(context) collection \(collection)")
        for (key, entry) in keys {
            let back = keydir.key(forRowid: entry.rowid)
            #expect(back?.collection == collection && back?.key == key, "\(context)")
        }
    }
    var collections = 0
    keydir.forEachCollection { name, count in
        collections += 1
        #expect(model.rows[name]?.count == count, "\(context)")
        return true
    }
    #expect(collections == model.rows.count, "\(context)")
}

private func location(_ rng: inout SeededRandom) -> ValueLocation {
    ValueLocation(segment: UInt32(truncatingIfNeeded: rng.next() % 8), offset: UInt32(truncatingIfNeeded: rng.next()),
                  length: UInt32(truncatingIfNeeded: rng.next() % 4096))
}

@Test(arguments: [5, 6] as [UInt64])
func keydirMatchesModel(seed: UInt64) {
    var rng = SeededRandom(seed: seed)
    var keydir = Keydir()
    var model = KeydirModel()
    var nextRowid: UInt64 = 1
    var snapshots: [(Keydir, KeydirModel)] = []
    for step in 0..<3000 {
        let context = "seed \(seed) step \(step)"
        let collection = "c\(rng.next() % 6)"
        let key = "k\(rng.next() % 60)"
        switch rng.next() % 20 {
        case 0..<9:
            // New rows get a fresh rowid; updates usually keep it, sometimes move to a new one.
            let existing = model.rows[collection]?[key]
            var rowid = existing?.rowid ?? nextRowid
            if existing == nil || rng.next() % 5 == 0 { rowid = nextRowid; nextRowid += 1 }
            let entry = KeydirEntry(rowid: rowid, object: location(&rng),
                                    metadata: rng.next() % 2 == 0 ? nil : location(&rng))
            #expect(keydir.set(entry, collection: collection, key: key) == existing, "\(context)")
            model.rows[collection, default: [:]][key] = entry
        case 9..<16:
            let existing = model.rows[collection]?[key]
            #expect(keydir.remove(collection: collection, key: key) == existing, "\(context)")
            model.rows[collection]?[key] = nil
            if model.rows[collection]?.isEmpty == true { model.rows[collection] = nil }
        case 16:
            let removed = keydir.removeCollection(collection)
            #expect(removed?.count == model.rows[collection]?.count, "\(context)")
            if let removed {
                removed.forEach { key, entry in #expect(model.rows[collection]?[key] == entry); return true }
            }
            model.rows[collection] = nil
        case 17 where step % 500 == 17:
            keydir.removeAll()
            model.rows = [:]
        default:
            #expect(keydir.entry(collection: collection, key: key) == model.rows[collection]?[key], "\(context)")
            let rowid = UInt64(rng.next() % nextRowid)
            let expected = model.rowid(rowid)
            let got = keydir.key(forRowid: rowid)
            #expect(got?.collection == expected?.0 && got?.key == expected?.1, "\(context) rowid \(rowid)")
        }
        guard isValid(keydir.validate, context) else { return }
        #expect(keydir.count == model.count, "\(context)")
        if step % 150 == 0 { snapshots.append((keydir, model)) }
    }
    expectEqual(keydir, model, "seed \(seed) end")
    for (i, (snapshot, snapshotModel)) in snapshots.enumerated() {
        expectEqual(snapshot, snapshotModel, "seed \(seed) snapshot \(i)")
    }
}

@Test func keydirCollectionsAreFirstClass() {
    var keydir = Keydir()
    let loc = ValueLocation(segment: 1, offset: 0, length: 10)
    for i in 0..<100 { keydir.set(KeydirEntry(rowid: UInt64(i), object: loc), collection: i < 70 ? "a" : "b", key: "\(i)") }
    keydir.checkInvariants()
    #expect(keydir.count(inCollection: "a") == 70 && keydir.count(inCollection: "b") == 30)
    #expect(keydir.count(inCollection: "missing") == 0)
    let snapshot = keydir
    let removed = keydir.removeCollection("a")
    keydir.checkInvariants()
    #expect(removed?.count == 70 && keydir.count == 30 && keydir.collections == ["b"])
    #expect(keydir.key(forRowid: 5) == nil && keydir.key(forRowid: 80)?.key == "80")
    #expect(keydir.removeCollection("a") == nil)
    #expect(snapshot.count == 100 && snapshot.key(forRowid: 5)?.collection == "a")
    // Removing the last row removes the collection.
    for i in 70..<100 { keydir.remove(collection: "b", key: "\(i)"); keydir.checkInvariants() }
    #expect(keydir.collectionCount == 0 && keydir.collections.isEmpty && keydir.count == 0)
    #expect(keydir.remove(collection: "b", key: "70") == nil)
    snapshot.checkInvariants()
    #expect(MemoryLayout<KeydirEntry>.stride <= 40)
}

@Test func keydirRelocateAndBulkLoadAgreeWithTheModel() throws {
    var model = KeydirModel()
    var loader = Keydir.Loader()
    var rowid: UInt64 = 1
    for c in 0..<3 {
        try loader.beginCollection("c\(c)")
        for k in 0..<700 {
            let meta: ValueLocation? = k % 3 == 0 ? ValueLocation(segment: UInt32(k % 4), offset: UInt32(9000 + k), length: 20) : nil
            let entry = KeydirEntry(rowid: rowid, object: ValueLocation(segment: UInt32(k % 5), offset: UInt32(k), length: 30), metadata: meta)
            loader.add(key: "k\(k)", entry: entry)
            model.rows["c\(c)", default: [:]]["k\(k)"] = entry
            rowid += 1
        }
    }
    #expect(throws: Keydir.Loader.Conflict.duplicateKey(collection: "x", key: "a")) {
        var again = Keydir.Loader()
        try again.beginCollection("x")
        for i in 0..<50 { again.add(key: "k\(i)", entry: KeydirEntry(rowid: UInt64(10 + i), object: ValueLocation(segment: 1, offset: 1, length: 10))) }
        again.add(key: "a", entry: KeydirEntry(rowid: 1, object: ValueLocation(segment: 1, offset: 1, length: 10)))
        again.add(key: "a", entry: KeydirEntry(rowid: 2, object: ValueLocation(segment: 1, offset: 2, length: 10)))
        _ = try again.finish()
    }
    #expect(throws: Keydir.Loader.Conflict.self) {
        var again = Keydir.Loader()
        try again.beginCollection("x")
        again.add(key: "a", entry: KeydirEntry(rowid: 7, object: ValueLocation(segment: 1, offset: 1, length: 10)))
        try again.beginCollection("y")
        again.add(key: "b", entry: KeydirEntry(rowid: 7, object: ValueLocation(segment: 1, offset: 2, length: 10)))
        _ = try again.finish()
    }
    var keydir = try loader.finish()
    expectEqual(keydir, model, "loaded")
    let snapshot = keydir
    let snapshotModel = model
    // Move everything in segment 2 to segment 9, keeping offsets.
    let moved = keydir.relocate { $0.segment == 2 ? ValueLocation(segment: 9, offset: $0.offset, length: $0.length) : nil }
    var expectedMoves = 0
    for (c, keys) in model.rows {
        for (k, var entry) in keys {
            if entry.object.segment == 2 { entry.object.segment = 9; expectedMoves += 1 }
            if let m = entry.metadata, m.segment == 2 { entry.metadata!.segment = 9; expectedMoves += 1 }
            model.rows[c]![k] = entry
        }
    }
    #expect(moved == expectedMoves)
    expectEqual(keydir, model, "relocated")
    expectEqual(snapshot, snapshotModel, "the snapshot taken before is unchanged")
    #expect(keydir.relocate { _ in nil } == 0)
}
