import Foundation

#if canImport(Darwin)
/// The dictionary a secondary-index handler block fills. On Apple platforms Foundation's own
/// `NSMutableDictionary`: bridging its keys and values costs little there, and a subclass would
/// have to stand in for the class cluster's primitives.
typealias SecondaryIndexHandlerDictionary = NSMutableDictionary

extension NSMutableDictionary {
    /// The value set for the text key `name` (`hint` is for the Linux form).
    func value(named name: String, hint: Int = 0) -> Any? { object(forKey: name) }
}
#else
/// The dictionary a secondary-index handler block fills: an `NSMutableDictionary`, the type
/// the blocks take, that keeps its entries as Swift values.
///
/// A plain `NSMutableDictionary` turns each `String` key into an `NSString` and each number
/// into an `NSNumber` as it stores them, then hashes `NSString`s to find them again; for a
/// handler that sets two columns that was about 30,000 instructions per indexed write, more
/// than updating the index's trees. Here a key stays the `String` it was given (an `NSString`
/// key is read as its `String`, so both spellings name the same entry, as before) and a value
/// stays what the handler set; the index converts it as it converts query parameters, with the
/// same result as for the bridged `NSNumber`, `NSString`, `NSData` or `NSDate`.
///
/// Everything a handler can do with its dictionary works through the class's primitive
/// methods: subscripts, `setObject(_:forKey:)`, `object(forKey:)`, `removeObject(forKey:)`,
/// `count`, enumeration, `allKeys`, copies, `description`. One thing differs: bridging it to a
/// Swift dictionary (`as? [String: Any]`) gives an empty one, as swift-corelibs-foundation
/// bridges only its own dictionary classes.
///
/// Threading: used by one handler call on the writer's queue.
final class SecondaryIndexHandlerDictionary: NSMutableDictionary {
    /// Entries whose key is text, in the order first set (most handlers set every column by
    /// name, a handful of them: a list searched in order costs less than hashing each name).
    private(set) var named: [(name: String, value: Any)] = []
    /// Entries whose key is something else (not a column: the index logs and ignores them).
    private(set) var other: [AnyHashable: Any] = [:]

    /// `key` as text, when it is a `String` or an `NSString`.
    private static func name(_ key: Any) -> String? {
        if let key = key as? AnyHashable { return key.base as? String }
        return key as? String
    }

    /// Where `name` is in `named`, looking first at `hint` (the index asks for the columns in
    /// order, as handlers usually set them).
    func position(of name: String, hint: Int = 0) -> Int? {
        if hint < named.count, named[hint].name == name { return hint }
        guard named.count > Self.listLimit else { return named.firstIndex { $0.name == name } }
        if positions == nil {
            var made: [String: Int] = [:]
            for (i, entry) in named.enumerated() { made[entry.name] = i }
            positions = made
        }
        return positions?[name]
    }

    /// Up to this many text keys are found by walking the list; past it, through `positions`
    /// (a handler setting hundreds of keys is not slowed quadratically).
    private static let listLimit = 16
    /// Each text key's place in `named`, once there are more than `listLimit` (nil until
    /// needed, and after a removal shifts the places).
    private var positions: [String: Int]?

    /// The value set for the text key `name`.
    func value(named name: String, hint: Int = 0) -> Any? {
        position(of: name, hint: hint).map { named[$0].value }
    }

    override var count: Int { named.count + other.count }

    override func object(forKey aKey: Any) -> Any? {
        if let name = Self.name(aKey) { return value(named: name) }
        guard let key = aKey as? AnyHashable else { return nil }
        return other[key]
    }

    override func setObject(_ anObject: Any, forKey aKey: AnyHashable) {
        guard let name = aKey.base as? String else {
            other[aKey] = anObject
            return
        }
        if let i = position(of: name, hint: named.count) {
            named[i].value = anObject
        } else {
            named.append((name, anObject))
            positions?[name] = named.count - 1
        }
    }

    override func removeObject(forKey aKey: Any) {
        if let name = Self.name(aKey) {
            if let i = position(of: name) {
                named.remove(at: i)
                positions = nil
            }
        } else if let key = aKey as? AnyHashable {
            other[key] = nil
        }
    }

    override func removeAllObjects() {
        named.removeAll()
        positions = nil
        other.removeAll()
    }

    override func keyEnumerator() -> NSEnumerator { KeyEnumerator(allKeys) }

    override var allKeys: [Any] { named.map { $0.name as Any } + other.keys.map { $0.base } }

    override var allValues: [Any] { named.map(\.value) + Array(other.values) }

    /// The entries as a Swift dictionary (what `copy` and `mutableCopy` are made from).
    private var entries: [AnyHashable: Any] {
        var all = other
        for (name, value) in named { all[AnyHashable(name)] = value }
        return all
    }

    override func copy(with zone: NSZone? = nil) -> Any { NSDictionary(dictionary: entries) }

    override func mutableCopy(with zone: NSZone? = nil) -> Any { NSMutableDictionary(dictionary: entries) }

    /// Hands out a fixed list of keys.
    private final class KeyEnumerator: NSEnumerator {
        private var keys: [Any]
        private var next = 0

        init(_ keys: [Any]) { self.keys = keys }

        override func nextObject() -> Any? {
            guard next < keys.count else { return nil }
            defer { next += 1 }
            return keys[next]
        }
    }
}
#endif
