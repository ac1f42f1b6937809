import Foundation
import YapDBStorage
import YapDBSimulatedDisk

/// The input format of target (c): a configuration, then steps. Every byte string decodes
/// (missing bytes read as zeros); fixed-size fields keep a mutation from shifting the rest.
///
/// ```
/// config: 2 bytes — durability (b0 % 3: off, normal, full), no compression (b0 bit 2),
///         segment limit (b0 bits 3-4: default, 4 KiB, 16 KiB, 1 MiB), checkpoint threshold
///         (b0 bits 5-6: default, never, 2 KiB, 8 KiB), max value size 2,000 (b0 bit 7),
///         compaction threshold (b1 % 4: 0.5, 0.0, 0.2, 0.9)
/// step:   opcode (% 16) then its fixed fields:
///   0–6   transaction: connection, action count (1 + b % 8), the actions, ending (b % 8:
///         0 rollback(), 1 the block throws, else commit)
///   7, 15 compare one connection (b % 3) with the model
///   8     compare all three connections with the model
///   9     close and reopen
///   10    power cut: mode (b % 4), seed, crash during recovery (b % 4 == 0: after 1 + (b >> 2) % 16 calls)
///   11    crash point: after 1 + b % 32 mutating calls, then a power cut with mode (b % 4) and seed
///   12    checkpoint     13 compact     14 flush one connection's caches (b % 3)
/// action: 6 bytes — kind (% 16), collection, key, value size, value fill, metadata
///   0–4 set object (and metadata unless metadata % 3 == 0) · 5–6 replace object · 7–8 replace
///   metadata (nil when metadata % 3 == 0) · 9–10 remove · 11 remove all in collection ·
///   12 remove all in all collections · 13 touch · 14–15 read the row back inside the transaction
/// ```
enum OperationScript {
    static let collections = ["", "a", "people"]
    static let keyCount = 8
    static let maxSteps = 200

    struct Config: Equatable {
        var durability = 2
        var compression = true
        var segmentLimit = 0
        var checkpointThreshold = 0
        var smallMaxValue = false
        var compactionThreshold = 0

        init() {}

        init(_ input: inout FuzzInput) {
            let b0 = Int(input.byte()), b1 = Int(input.byte())
            durability = b0 % 3
            compression = b0 & 4 == 0
            segmentLimit = (b0 >> 3) & 3
            checkpointThreshold = (b0 >> 5) & 3
            smallMaxValue = b0 & 128 != 0
            compactionThreshold = b1 % 4
        }

        func encode(_ out: inout FuzzOutput) {
            out.byte(durability | (compression ? 0 : 4) | segmentLimit << 3 | checkpointThreshold << 5 | (smallMaxValue ? 128 : 0))
            out.byte(compactionThreshold)
        }

        var segmentBytes: Int? { [nil, 4096, 16384, 1 << 20][segmentLimit] }
        var checkpointBytes: Int { [64 << 20, 0, 2048, 8192][checkpointThreshold] }
        var maxValueSize: Int { smallMaxValue ? 2000 : 1 << 30 }
        var compaction: Double { [0.5, 0.0, 0.2, 0.9][compactionThreshold] }
    }

    /// A value: its size class and fill decide its bytes (see `data`).
    struct Value: Equatable {
        var size: UInt8
        var fill: UInt8

        /// Class size % 4: 0 → 0–3 bytes; 1 → 8–71 bytes; 2 → 128–1,136 compressible bytes;
        /// 3 → 1,500–3,000 incompressible bytes.
        var data: Data {
            let step = Int(size >> 2)
            switch size % 4 {
            case 0: return Data((0..<(step % 4)).map { UInt8(truncatingIfNeeded: Int(fill) &+ $0) })
            case 1: return Data((0..<(8 + step)).map { UInt8(truncatingIfNeeded: Int(fill) &+ $0) })
            case 2: return Data((0..<(128 + 16 * step)).map { UInt8(truncatingIfNeeded: Int(fill) &+ $0 % 7) })
            default:
                var random = ValueRandom(seed: UInt64(fill) &+ 1)
                return Data((0..<(1500 + 24 * step)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            }
        }
    }

    enum Action {
        case set(collection: Int, key: Int, value: Value, metadata: Value?)
        case replaceObject(collection: Int, key: Int, value: Value)
        case replaceMetadata(collection: Int, key: Int, metadata: Value?)
        case remove(collection: Int, key: Int)
        case removeCollection(Int)
        case removeAll
        case touch(collection: Int, key: Int)
        case readBack(collection: Int, key: Int)

        init(_ input: inout FuzzInput) {
            let kind = input.below(16), c = input.below(collections.count), k = input.below(keyCount)
            let value = Value(size: input.byte(), fill: input.byte())
            let m = input.byte()
            let metadata = m % 3 == 0 ? nil : Value(size: value.size ^ m, fill: value.fill &+ m)
            switch kind {
            case 0...4: self = .set(collection: c, key: k, value: value, metadata: metadata)
            case 5, 6: self = .replaceObject(collection: c, key: k, value: value)
            case 7, 8: self = .replaceMetadata(collection: c, key: k, metadata: metadata)
            case 9, 10: self = .remove(collection: c, key: k)
            case 11: self = .removeCollection(c)
            case 12: self = .removeAll
            case 13: self = .touch(collection: c, key: k)
            default: self = .readBack(collection: c, key: k)
            }
        }
    }

    enum Ending: Equatable { case commit, rollback, throwError }

    enum Step {
        case transaction(connection: Int, actions: [Action], ending: Ending)
        case check(connection: Int)
        case checkAll
        case reopen
        case powerCut(mode: PowerCutMode, seed: UInt8, crashInRecovery: Int)
        case crashPoint(after: Int, mode: PowerCutMode, seed: UInt8)
        case checkpoint
        case compact
        case flush(connection: Int)

        static let modes: [PowerCutMode] = [.drop, .torn, .garble, .keepAll]

        init(_ input: inout FuzzInput) {
            switch input.below(16) {
            case 0...6:
                let connection = input.below(3)
                let count = 1 + input.below(8)
                let actions = (0..<count).map { _ in Action(&input) }
                let e = input.below(8)
                self = .transaction(connection: connection, actions: actions, ending: e == 0 ? .rollback : e == 1 ? .throwError : .commit)
            case 8: self = .checkAll
            case 9: self = .reopen
            case 10:
                let mode = Self.modes[input.below(4)], seed = input.byte(), r = Int(input.byte())
                self = .powerCut(mode: mode, seed: seed, crashInRecovery: r % 4 == 0 ? 1 + (r >> 2) % 16 : 0)
            case 11:
                let after = 1 + input.below(32), mode = Self.modes[input.below(4)], seed = input.byte()
                self = .crashPoint(after: after, mode: mode, seed: seed)
            case 12: self = .checkpoint
            case 13: self = .compact
            case 14: self = .flush(connection: input.below(3))
            default: self = .check(connection: input.below(3))
            }
        }
    }
}

/// SplitMix64, for the bytes of incompressible values.
struct ValueRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
