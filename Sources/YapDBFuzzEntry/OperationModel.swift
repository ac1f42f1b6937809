import Foundation

/// The plain model target (c) checks the database against: collection → key → row.
struct OperationModel: Equatable {
    struct Row: Equatable {
        var object: Data
        var metadata: Data?
    }

    private(set) var rows: [String: [String: Row]] = [:]

    var count: Int { rows.values.reduce(0) { $0 + $1.count } }

    subscript(collection: String, key: String) -> Row? {
        get { rows[collection]?[key] }
        set {
            rows[collection, default: [:]][key] = newValue
            if rows[collection]?.isEmpty == true { rows[collection] = nil }
        }
    }

    mutating func removeCollection(_ collection: String) { rows[collection] = nil }
    mutating func removeAll() { rows = [:] }
}
