import Foundation
import YapDBEngine

// The sources of the edges to one destination, read from the by-destination keys without an
// edge value per entry.
extension RelationshipState {
    /// Calls `body` with the source of each edge to `destination` (named `name`, when given), in
    /// key order, until it returns false. Each entry's key is checked as `forEachEdge(to:name:_:)`
    /// checks it, but the edge name (when not given) is skipped rather than decoded, and a source
    /// collection equal in bytes to the entry before's is not decoded again.
    func forEachSource(to destination: StoredEdge.Destination, name: String?,
                       _ body: (CollectionKeyPair, _ isManual: Bool) -> Bool) throws(EngineError) {
        var prefix: [UInt8] = []
        Self.appendDestination(destination, to: &prefix)
        if let name { Self.appendString(name, to: &prefix) }
        var failure: EngineError?
        var collection = SourceCollection()
        try byDestination.forEach(from: prefix, below: Self.prefixEnd(prefix)) { key, value in
            do throws(EngineError) {
                var p = Parser(raw: key, at: prefix.count)
                if name == nil { try p.skipPart() }
                let source = CollectionKeyPair(collection: try collection.read(&p), key: try p.string())
                let isManual = try p.manual()
                _ = try Self.rules(value)
                return body(source, isManual)
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
    }
}

/// The source collection of the entry read last, kept while the next entries name the same
/// bytes (every edge to a row usually comes from one collection).
private struct SourceCollection {
    var bytes: [UInt8] = []
    var string: String?

    /// The next part of `p` as a string, reusing the last one when its bytes are equal.
    mutating func read(_ p: inout RelationshipState.Parser) throws(EngineError) -> String {
        let start = p.at
        if let string {
            let end = start + bytes.count
            if end + 2 <= p.raw.count, p.raw[end] == 0, p.raw[end + 1] == 0,
               bytes.isEmpty || bytes.withUnsafeBytes({ memcmp($0.baseAddress!, p.raw.baseAddress! + start, bytes.count) == 0 }) {
                p.at = end + 2
                return string
            }
        }
        let read = try p.string()
        // Kept only when it was read in place (no escaped zero): then its bytes are the key's.
        if p.at - start == read.utf8.count + 2 {
            bytes = Array(read.utf8)
            string = read
        } else {
            string = nil
        }
        return read
    }
}

extension RelationshipState.Parser {
    /// Steps over the next escaped part, checking its escapes.
    mutating func skipPart() throws(EngineError) {
        while at < raw.count {
            let byte = raw[at]
            at += 1
            guard byte == 0 else { continue }
            guard at < raw.count else { break }
            let next = raw[at]
            at += 1
            if next == 0 { return }
            guard next == 0xFF else { break }
        }
        throw .damagedExtensionEntry
    }
}
