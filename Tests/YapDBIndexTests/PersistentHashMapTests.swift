// Model-based tests of PersistentHashMap against a plain Dictionary.
import Testing
import TestSupport
@testable import YapDBIndex

/// A key whose hash is forced: every key with the same `bucket` collides on the full hash.
private struct CollidingKey: Hashable, Sendable, CustomStringConvertible {
    var id: Int
    var bucket: Int
    func hash(into hasher: inout Hasher) { hasher.combine(bucket) }
    static func == (a: Self, b: Self) -> Bool { a.id == b.id && a.bucket == b.bucket }
    var description: String { "K(\(id)/\(bucket))" }
}

/// Checks the map's structure and that it holds exactly `model`.
private func expectEqual<K: Hashable & Sendable, V: Sendable & Equatable>(
    _ map: PersistentHashMap<K, V>, _ model: [K: V], _ context: @autoclosure () -> String
) {
    guard isValid(map.validate, context()) else { return }
    #expect(map.count == model.count, "\(context())")
    var seen = 0
    map.forEach { key, value in
        seen += 1
        if model[key] != value { Issue.record("\(context()): \(key) → \(value), model \(String(describing: model[key]))") }
        return true
    }
    #expect(seen == model.count, "\(context())")
    for (key, value) in model where map[key] != value {
        Issue.record("\(context()): lookup \(key) = \(String(describing: map[key])), model \(value)")
    }
}

/// Runs `steps` random operations on `map` and `model` in lockstep, checking after each one.
private func runRandomOps<K: Hashable & Sendable>(
    seed: UInt64, steps: Int, makeKey: (inout SeededRandom) -> K
) {
    var rng = SeededRandom(seed: seed)
    var map = PersistentHashMap<K, Int>()
    var model: [K: Int] = [:]
    var snapshots: [(PersistentHashMap<K, Int>, [K: Int])] = []
    for step in 0..<steps {
        let key = makeKey(&rng)
        let context = "seed \(seed) step \(step)"
        switch rng.next() % 10 {
        case 0..<5:
            let value = Int(truncatingIfNeeded: rng.next())
            #expect(map.updateValue(value, forKey: key) == model.updateValue(value, forKey: key), "\(context)")
        case 5..<8:
            #expect(map.removeValue(forKey: key) == model.removeValue(forKey: key), "\(context)")
        case 8:
            let delta = Int(rng.next() % 3)
            let expected = model[key]
            let got: Int? = map.modifyValue(forKey: key) { value in
                let old = value
                value = delta == 0 ? nil : (value ?? 0) + delta
                return old
            }
            #expect(got == expected, "\(context)")
            model[key] = delta == 0 ? nil : (expected ?? 0) + delta
        default:
            #expect(map[key] == model[key], "\(context)")
            #expect(map.contains(key) == (model[key] != nil), "\(context)")
        }
        guard isValid(map.validate, context) else { return }
        #expect(map.count == model.count, "\(context)")
        if step % 97 == 0 { snapshots.append((map, model)) }
        if step % 499 == 0 { expectEqual(map, model, context) }
    }
    expectEqual(map, model, "seed \(seed) end")
    for (i, (snapshot, snapshotModel)) in snapshots.enumerated() {
        expectEqual(snapshot, snapshotModel, "seed \(seed) snapshot \(i)")
    }
}

@Test(arguments: [1, 2, 3] as [UInt64])
func hashMapMatchesDictionaryModel(seed: UInt64) {
    runRandomOps(seed: seed, steps: 4000) { rng in Int(rng.next() % 600) }
}

@Test func hashMapStringKeys() {
    runRandomOps(seed: 7, steps: 3000) { rng in "key-\(rng.next() % 400)" }
}

@Test func hashMapFullHashCollisions() {
    // 3 buckets, so most keys collide on the full hash and meet in collision nodes.
    runRandomOps(seed: 11, steps: 3000) { rng in CollidingKey(id: Int(rng.next() % 40), bucket: Int(rng.next() % 3)) }
    // Everything in one collision node, then emptied.
    var map = PersistentHashMap<CollidingKey, Int>()
    for id in 0..<50 { map.updateValue(id, forKey: CollidingKey(id: id, bucket: 0)); map.checkInvariants() }
    #expect(map.count == 50)
    #expect(map[CollidingKey(id: 17, bucket: 0)] == 17)
    #expect(map[CollidingKey(id: 17, bucket: 1)] == nil)
    for id in 0..<50 { #expect(map.removeValue(forKey: CollidingKey(id: id, bucket: 0)) == id); map.checkInvariants() }
    #expect(map.isEmpty)
}

@Test func hashMapSnapshotsAreIsolated() {
    var rng = SeededRandom(seed: 99)
    var map = PersistentHashMap<Int, Int>()
    for i in 0..<5000 { map.updateValue(i, forKey: i) }
    let snapshot = map
    var model = Dictionary(uniqueKeysWithValues: (0..<5000).map { ($0, $0) })
    let snapshotModel = model
    for step in 0..<5000 {
        let key = Int(rng.next() % 7000)
        if rng.next() % 2 == 0 {
            map.updateValue(-step, forKey: key); model[key] = -step
        } else {
            map.removeValue(forKey: key); model[key] = nil
        }
        map.modifyValue(forKey: key + 1) { value in if value != nil { value! += 1 } }
        if let v = model[key + 1] { model[key + 1] = v + 1 }
    }
    expectEqual(map, model, "seed 99 mutated")
    expectEqual(snapshot, snapshotModel, "seed 99 snapshot")
    // Mutating the snapshot copy must not leak into the map either.
    var copy = snapshot
    copy.removeAll()
    #expect(copy.isEmpty)
    expectEqual(snapshot, snapshotModel, "seed 99 snapshot after clearing its copy")
    expectEqual(map, model, "seed 99 map after clearing the snapshot's copy")
}

@Test func hashMapNestedModifyKeepsInnerUnique() {
    var outer = PersistentHashMap<String, PersistentHashMap<Int, Int>>()
    for i in 0..<1000 {
        outer.modifyValue(forKey: "c\(i % 3)") { inner in
            if inner == nil { inner = PersistentHashMap() }
            inner!.updateValue(i, forKey: i)
        }
    }
    outer.checkInvariants()
    #expect(outer.count == 3)
    #expect(outer["c1"]?.count == 333)
    let snapshot = outer
    outer.modifyValue(forKey: "c1") { inner in inner!.removeAll() ; inner = nil }
    #expect(outer.count == 2 && snapshot.count == 3 && snapshot["c1"]?.count == 333)
}

@Test func hashMapSequenceAndConveniences() {
    var map = PersistentHashMap<String, Int>()
    for i in 0..<300 { map.updateValue(i, forKey: "k\(i)") }
    #expect(Set(map.keys) == Set((0..<300).map { "k\($0)" }))
    #expect(map.values.sorted() == Array(0..<300))
    var iterated = 0
    for (key, value) in map { #expect(key == "k\(value)"); iterated += 1 }
    #expect(iterated == 300)
    var visited = 0
    map.forEach { _, _ in visited += 1; return visited < 10 }
    #expect(visited == 10)
}

@Test func hashMapMutatesUniqueNodesInPlace() {
    var map = PersistentHashMap<Int, Int>()
    map.updateValue(0, forKey: 0)
    let root = ObjectIdentifier(map.root)
    for i in 1..<2000 { map.updateValue(i, forKey: i) }
    #expect(ObjectIdentifier(map.root) == root, "a uniquely owned root must be mutated in place")
    let snapshot = map
    map.updateValue(-1, forKey: 5)
    let copiedRoot = ObjectIdentifier(map.root)
    #expect(copiedRoot != root && ObjectIdentifier(snapshot.root) == root)
    // The path is copied once; later writes to the same value reuse the copy.
    map.updateValue(-2, forKey: 6)
    map.removeValue(forKey: 7)
    #expect(ObjectIdentifier(map.root) == copiedRoot)
    // Children not on a touched path are still shared with the snapshot.
    let shared = map.root.children.indices.filter { map.root.children[$0] === snapshot.root.children[$0] }
    #expect(shared.count >= map.root.children.count - 3)
    #expect(snapshot[5] == 5 && snapshot[7] == 7 && map[5] == -1 && map[7] == nil)
}

@Test func hashMapBuiltFromDistinctKeysEqualsOneBuiltByInserts() throws {
    for count in [0, 1, 2, 31, 33, 500, 5000] {
        let pairs = (0..<count).map { (key: "k\($0)", value: $0) }
        let built = try PersistentHashMap(distinct: pairs)
        var inserted = PersistentHashMap<String, Int>()
        for (key, value) in pairs { inserted.updateValue(value, forKey: key) }
        expectEqual(built, Dictionary(uniqueKeysWithValues: pairs.map { ($0.key, $0.value) }), "count \(count)")
        #expect(built.keys == inserted.keys, "canonical shape: same iteration order (count \(count))")
        var mutated = built
        mutated.updateValue(-1, forKey: "new")
        mutated.removeValue(forKey: "k0")
        #expect(mutated.count == (count == 0 ? 1 : count), "count \(count)")
        #expect(built.count == count && built["k0"] == (count > 0 ? 0 : nil), "the built map is unchanged by a copy's writes")
    }
    // Full-hash collisions land in collision nodes; a repeated key is reported.
    let colliding = (0..<40).map { (key: CollidingKey(id: $0, bucket: $0 % 3), value: $0) }
    expectEqual(try PersistentHashMap(distinct: colliding), Dictionary(uniqueKeysWithValues: colliding.map { ($0.key, $0.value) }), "colliding")
    #expect(throws: PersistentHashMap<CollidingKey, Int>.DuplicateKey.self) {
        _ = try PersistentHashMap(distinct: colliding + [(key: CollidingKey(id: 5, bucket: 2), value: 99)])
    }
    #expect(throws: PersistentHashMap<Int, Int>.DuplicateKey.self) { _ = try PersistentHashMap(distinct: [(key: 1, value: 1), (key: 1, value: 2)]) }
}
