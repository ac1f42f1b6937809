// Micro-benchmarks: LRU hit path and the order-statistic row tree's operations, in memory.
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

    // MARK: B-tree (a view group's order-statistic tree, its nodes in memory: nothing written)
    let format = PageFormat(pageSize: 4096)
    measure("PagedRowTree append 1M (insertionIndex fast path + insert)", operations: n) {
        var tree = PagedRowTree(format: format, source: NoPages())
        for i in 0..<UInt64(n) {
            let index = try! tree.insertionIndex { existing in i < existing ? .orderedAscending : i == existing ? .orderedSame : .orderedDescending }
            try! tree.insert(i, at: index)
        }
        return tree.count
    }
    var tree = PagedRowTree(format: format, source: NoPages())
    for i in 0..<UInt64(n) { try! tree.append(i &* 2) }
    measure("PagedRowTree random insert+remove at searched index, 1M items", operations: 200_000) {
        var r = SplitMix(state: 9)
        for _ in 0..<200_000 {
            let v = (r.next() % UInt64(2 * n)) | 1
            let index = try! tree.insertionIndex { existing in v < existing ? .orderedAscending : v == existing ? .orderedSame : .orderedDescending }
            try! tree.insert(v, at: index)
            _ = try! tree.remove(at: index)
        }
        return tree.count
    }
    measure("PagedRowTree element(at:) (random), 1M items", operations: n) {
        var sum: UInt64 = 0
        for i in lookupOrder { sum &+= try! tree.element(at: i) }
        return Int(truncatingIfNeeded: sum)
    }
}

/// A page source with no pages: the trees here are never written, so it is never read.
struct NoPages: PageSource {
    func withPage(_ id: PageID, _ body: (UnsafeRawBufferPointer) throws(PageError) -> Void) throws(PageError) {
        fatalError("IndexMicro writes no pages")
    }
}

runAll()
