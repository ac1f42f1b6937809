import YapDBStorage
import YapDBSimulatedDisk
import YapDBIndex
@testable import YapDBEngine
import TestSupport

/// A plain-dictionary model of the database: collection → key → (object, metadata).
struct Model: Equatable {
    struct Row: Equatable {
        var object: [UInt8]
        var metadata: [UInt8]?
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
}

extension RowReader {
    /// Everything this snapshot holds, read through the engine (every record verified).
    func materialize() throws -> Model {
        var model = Model()
        for collection in try collectionNames() {
            var failure: (any Error)?
            try forEachKey(inCollection: collection) { key, entry in
                do {
                    model[collection, key] = Model.Row(object: try objectBytes(entry), metadata: try metadataBytes(entry))
                } catch {
                    failure = error
                    return false
                }
                return true
            }
            if let failure { throw failure }
        }
        return model
    }
}

/// Engine helpers for tests.
enum EngineTesting {
    /// Options for a test on `disk`; the index read mode is the environment's
    /// (`YAPDB_TEST_INDEX_READ_MODE`, `make test`'s cached-mode step) unless a test sets one.
    static func options(_ disk: any FileSystem, segmentLimit: Int = 4096, sync: SyncMode = .full) -> EngineOptions {
        var options = EngineOptions()
        options.indexReadMode = environmentReadMode
        options.fileSystem = disk
        options.segmentLimit = segmentLimit
        options.syncMode = sync
        options.checkpointThreshold = 0
        return options
    }

    /// The read mode `YAPDB_TEST_INDEX_READ_MODE` asks for (mapped when unset).
    static var environmentReadMode: IndexReadMode {
        TestEnvironment.cachedIndexPages.map { .cached(pages: $0) } ?? .mapped
    }

    static func simulated(seed: UInt64 = 1) throws -> SimulatedDisk {
        let disk = SimulatedDisk(seed: seed)
        try disk.mkdir("/db")
        return disk
    }

    /// The engine's error in `error`: an `EngineError` thrown by an engine entry, or the one
    /// inside `Engine.write`'s `WriteFailure` (the engine's own, or one a write in the body
    /// threw and the body passed on). Nil for any other error.
    static func engineError(_ error: any Error) -> EngineError? {
        if let engine = error as? EngineError { return engine }
        guard let failure = error as? WriteFailure<any Error> else { return nil }
        switch failure {
        case .engine(let engine): return engine
        case .body(let body): return engineError(body)
        }
    }

    /// Whether `error` is `Engine.write`'s failure of a body that threw a `Thrown`.
    static func bodyThrew<Thrown: Error>(_ error: any Error, _: Thrown.Type) -> Bool {
        guard case .body(let body)? = error as? WriteFailure<any Error> else { return false }
        return body is Thrown
    }

    /// Sets a row with object and optional metadata.
    static func set(_ tx: WriteTransaction, _ collection: String, _ key: String, _ object: [UInt8], metadata: [UInt8]? = nil) throws {
        try object.withUnsafeBytes { o in
            if let metadata {
                try metadata.withUnsafeBytes { m in try tx.setObject(o, metadata: .set(m), collection: collection, key: key) }
            } else {
                try tx.setObject(o, metadata: .clear, collection: collection, key: key)
            }
        }
    }
}
