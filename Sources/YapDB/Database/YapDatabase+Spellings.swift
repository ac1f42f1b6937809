import Foundation

// Members of YapDatabase's headers that YapDB had under another spelling or not at all, spelled
// as Swift imports them. Each forwards to the native member it names.

extension YapDatabase {
    // MARK: Sanitizers and combined registration

    /// The pre-sanitizer of collections without their own, for objects and metadata (nil: none,
    /// values are stored as given).
    public func registerDefaultPreSanitizer(_ preSanitizer: YapDatabasePreSanitizer?) {
        registry.registerDefaultPreSanitizer(preSanitizer ?? { _, _, object in object })
    }

    /// The post-sanitizer of collections without their own, for objects and metadata (nil: none).
    public func registerDefaultPostSanitizer(_ postSanitizer: YapDatabasePostSanitizer?) {
        registry.registerDefaultPostSanitizer(postSanitizer ?? { _, _, _ in })
    }

    /// The pre-sanitizer of `collection`'s objects only.
    public func registerObjectPreSanitizer(_ preSanitizer: @escaping YapDatabasePreSanitizer, forCollection collection: String?) {
        registry.registerPreSanitizer(preSanitizer, forCollection: collection, parts: .object)
    }

    /// The post-sanitizer of `collection`'s objects only.
    public func registerObjectPostSanitizer(_ postSanitizer: @escaping YapDatabasePostSanitizer, forCollection collection: String?) {
        registry.registerPostSanitizer(postSanitizer, forCollection: collection, parts: .object)
    }

    /// The pre-sanitizer of `collection`'s metadata only.
    public func registerMetadataPreSanitizer(_ preSanitizer: @escaping YapDatabasePreSanitizer, forCollection collection: String?) {
        registry.registerPreSanitizer(preSanitizer, forCollection: collection, parts: .metadata)
    }

    /// The post-sanitizer of `collection`'s metadata only.
    public func registerMetadataPostSanitizer(_ postSanitizer: @escaping YapDatabasePostSanitizer, forCollection collection: String?) {
        registry.registerPostSanitizer(postSanitizer, forCollection: collection, parts: .metadata)
    }

    /// Registers each non-nil block for every collection of `collections` (objects and metadata).
    public func registerSerializer(_ serializer: YapDatabaseSerializer?, deserializer: YapDatabaseDeserializer?,
                                   preSanitizer: YapDatabasePreSanitizer?, postSanitizer: YapDatabasePostSanitizer?,
                                   forCollections collections: [String]) {
        for collection in collections {
            if let serializer { registerSerializer(serializer, forCollection: collection) }
            if let deserializer { registerDeserializer(deserializer, forCollection: collection) }
            if let preSanitizer { registerPreSanitizer(preSanitizer, forCollection: collection) }
            if let postSanitizer { registerPostSanitizer(postSanitizer, forCollection: collection) }
        }
    }

    // MARK: Extensions

    /// Registers `ext` in the background with a connection made with `config`; `completionBlock`
    /// gets the result on `notificationQueue` (the main queue on Apple platforms).
    public func asyncRegister(_ ext: YapDatabaseExtension, withName name: String, config: YapDatabaseConnectionConfig?,
                              completionBlock: (@Sendable (Bool) -> Void)?) {
        asyncRegister(ext, withName: name, config: config, completionQueue: nil, completionBlock: completionBlock)
    }

    /// Registers `ext` in the background with a connection made with `config`, after every
    /// registration made before it; `completionBlock` gets the result on `completionQueue`
    /// (nil: `notificationQueue`).
    public func asyncRegister(_ ext: YapDatabaseExtension, withName name: String, config: YapDatabaseConnectionConfig?,
                              completionQueue: DispatchQueue?, completionBlock: (@Sendable (Bool) -> Void)?) {
        let box = ExtensionBox(ext)
        let configBox = config?.copy()
        let queue = completionQueue ?? defaultCompletionQueueForUser
        registrationQueue.async { [self] in
            let ok = register(box.ext, withName: name, config: configBox)
            if let completionBlock { queue.async { completionBlock(ok) } }
        }
    }

    /// Unregisters the extension named `name` in the background, then runs `completionBlock` on
    /// `notificationQueue` (the main queue on Apple platforms).
    public func asyncUnregisterExtension(withName name: String, completionBlock: (@Sendable () -> Void)?) {
        asyncUnregisterExtension(withName: name, completionQueue: nil, completionBlock: completionBlock)
    }

    /// Unregisters the extension named `name` in the background, after every registration made
    /// before it, then runs `completionBlock` on `completionQueue` (nil: `notificationQueue`).
    public func asyncUnregisterExtension(withName name: String, completionQueue: DispatchQueue?, completionBlock: (@Sendable () -> Void)?) {
        let queue = completionQueue ?? defaultCompletionQueueForUser
        registrationQueue.async { [self] in
            unregisterExtension(withName: name)
            if let completionBlock { queue.async(execute: completionBlock) }
        }
    }
}

extension YapDatabaseConnection {
    /// `flushTransactions(completionQueue:completionBlock:)` as Swift imports YapDatabase's
    /// `flushTransactionsWithCompletionQueue:completionBlock:`.
    public func flushTransactions(withCompletionQueue completionQueue: DispatchQueue?, completionBlock: @escaping @Sendable () -> Void) {
        flushTransactions(completionQueue: completionQueue, completionBlock: completionBlock)
    }

    /// Whether any of `notifications` changed an object in `collection`.
    public func hasObjectChange(forCollection collection: String?, in notifications: [Notification]) -> Bool {
        ChangesetQueries.hasObjectChange(forCollection: collection, in: notifications)
    }

    /// Whether any of `notifications` changed metadata in `collection`.
    public func hasMetadataChange(forCollection collection: String?, in notifications: [Notification]) -> Bool {
        ChangesetQueries.hasMetadataChange(forCollection: collection, in: notifications)
    }

    /// Whether any of `notifications` changed the object of any of `keys` in `collection`.
    public func hasObjectChange(forAnyKeys keys: Set<String>, inCollection collection: String?, in notifications: [Notification]) -> Bool {
        ChangesetQueries.hasObjectChange(forAnyKeys: keys, inCollection: collection, in: notifications)
    }

    /// Whether any of `notifications` changed the metadata of any of `keys` in `collection`.
    public func hasMetadataChange(forAnyKeys keys: Set<String>, inCollection collection: String?, in notifications: [Notification]) -> Bool {
        ChangesetQueries.hasMetadataChange(forAnyKeys: keys, inCollection: collection, in: notifications)
    }
}

/// YapDatabase's name for what the log handler receives (`YapDatabase.setLogHandler`).
public typealias YDBLogMessage = YapDatabaseLogMessage
