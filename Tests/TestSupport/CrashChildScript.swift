// The transactions the crash child (Tests/YapDBCrashChild) runs, shared with the tests that
// kill it and check what survived.

/// Transaction `number` (1-based) of the seeded script the crash child commits. Deterministic:
/// the parent replays transactions 1…k to know the state after k commits. Every transaction
/// sets at least one row, so each one that commits bumps the snapshot by exactly one.
public enum CrashChildScript {
    public enum Operation: Sendable, Equatable {
        case set(collection: String, key: String, value: [UInt8])
        case remove(collection: String, key: String)
        case removeCollection(String)
    }

    public static func transaction(seed: UInt64, number: UInt64) -> [Operation] {
        var rng = SeededRandom(seed: seed &* 0x5851_F42D_4C95_7F2D &+ number)
        var operations: [Operation] = []
        let collections = ["a", "b", "c"]
        if number % 97 == 0 { operations.append(.removeCollection(collections[Int(number % 3)])) }
        for index in 0..<(1 + Int(rng.next() % 4)) {
            let collection = collections[Int(rng.next() % 3)]
            let key = "k\(rng.next() % 40)"
            if index > 0 && rng.next() % 4 == 0 {
                operations.append(.remove(collection: collection, key: key))
                continue
            }
            // Mostly small values; sometimes large ones, so kills land inside long writes.
            let size = rng.next() % 20 == 0 ? 64 << 10 + Int(rng.next() % (256 << 10)) : 1 + Int(rng.next() % 2000)
            var value = rng.next() % 2 == 0 ? rng.bytes(size) : [UInt8](repeating: UInt8(truncatingIfNeeded: number), count: size)
            // The first bytes name the transaction, so a value from the wrong commit is obvious.
            withUnsafeBytes(of: number.littleEndian) { raw in
                for (offset, byte) in raw.enumerated() where offset < value.count { value[offset] = byte }
            }
            operations.append(.set(collection: collection, key: key, value: value))
        }
        return operations
    }

    /// The rows after transactions 1…`count`: collection → key → value.
    public static func state(seed: UInt64, after count: UInt64) -> [String: [String: [UInt8]]] {
        var rows: [String: [String: [UInt8]]] = [:]
        var number: UInt64 = 1
        while number <= count {
            for operation in transaction(seed: seed, number: number) {
                switch operation {
                case .set(let collection, let key, let value): rows[collection, default: [:]][key] = value
                case .remove(let collection, let key): rows[collection]?[key] = nil
                case .removeCollection(let collection): rows[collection] = nil
                }
            }
            number += 1
        }
        return rows.filter { !$0.value.isEmpty }
    }
}
