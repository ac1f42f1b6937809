#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import YapDBStorage
import YapDBIndex
import YapDBEngine

/// A plain-dictionary model of a database: collection → key → (object, metadata).
struct Model: Equatable, Sendable {
    struct Row: Equatable, Sendable {
        var object: [UInt8]
        var metadata: [UInt8]?

        /// By `memcmp`: the tests run debug builds, where `Array.==` costs a call per byte.
        static func == (a: Row, b: Row) -> Bool {
            same(a.object, b.object) && a.metadata.map { m in b.metadata.map { same(m, $0) } ?? false } ?? (b.metadata == nil)
        }

        static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
            a.count == b.count && a.withUnsafeBytes { x in b.withUnsafeBytes { y in x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
        }
    }
    var rows: [String: [String: Row]] = [:]

    var count: Int { rows.values.reduce(0) { $0 + $1.count } }

    subscript(collection: String, key: String) -> Row? {
        get { rows[collection]?[key] }
        set {
            rows[collection, default: [:]][key] = newValue
            if rows[collection]?.isEmpty == true { rows[collection] = nil }
        }
    }

    /// A short description of how two models differ, for failure messages.
    func difference(from other: Model) -> String {
        var lines: [String] = []
        for collection in Set(rows.keys).union(other.rows.keys).sorted() {
            let mine = rows[collection] ?? [:], theirs = other.rows[collection] ?? [:]
            for key in Set(mine.keys).union(theirs.keys).sorted() where mine[key] != theirs[key] {
                let describe: (Row?) -> String = { row in
                    row.map { "object \($0.object.count) B, metadata \($0.metadata.map { "\($0.count) B" } ?? "nil")" } ?? "missing"
                }
                lines.append("\(collection)/\(key): \(describe(mine[key])) vs \(describe(theirs[key]))")
                if lines.count == 5 { return lines.joined(separator: "; ") + "; …" }
            }
        }
        return lines.joined(separator: "; ")
    }
}

extension RowReader {
    /// Everything this snapshot holds, read through the engine's reader (every record checked).
    func materialize() throws -> Model {
        var model = Model()
        for collection in try collectionNames() {
            var failure: EngineError?
            try forEachKey(inCollection: collection) { key, entry in
                do throws(EngineError) {
                    model[collection, key] = Model.Row(object: try objectBytes(entry), metadata: try metadataBytes(entry))
                    return true
                } catch {
                    failure = error
                    return false
                }
            }
            if let failure { throw failure }
        }
        return model
    }
}

/// What the harness knows about the commits of one database: the state after each
/// acknowledged commit, the commit in flight (which a crash may or may not keep), and how many
/// commits are known durable.
struct History: Sendable {
    /// `states[k]` is the state after snapshot `k`; `states[0]` is empty.
    private(set) var states: [Model] = [Model()]
    /// The state the commit in flight would produce, until it is acknowledged or abandoned.
    var inFlight: Model?
    /// Snapshots every recovery must contain (all acknowledged ones in `.full`; up to the last
    /// sync point in `.normal`).
    private(set) var durable = 0

    var acknowledged: Int { states.count - 1 }
    var current: Model { states[states.count - 1] }

    mutating func acknowledge(_ state: Model, durable isDurable: Bool) {
        states.append(state)
        inFlight = nil
        if isDurable { durable = acknowledged }
    }

    /// Everything acknowledged so far has been synced (a checkpoint or close returned).
    mutating func markAllDurable() { durable = acknowledged }

    /// What recovery found at snapshot `k`, checked: the outcome says whether an acknowledged
    /// commit was lost and whether the state is not the state after exactly `k` commits.
    func check(recovered k: Int, state: Model) -> RecoveryCheck {
        var outcome = RecoveryCheck()
        if k < durable {
            outcome.lost = durable - k
            outcome.problems.append("recovered snapshot \(k), but \(durable) commit(s) were acknowledged as durable")
        }
        let expected: Model?
        if k <= acknowledged {
            expected = states[k]
        } else if k == acknowledged + 1, let inFlight {
            expected = inFlight
        } else {
            expected = nil
        }
        if let expected {
            if expected != state {
                outcome.partial = true
                outcome.problems.append("the state at snapshot \(k) is not the state after \(k) commits: \(state.difference(from: expected))")
            }
        } else {
            outcome.partial = true
            outcome.problems.append("recovered snapshot \(k), but only \(acknowledged) commit(s) were acknowledged (+\(inFlight == nil ? 0 : 1) in flight)")
        }
        return outcome
    }

    /// Recovery settled on snapshot `k` (already checked): what it holds is now durable, and
    /// later commits build on it.
    mutating func recovered(at k: Int) {
        if k == acknowledged + 1, let inFlight { states.append(inFlight) }
        if k < acknowledged { states.removeSubrange((k + 1)...) }
        inFlight = nil
        durable = k
    }
}

/// The result of checking one recovery against the `History`.
struct RecoveryCheck {
    var lost = 0
    var partial = false
    var problems: [String] = []
}

/// The engine's error in `error`: an `EngineError` thrown by an engine entry, or the one inside
/// `Engine.write`'s `WriteFailure` (the engine's own, or one a write in the body threw and the
/// body passed on). Nil for any other error.
func engineError(_ error: any Error) -> EngineError? {
    if let engine = error as? EngineError { return engine }
    guard let failure = error as? WriteFailure<any Error> else { return nil }
    switch failure {
    case .engine(let engine): return engine
    case .body(let body): return engineError(body)
    }
}
