import Foundation
import Synchronization

/// The database's serializers, deserializers, sanitizers, Codable registrations and object
/// policies (API.md §1). `YapDatabase`'s `register…` and `set…Policy` methods forward here one to
/// one; a connection takes a ``Snapshot`` when it is created, so registrations apply to
/// connections created afterwards.
///
/// Resolution for a (part, collection): the collection's registration, else the default
/// registration, else the built-in format (``YapValueFormat``). A `nil` collection means `""`.
///
/// Threading: all state sits behind one `Mutex` (`state`); every method may be called from any
/// thread. `version` counts registrations, so a connection learns that its snapshot is stale
/// with one atomic load (see ``current(ifNewerThan:)``). The class is `Sendable` without
/// `@unchecked`.
final class SerializationRegistry: Sendable {
    /// Objects or metadata: each has its own table.
    enum Part: Sendable, CaseIterable { case object, metadata }

    /// Which parts a registration applies to.
    struct Parts: OptionSet, Sendable {
        let rawValue: UInt8
        static let object = Parts(rawValue: 1)
        static let metadata = Parts(rawValue: 2)
        static let both: Parts = [.object, .metadata]
        func contains(_ part: Part) -> Bool { contains(part == .object ? Parts.object : Parts.metadata) }
    }

    /// How a collection (or the default) serializes.
    enum Serialize: Sendable {
        case custom(YapDatabaseSerializer)
        case codable(CodableCodec)
    }

    /// How a collection (or the default) deserializes.
    enum Deserialize: Sendable {
        case custom(YapDatabaseDeserializer)
        case codable(CodableCodec)
    }

    /// What is registered for one collection (or as the default) and one part.
    struct Entry: Sendable {
        var serializer: Serialize?
        var deserializer: Deserialize?
        var preSanitizer: YapDatabasePreSanitizer?
        var postSanitizer: YapDatabasePostSanitizer?
    }

    /// One part's registrations.
    struct Table: Sendable {
        var defaults = Entry()
        var collections: [String: Entry] = [:]

        /// Applies `change` to the entry of `collection`, or to the defaults when `collection` is nil
        /// and `isDefault`.
        mutating func update(collection: String?, isDefault: Bool, _ change: (inout Entry) -> Void) {
            if isDefault { change(&defaults) } else { change(&collections[collection ?? "", default: Entry()]) }
        }
    }

    struct State: Sendable {
        var object = Table()
        var metadata = Table()
        var codables: CodableTable
        var objectPolicies: [String: YapDatabasePolicy] = [:]
        var metadataPolicies: [String: YapDatabasePolicy] = [:]
        var defaultObjectPolicy = YapDatabasePolicy.containment
        var defaultMetadataPolicy = YapDatabasePolicy.containment

        subscript(part: Part) -> Table {
            get { part == .object ? object : metadata }
            set { if part == .object { object = newValue } else { metadata = newValue } }
        }
    }

    /// The coder Codable registrations use when none is given: ``YapBinaryEncoder`` /
    /// ``YapBinaryDecoder``, chosen by measurement (docs/api.md, "Default Codable coder").
    static var defaultEncoder: any YapDatabaseEncoder { YapBinaryEncoder() }
    /// See ``defaultEncoder``.
    static var defaultDecoder: any YapDatabaseDecoder { YapBinaryDecoder() }

    private let state: Mutex<State>
    /// Bumped (under `state`'s lock) by every registration; read without the lock.
    private let version = Atomic<UInt64>(0)

    /// A registry with nothing registered: the built-in format for every collection, and the
    /// `.containment` policy.
    init() {
        state = Mutex(State(codables: .builtIn(encoder: Self.defaultEncoder, decoder: Self.defaultDecoder)))
    }

    /// The registrations as they are now.
    var snapshot: Snapshot { versionedSnapshot.snapshot }

    /// The registrations as they are now, with the version that counts them.
    var versionedSnapshot: (snapshot: Snapshot, version: UInt64) {
        state.withLock { (Snapshot(state: $0), version.load(ordering: .relaxed)) }
    }

    /// ``versionedSnapshot``, or nil when nothing was registered since version `known` (the
    /// common case: one atomic load, no lock).
    func current(ifNewerThan known: UInt64) -> (snapshot: Snapshot, version: UInt64)? {
        guard version.load(ordering: .acquiring) != known else { return nil }
        return versionedSnapshot
    }

    // MARK: Serializers and deserializers

    /// `registerDefaultSerializer(_:)`: the serializer of collections without their own (objects and metadata).
    func registerDefaultSerializer(_ serializer: @escaping YapDatabaseSerializer, parts: Parts = .both) {
        update(parts, collection: nil, isDefault: true) { $0.serializer = .custom(serializer) }
    }

    /// `registerDefaultDeserializer(_:)`.
    func registerDefaultDeserializer(_ deserializer: @escaping YapDatabaseDeserializer, parts: Parts = .both) {
        update(parts, collection: nil, isDefault: true) { $0.deserializer = .custom(deserializer) }
    }

    /// `registerSerializer(_:forCollection:)` (`parts: .both`), `registerObjectSerializer`
    /// (`.object`), `registerMetadataSerializer` (`.metadata`).
    func registerSerializer(_ serializer: @escaping YapDatabaseSerializer, forCollection collection: String?, parts: Parts = .both) {
        update(parts, collection: collection, isDefault: false) { $0.serializer = .custom(serializer) }
    }

    /// `registerDeserializer(_:forCollection:)` and its object/metadata forms.
    func registerDeserializer(_ deserializer: @escaping YapDatabaseDeserializer, forCollection collection: String?, parts: Parts = .both) {
        update(parts, collection: collection, isDefault: false) { $0.deserializer = .custom(deserializer) }
    }

    // MARK: Sanitizers

    /// `registerDefaultPreSanitizer(_:)`.
    func registerDefaultPreSanitizer(_ sanitizer: @escaping YapDatabasePreSanitizer, parts: Parts = .both) {
        update(parts, collection: nil, isDefault: true) { $0.preSanitizer = sanitizer }
    }

    /// `registerDefaultPostSanitizer(_:)`.
    func registerDefaultPostSanitizer(_ sanitizer: @escaping YapDatabasePostSanitizer, parts: Parts = .both) {
        update(parts, collection: nil, isDefault: true) { $0.postSanitizer = sanitizer }
    }

    /// `registerPreSanitizer(_:forCollection:)` and its object/metadata forms.
    func registerPreSanitizer(_ sanitizer: @escaping YapDatabasePreSanitizer, forCollection collection: String?, parts: Parts = .both) {
        update(parts, collection: collection, isDefault: false) { $0.preSanitizer = sanitizer }
    }

    /// `registerPostSanitizer(_:forCollection:)` and its object/metadata forms.
    func registerPostSanitizer(_ sanitizer: @escaping YapDatabasePostSanitizer, forCollection collection: String?, parts: Parts = .both) {
        update(parts, collection: collection, isDefault: false) { $0.postSanitizer = sanitizer }
    }

    // MARK: Codable

    /// `registerCodableSerialization(T.self, forCollection:encoder:decoder:)`: objects and
    /// metadata of `collection` are `T`, written with the built-in format's tag 2. `T` also
    /// becomes known to the default serializer (tag 3) in every collection.
    /// - Parameters:
    ///   - encoder: nil means ``defaultEncoder``.
    ///   - decoder: nil means ``defaultDecoder``.
    func registerCodableSerialization<T: Codable>(_ type: T.Type, forCollection collection: String?,
                                                  encoder: (any YapDatabaseEncoder)? = nil,
                                                  decoder: (any YapDatabaseDecoder)? = nil) {
        let codec = CodableCodec(T.self, encoder: encoder ?? Self.defaultEncoder, decoder: decoder ?? Self.defaultDecoder)
        change { state in
            state.codables.add(codec)
            for part in Part.allCases {
                state[part].update(collection: collection, isDefault: false) {
                    $0.serializer = .codable(codec)
                    $0.deserializer = .codable(codec)
                }
            }
        }
    }

    /// `registerCodableSerialization(O.self, metadata: M.self, forCollection:encoder:decoder:)`:
    /// objects of `collection` are `O`, metadata `M`.
    func registerCodableSerialization<O: Codable, M: Codable>(_ objectType: O.Type, metadata metadataType: M.Type,
                                                              forCollection collection: String?,
                                                              encoder: (any YapDatabaseEncoder)? = nil,
                                                              decoder: (any YapDatabaseDecoder)? = nil) {
        let enc = encoder ?? Self.defaultEncoder, dec = decoder ?? Self.defaultDecoder
        let objectCodec = CodableCodec(O.self, encoder: enc, decoder: dec)
        let metadataCodec = CodableCodec(M.self, encoder: enc, decoder: dec)
        change { state in
            state.codables.add(objectCodec)
            state.codables.add(metadataCodec)
            state.object.update(collection: collection, isDefault: false) {
                $0.serializer = .codable(objectCodec)
                $0.deserializer = .codable(objectCodec)
            }
            state.metadata.update(collection: collection, isDefault: false) {
                $0.serializer = .codable(metadataCodec)
                $0.deserializer = .codable(metadataCodec)
            }
        }
    }

    // MARK: Policies

    /// `setObjectPolicy(_:forCollection:)`.
    func setObjectPolicy(_ policy: YapDatabasePolicy, forCollection collection: String?) {
        change { $0.objectPolicies[collection ?? ""] = policy }
    }

    /// `setDefaultObjectPolicy(_:)`: the policy of collections without their own.
    func setDefaultObjectPolicy(_ policy: YapDatabasePolicy) {
        change { $0.defaultObjectPolicy = policy }
    }

    /// `setMetadataPolicy(_:forCollection:)`.
    func setMetadataPolicy(_ policy: YapDatabasePolicy, forCollection collection: String?) {
        change { $0.metadataPolicies[collection ?? ""] = policy }
    }

    /// `setDefaultMetadataPolicy(_:)`.
    func setDefaultMetadataPolicy(_ policy: YapDatabasePolicy) {
        change { $0.defaultMetadataPolicy = policy }
    }

    private func update(_ parts: Parts, collection: String?, isDefault: Bool, _ edit: (inout Entry) -> Void) {
        change { state in
            for part in Part.allCases where parts.contains(part) {
                state[part].update(collection: collection, isDefault: isDefault, edit)
            }
        }
    }

    /// Applies a registration and bumps `version` under the lock, so a snapshot taken with a
    /// version always holds every registration that version counts.
    private func change(_ body: (inout State) -> Void) {
        state.withLock { state in
            body(&state)
            version.add(1, ordering: .releasing)
        }
    }
}
