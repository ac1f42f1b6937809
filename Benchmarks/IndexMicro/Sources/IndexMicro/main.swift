// Micro-benchmarks: LRU hit path, HAMT insert/lookup of 1M 16-byte String keys, B-tree ops.
// Prints nanoseconds per operation (best of 3 runs). Figures, not pass/fail.
import YapDBIndex
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Runs `body` 3 times; returns the best time per operation in ns.
func measure(_ name: String, operations: Int, _ body: () -> Int) {
    var best = Double.infinity
    var sink = 0
    for _ in 0..<3 {
        let start = now()
        sink &+= body()
        best = min(best, Double(now() - start) / Double(operations))
    }
    let formatted = (best * 10).rounded() / 10
    print("\(name): \(formatted) ns/op  (sink \(sink & 1))")
}

struct SplitMix: RandomNumberGenerator { var state: UInt64; mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15; var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9; z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31) } }

/// All benchmarks, with their state in locals: globals in main.swift get dynamic exclusivity
/// checks on every access, which would dominate the figures.
func runAll() {
    // 1M distinct 16-byte ASCII keys (16 bytes fit a small String's inline storage on 64-bit).
    let n = 1_000_000
    var rng = SplitMix(state: 1)
    let keys: [String] = (0..<n).map { i in
        let hex = String(rng.next() & 0xFFFF_FFFF, radix: 16)
        let id = String(i, radix: 16)
        let raw = hex + "-" + id + String(repeating: "x", count: 16)
        return String(raw.prefix(16))
    }
    precondition(Set(keys).count == n && keys.allSatisfy { $0.utf8.count == 16 })
    var lookupOrder = Array(0..<n)
    lookupOrder.shuffle(using: &rng)

    // MARK: HAMT
    var map = PersistentHashMap<String, Int>()
    measure("PersistentHashMap insert 1M String(16)", operations: n) {
        map = PersistentHashMap()
        for (i, key) in keys.enumerated() { map.updateValue(i, forKey: key) }
        return map.count
    }
    measure("PersistentHashMap lookup hit (random order)", operations: n) {
        var sum = 0
        for i in lookupOrder { sum &+= map[keys[i]]! }
        return sum
    }
    measure("Dictionary insert 1M String(16) (reference)", operations: n) {
        var dict: [String: Int] = [:]
        for (i, key) in keys.enumerated() { dict[key] = i }
        return dict.count
    }
    var dict: [String: Int] = [:]
    for (i, key) in keys.enumerated() { dict[key] = i }
    measure("Dictionary lookup hit (reference)", operations: n) {
        var sum = 0
        for i in lookupOrder { sum &+= dict[keys[i]]! }
        return sum
    }
    measure("PersistentHashMap update after snapshot (path copy), 100k", operations: 100_000) {
        var copy = map
        var sum = 0
        for i in 0..<100_000 {
            let snapshot = copy   // a fresh snapshot before each write forces a path copy
            copy.updateValue(-i, forKey: keys[lookupOrder[i]])
            sum &+= snapshot.count
        }
        return sum
    }

    // MARK: LRU
    var cache = LRUCache<String, Int>(limit: 1000)
    for i in 0..<1000 { cache.setValue(i, forKey: keys[i]) }
    let hitKeys = (0..<1_000_000).map { keys[lookupOrder[$0] % 1000] }
    measure("LRUCache hit (value(forKey:), promotes), 1000 entries", operations: hitKeys.count) {
        var sum = 0
        for key in hitKeys { sum &+= cache.value(forKey: key)! }
        return sum
    }
    measure("LRUCache miss+insert with eviction", operations: 200_000) {
        for i in 0..<200_000 { cache.setValue(i, forKey: keys[1000 + i]) }
        return cache.count
    }

    // MARK: B-tree
    measure("OrderedRowTree append 1M (insertionIndex fast path + insert)", operations: n) {
        var tree = OrderedRowTree()
        for i in 0..<UInt64(n) {
            let index = tree.insertionIndex { existing in i < existing ? .orderedAscending : i == existing ? .orderedSame : .orderedDescending }
            tree.insert(i, at: index)
        }
        return tree.count
    }
    var tree = OrderedRowTree()
    for i in 0..<UInt64(n) { tree.append(i &* 2) }
    measure("OrderedRowTree random insert+remove at searched index, 1M items", operations: 200_000) {
        var r = SplitMix(state: 9)
        for _ in 0..<200_000 {
            let v = (r.next() % UInt64(2 * n)) | 1
            let index = tree.insertionIndex { existing in v < existing ? .orderedAscending : v == existing ? .orderedSame : .orderedDescending }
            tree.insert(v, at: index)
            tree.remove(at: index)
        }
        return tree.count
    }
    measure("OrderedRowTree subscript (random), 1M items", operations: n) {
        var sum: UInt64 = 0
        for i in lookupOrder { sum &+= tree[i] }
        return Int(truncatingIfNeeded: sum)
    }
}

runAll()
