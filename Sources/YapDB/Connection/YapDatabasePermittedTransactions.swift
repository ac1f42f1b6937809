/// Which kinds of transaction a connection allows (YapDatabase's `YapDatabasePermittedTransactions`).
///
/// A transaction of a kind not in `connection.permittedTransactions` stops the program with a
/// message naming the misuse. Raw values match YapDatabase's `YDB_…` constants.
public struct YapDatabasePermittedTransactions: OptionSet, Sendable, Hashable {
    /// The bit pattern.
    public let rawValue: UInt

    /// The options with these bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// `read(_:)`.
    public static let syncRead = YapDatabasePermittedTransactions(rawValue: 1 << 0)
    /// `asyncRead(_:)` and its forms.
    public static let asyncRead = YapDatabasePermittedTransactions(rawValue: 1 << 1)
    /// `readWrite(_:)` / `write(_:)`.
    public static let syncReadWrite = YapDatabasePermittedTransactions(rawValue: 1 << 2)
    /// `asyncReadWrite(_:)` and its forms.
    public static let asyncReadWrite = YapDatabasePermittedTransactions(rawValue: 1 << 3)
    /// Transactions may only start on the main thread (combine with the kinds allowed).
    public static let mainThreadOnly = YapDatabasePermittedTransactions(rawValue: 1 << 4)

    /// Sync and async reads.
    public static let anyRead: YapDatabasePermittedTransactions = [.syncRead, .asyncRead]
    /// Sync and async read-writes.
    public static let anyReadWrite: YapDatabasePermittedTransactions = [.syncReadWrite, .asyncReadWrite]
    /// Sync reads and read-writes.
    public static let anySync: YapDatabasePermittedTransactions = [.syncRead, .syncReadWrite]
    /// Async reads and read-writes.
    public static let anyAsync: YapDatabasePermittedTransactions = [.asyncRead, .asyncReadWrite]
    /// Every kind of transaction, from any thread: the default.
    public static let anyTransaction: YapDatabasePermittedTransactions = [.anyRead, .anyReadWrite]

    // MARK: YapDatabase's constant names (as Swift imports them: no common prefix to strip)

    /// `syncRead` under YapDatabase's name.
    public static let YDB_SyncReadTransaction = syncRead
    /// `asyncRead` under YapDatabase's name.
    public static let YDB_AsyncReadTransaction = asyncRead
    /// `syncReadWrite` under YapDatabase's name.
    public static let YDB_SyncReadWriteTransaction = syncReadWrite
    /// `asyncReadWrite` under YapDatabase's name.
    public static let YDB_AsyncReadWriteTransaction = asyncReadWrite
    /// `anyRead` under YapDatabase's name.
    public static let YDB_AnyReadTransaction = anyRead
    /// `anyReadWrite` under YapDatabase's name.
    public static let YDB_AnyReadWriteTransaction = anyReadWrite
    /// `anySync` under YapDatabase's name.
    public static let YDB_AnySyncTransaction = anySync
    /// `anyAsync` under YapDatabase's name.
    public static let YDB_AnyAsyncTransaction = anyAsync
    /// `anyTransaction` under YapDatabase's name.
    public static let YDB_AnyTransaction = anyTransaction
    /// `mainThreadOnly` under YapDatabase's name.
    public static let YDB_MainThreadOnly = mainThreadOnly
}

/// What `connection.flushMemory(with:)` releases (YapDatabase's `YapDatabaseConnectionFlushMemoryFlags`).
///
/// Raw values match YapDatabase's (1 caches, 4 internal; there are no SQLite statements to flush).
public struct YapDatabaseConnectionFlushMemoryFlags: OptionSet, Sendable, Hashable {
    /// The bit pattern.
    public let rawValue: UInt

    /// The flags with these bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The object and metadata caches.
    public static let caches = YapDatabaseConnectionFlushMemoryFlags(rawValue: 1 << 0)
    /// Internal buffers the connection keeps between transactions (e.g. read buffers).
    public static let `internal` = YapDatabaseConnectionFlushMemoryFlags(rawValue: 1 << 2)
    /// Everything: caches and internal memory.
    public static let all: YapDatabaseConnectionFlushMemoryFlags = [.caches, .internal]
}
