// Model-based tests of LRUCache against an Array kept in most-recently-used order.
import Testing
import TestSupport
@testable import YapDBIndex

/// The model: entries from most to least recently used, and the limit (0 = unlimited).
private struct LRUModel {
    var entries: [(key: Int, value: Int)] = []
    var limit: Int

    mutating func get(_ key: Int) -> Int? {
        guard let i = entries.firstIndex(where: { $0.key == key }) else { return nil }
        let entry = entries.remove(at: i)
        entries.insert(entry, at: 0)
        return entry.value
    }

    func peek(_ key: Int) -> Int? { entries.first { $0.key == key }?.value }

    mutating func set(_ value: Int, _ key: Int) -> Int? {
        let old = entries.firstIndex { $0.key == key }.map { entries.remove(at: $0).value }
        entries.insert((key, value), at: 0)
        trim()
        return old
    }

    mutating func remove(_ key: Int) -> Int? {
        entries.firstIndex { $0.key == key }.map { entries.remove(at: $0).value }
    }

    mutating func trim() { if limit > 0 && entries.count > limit { entries.removeLast(entries.count - limit) } }
}

private func contents(_ cache: LRUCache<Int, Int>) -> [Int] {
    var out: [Int] = []
    cache.forEach { key, value in out.append(key); out.append(value); return true }
    return out
}

@Test(arguments: [51, 52, 53] as [UInt64])
func lruMatchesModel(seed: UInt64) {
    var rng = SeededRandom(seed: seed)
    var cache = LRUCache<Int, Int>(limit: 20)
    var model = LRUModel(limit: 20)
    for step in 0..<5000 {
        let context = "seed \(seed) step \(step)"
        let key = Int(rng.next() % 40)
        switch rng.next() % 100 {
        case 0..<35:
            #expect(cache.value(forKey: key) == model.get(key), "\(context) get")
        case 35..<45:
            #expect(cache.peek(key) == model.peek(key), "\(context) peek")
        case 45..<80:
            let value = Int(rng.next() % 1000)
            #expect(cache.setValue(value, forKey: key) == model.set(value, key), "\(context) set")
        case 80..<90:
            #expect(cache.removeValue(forKey: key) == model.remove(key), "\(context) remove")
        case 90..<95:
            // Subscript forms.
            if rng.next() % 2 == 0 {
                #expect(cache[key] == model.get(key), "\(context) subscript get")
            } else {
                cache[key] = nil
                _ = model.remove(key)
            }
        case 95..<99:
            let limit = [0, 1, 2, 5, 20, 35][Int(rng.next() % 6)]
            cache.limit = limit
            model.limit = limit
            model.trim()
        default:
            if step % 7 == 0 { cache.removeAll(); model.entries = [] }
        }
        guard isValid(cache.validate, context) else { return }
        #expect(contents(cache) == model.entries.flatMap { [$0.key, $0.value] }, "\(context) order")
    }
}

@Test func lruEvictionOrder() {
    var cache = LRUCache<String, Int>(limit: 3)
    cache.setValue(1, forKey: "a")
    cache.setValue(2, forKey: "b")
    cache.setValue(3, forKey: "c")
    #expect(cache.value(forKey: "a") == 1)        // a is now most recent; b is least
    #expect(cache.peek("b") == 2)                 // peek does not promote b
    cache.setValue(4, forKey: "d")                // evicts b
    #expect(!cache.contains("b") && cache.count == 3)
    cache.checkInvariants()
    cache.setValue(5, forKey: "e")                // evicts c
    #expect(!cache.contains("c") && cache.contains("a"))
    cache.limit = 1                               // keeps only e
    cache.checkInvariants()
    #expect(cache.count == 1 && cache.peek("e") == 5)
    cache.setValue(6, forKey: "f")                // limit 1: replaces e
    #expect(cache.count == 1 && cache.peek("f") == 6 && cache.peek("e") == nil)
    cache.setValue(7, forKey: "f")                // update in place, no eviction
    #expect(cache.count == 1 && cache.peek("f") == 7)
    cache.limit = 0                               // unlimited
    for i in 0..<1000 { cache.setValue(i, forKey: "k\(i)") }
    cache.checkInvariants()
    #expect(cache.count == 1001)
    cache.limit = 10                              // lowering evicts immediately, oldest first
    cache.checkInvariants()
    var keys: [String] = []
    cache.forEach { key, _ in keys.append(key); return true }
    #expect(keys == (990..<1000).reversed().map { "k\($0)" })
    cache.removeAll()
    cache.checkInvariants()
    #expect(cache.isEmpty && cache.limit == 10)
    cache["x"] = 1
    #expect(cache["x"] == 1 && cache.count == 1)
}

@Test func lruReusesFreedSlots() {
    var cache = LRUCache<Int, Int>(limit: 100)
    for i in 0..<100 { cache.setValue(i, forKey: i) }
    let slotCount = cache.slots.count
    for i in 100..<10_000 { cache.setValue(i, forKey: i) }         // evictions reuse slots
    for i in 9_950..<10_000 { cache.removeValue(forKey: i) }       // frees 50 slots
    for i in 0..<50 { cache.setValue(i, forKey: -i - 1) }          // reuses them
    cache.checkInvariants()
    #expect(cache.slots.count == slotCount && cache.count == 100)
}
