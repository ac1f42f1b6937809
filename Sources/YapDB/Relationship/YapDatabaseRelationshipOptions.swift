import Foundation

/// Turns a file edge's destination into the bytes stored for it (nil: the edge is not stored).
public typealias YapDatabaseRelationshipFileURLSerializer = @Sendable (YapDatabaseRelationshipEdge) -> Data?
/// Turns stored bytes back into a file edge's destination (nil: the file cannot be named; the
/// edge is reported with no URL and its file is never deleted).
public typealias YapDatabaseRelationshipFileURLDeserializer = @Sendable (YapDatabaseRelationshipEdge, Data) -> URL?

/// Options of a relationship extension (YapDatabase's `YapDatabaseRelationshipOptions`).
///
/// Threading: set it up before creating the extension; the extension keeps a copy.
public final class YapDatabaseRelationshipOptions {

    /// When true, objects are never asked for their edges (`YapDatabaseRelationshipNode` is
    /// ignored): only manual edges exist. Default false.
    public var disableYapDatabaseRelationshipNodeProtocol = false

    /// The collections whose objects are asked for their edges (nil: all). Removals are seen in
    /// every collection, so rules always run.
    public var allowedCollections: YapWhitelistBlacklist?

    /// How a file edge's destination is stored. The default stores the file's path as UTF-8
    /// (YapDatabase stored Apple bookmark data; YapDB runs where bookmarks do not exist). A file
    /// found by `enumerateEdges(withName:destinationFileURL:using:)` is matched on these bytes,
    /// so the serializer must give the same bytes for the same file.
    public var fileURLSerializer: YapDatabaseRelationshipFileURLSerializer = YapDatabaseRelationshipOptions.defaultFileURLSerializer()

    /// How stored bytes become a file URL again (default: the UTF-8 path as a file URL).
    public var fileURLDeserializer: YapDatabaseRelationshipFileURLDeserializer = YapDatabaseRelationshipOptions.defaultFileURLDeserializer()

    /// The defaults.
    public init() {}

    /// The default serializer: the file URL's standardized path, as UTF-8.
    public static func defaultFileURLSerializer() -> YapDatabaseRelationshipFileURLSerializer {
        { edge in
            guard let url = edge.destinationFileURL, url.isFileURL else { return nil }
            return Data(url.standardizedFileURL.path.utf8)
        }
    }

    /// The default deserializer: a file URL of the UTF-8 path.
    public static func defaultFileURLDeserializer() -> YapDatabaseRelationshipFileURLDeserializer {
        { _, data in
            guard let path = String(data: data, encoding: .utf8), !path.isEmpty else { return nil }
            return URL(fileURLWithPath: path)
        }
    }

    /// The options as the extension keeps them (immutable).
    var settings: RelationshipSettings {
        RelationshipSettings(disableYapDatabaseRelationshipNodeProtocol: disableYapDatabaseRelationshipNodeProtocol,
                             allowedCollections: allowedCollections, fileURLSerializer: fileURLSerializer,
                             fileURLDeserializer: fileURLDeserializer)
    }
}

/// A relationship extension's options, fixed at its creation.
struct RelationshipSettings: Sendable {
    let disableYapDatabaseRelationshipNodeProtocol: Bool
    let allowedCollections: YapWhitelistBlacklist?
    let fileURLSerializer: YapDatabaseRelationshipFileURLSerializer
    let fileURLDeserializer: YapDatabaseRelationshipFileURLDeserializer

    /// Options holding these settings.
    var options: YapDatabaseRelationshipOptions {
        let options = YapDatabaseRelationshipOptions()
        options.disableYapDatabaseRelationshipNodeProtocol = disableYapDatabaseRelationshipNodeProtocol
        options.allowedCollections = allowedCollections
        options.fileURLSerializer = fileURLSerializer
        options.fileURLDeserializer = fileURLDeserializer
        return options
    }
}
