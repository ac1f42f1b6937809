import Foundation
import YapDBEngine

extension YapDatabaseConnection {
    // MARK: Synchronous

    /// Runs `block` in a read-only transaction on one snapshot and returns its result.
    /// Blocks until the connection's earlier transactions are done; never waits for writers.
    /// Reading works on a poisoned, full or read-only database. On a closed database the block
    /// still runs, on the state the database had when it closed (the newest commit), and the
    /// read is reported to the log handler as an error: `close()` on one thread can race a read
    /// on another, which the caller cannot always prevent, and this form has no error to throw
    /// (as `readWrite` runs its block on a closed database and refuses its writes). The
    /// asynchronous forms skip their block instead; `async` `read` throws `.closed`.
    public func read<T, E: Error>(_ block: (YapDatabaseReadTransaction) throws(E) -> T) throws(E) -> T {
        checkPermitted(.syncRead, "a synchronous read")
        if database.isClosed {
            YapDatabaseLogging.log(.error, "a synchronous read of \(database.databaseURL.path) after close(): the block reads the state at close")
        }
        return try onQueue { () throws(E) -> T in try performRead(block) }
    }

    /// Runs `block` in the read-write transaction and commits it. An error thrown by the block
    /// rolls back and is rethrown. When the commit fails or the database refuses it (poisoned,
    /// full, read-only, closed), the block still runs — its reads see the newest state, its
    /// writes are refused — nothing of it is applied, the failure goes to the log handler, and
    /// the block's value is returned; this never stops the program. Prefer `write(_:)`, which
    /// throws those failures.
    public func readWrite<T, E: Error>(_ block: (YapDatabaseReadWriteTransaction) throws(E) -> T) throws(E) -> T {
        checkPermitted(.syncReadWrite, "a synchronous read-write")
        let outcome = onQueue { performReadWrite(block, runsWhenRefused: true) }
        switch outcome {
        case .finished(let value): return value
        case .blockFailed(let error): throw error
        case .commitFailed(let value, let error):
            logCommitFailure("readWrite", error)
            return value
        case .refused(let error):
            preconditionFailure("YapDB internal error: a read-write transaction was refused without running its block (\(error))")
        }
    }

    /// Runs `block` in the read-write transaction and commits it (the native form). On a
    /// closed or poisoned database the block does not run. On a database opened read-only
    /// (`YapDatabaseOptions.readOnly`) it runs, its writes are refused, and a block that wrote
    /// anything ends in `readOnly`.
    /// - Throws: the block's own error (after rolling back), or `YapDatabaseError` when the commit
    ///   fails or is refused (`diskFull`, `readOnly`, `io`, `poisoned`, `closed`, `serialization`,
    ///   `valueTooLarge`).
    @discardableResult
    public func write<T>(_ block: (YapDatabaseReadWriteTransaction) throws -> T) throws -> T {
        checkPermitted(.syncReadWrite, "a synchronous read-write")
        let outcome = onQueue { performReadWrite(block, runsWhenRefused: false) }
        switch outcome {
        case .finished(let value): return value
        case .blockFailed(let error): throw error
        case .commitFailed(_, let error), .refused(let error): throw error
        }
    }

    // MARK: Asynchronous (completion blocks)

    /// Runs `block` in a read-only transaction in the background.
    public func asyncRead(_ block: @escaping @Sendable (YapDatabaseReadTransaction) -> Void) {
        asyncRead(block, completionQueue: nil, completionBlock: nil)
    }

    /// Runs `block` in a read-only transaction in the background, then `completionBlock` on
    /// `completionQueue` (default: `database.notificationQueue`, the main queue on Apple platforms).
    /// When the database is closed by the time the transaction would start, the block is
    /// skipped (reported to the log handler) and the completion block still runs.
    public func asyncRead(_ block: @escaping @Sendable (YapDatabaseReadTransaction) -> Void,
                          completionQueue: DispatchQueue? = nil, completionBlock: (@Sendable () -> Void)?) {
        checkPermitted(.asyncRead, "an asynchronous read")
        enqueue(completionQueue: completionQueue, completionBlock: completionBlock) { [self] in
            guard !database.isClosed else {
                YapDatabaseLogging.log(.error, "asyncRead on \(database.databaseURL.path) skipped its block: the database is closed")
                return
            }
            performRead { (tx) throws(Never) in block(tx) }
        }
    }

    /// Runs `block` in the read-write transaction in the background and commits it.
    public func asyncReadWrite(_ block: @escaping @Sendable (YapDatabaseReadWriteTransaction) -> Void) {
        asyncReadWrite(block, completionQueue: nil, completionBlock: nil)
    }

    /// Runs `block` in the read-write transaction in the background, commits it, then runs
    /// `completionBlock` on `completionQueue` (after the commit is durable). A failed or refused
    /// commit is handled as in `readWrite(_:)` (the block runs, nothing is applied, the failure
    /// goes to the log handler) and the completion block still runs.
    public func asyncReadWrite(_ block: @escaping @Sendable (YapDatabaseReadWriteTransaction) -> Void,
                               completionQueue: DispatchQueue? = nil, completionBlock: (@Sendable () -> Void)?) {
        checkPermitted(.asyncReadWrite, "an asynchronous read-write")
        enqueue(completionQueue: completionQueue, completionBlock: completionBlock) { [self] in
            switch performReadWrite({ (tx) throws(Never) in block(tx) }, runsWhenRefused: true) {
            case .finished: break
            case .commitFailed(_, let error), .refused(let error): logCommitFailure("asyncReadWrite", error)
            }
        }
    }

    /// Reports a failed or refused commit of a form that cannot throw it.
    func logCommitFailure(_ form: String, _ error: YapDatabaseError) {
        YapDatabaseLogging.log(.error, "\(form) on \(database.databaseURL.path) did not commit: \(error)")
    }

    /// Runs `completionBlock` on `completionQueue` once every transaction queued on this
    /// connection before the call has finished.
    public func flushTransactions(completionQueue: DispatchQueue? = nil, completionBlock: @escaping @Sendable () -> Void) {
        enqueue(completionQueue: completionQueue, completionBlock: completionBlock) {}
    }

    func enqueue(completionQueue: DispatchQueue?, completionBlock: (@Sendable () -> Void)?, _ work: @escaping @Sendable () -> Void) {
        pending.add(1, ordering: .relaxed)
        let target = completionQueue ?? database.defaultCompletionQueueForUser
        queue.async { [self] in
            exclusive.withLock { _ in
                activeThread.store(Self.currentThread, ordering: .releasing)
                work()
                activeThread.store(0, ordering: .releasing)
            }
            pending.subtract(1, ordering: .relaxed)
            if let completionBlock { target.async(execute: completionBlock) }
        }
    }

    // MARK: Swift concurrency

    /// Runs `block` in a read-only transaction without blocking a cooperative thread.
    /// - Throws: the block's error, or `YapDatabaseError.closed` (the block skipped) when the
    ///   database is closed by the time the transaction would start.
    public func read<T: Sendable>(_ block: @escaping @Sendable (YapDatabaseReadTransaction) throws -> T) async throws -> T {
        checkPermitted(.asyncRead, "an asynchronous read")
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            enqueue(completionQueue: nil, completionBlock: nil) { [self] in
                guard !database.isClosed else { return continuation.resume(throwing: YapDatabaseError.closed) }
                do { continuation.resume(returning: try performRead(block)) } catch { continuation.resume(throwing: error) }
            }
        }
    }

    /// Runs `block` in the read-write transaction and commits it, without blocking a
    /// cooperative thread. On a closed or poisoned database the block does not run.
    /// - Throws: the block's error, or the commit's `YapDatabaseError` (as `write(_:)`).
    public func write<T: Sendable>(_ block: @escaping @Sendable (YapDatabaseReadWriteTransaction) throws -> T) async throws -> T {
        checkPermitted(.asyncReadWrite, "an asynchronous read-write")
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            enqueue(completionQueue: nil, completionBlock: nil) { [self] in
                switch performReadWrite(block, runsWhenRefused: false) {
                case .finished(let value): continuation.resume(returning: value)
                case .blockFailed(let error): continuation.resume(throwing: error)
                case .commitFailed(_, let error), .refused(let error): continuation.resume(throwing: error)
                }
            }
        }
    }

    // MARK: Running

    /// Runs `body` as this connection's transaction-time work, one at a time with the rest and
    /// after everything queued before it, detecting the deadlock of a synchronous transaction
    /// started from inside a transaction of the same connection.
    ///
    /// When nothing is queued or running (`pending` is 0 and `exclusive` is free), `body` runs
    /// at once on the calling thread, holding `exclusive`: no hop through `queue`. Otherwise it
    /// waits its turn on `queue`. Either way it holds `exclusive`, so work that arrives on the
    /// queue meanwhile waits for it; and a caller that finds work pending takes the queue, so
    /// the order of submission is kept.
    func onQueue<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let me = Self.currentThread
        if activeThread.load(ordering: .acquiring) == me {
            preconditionFailure("YapDatabaseConnection misuse: a synchronous transaction was started from inside a transaction on the same connection; this would deadlock")
        }
        var result: Result<T, E>?
        pending.add(1, ordering: .acquiringAndReleasing)
        defer { pending.subtract(1, ordering: .relaxed) }
        func run() {
            activeThread.store(me, ordering: .releasing)
            result = Result { () throws(E) -> T in try body() }
            activeThread.store(0, ordering: .releasing)
        }
        // Idle: this call is the only pending work (its own count is the 1).
        if pending.load(ordering: .acquiring) == 1, exclusive.withLockIfAvailable({ _ in run() }) != nil {
            return try result!.get()
        }
        queue.sync { exclusive.withLock { _ in run() } }
        return try result!.get()
    }

    /// Runs `work` on the connection's queue holding `exclusive` (the non-transaction
    /// members that read transaction-time state from another thread; not counted as pending
    /// transactions).
    func onQueueExclusively<T>(_ work: () -> T) -> T {
        queue.sync { exclusive.withLock { _ in work() } }
    }

    func checkPermitted(_ kind: YapDatabasePermittedTransactions, _ description: String) {
        let permitted = YapDatabasePermittedTransactions(rawValue: permittedBits.load(ordering: .acquiring))
        guard permitted.contains(kind) else {
            preconditionFailure("YapDatabaseConnection misuse: \(description) transaction is not permitted on this connection (permittedTransactions = \(permitted.rawValue))")
        }
        if permitted.contains(.mainThreadOnly) && !Thread.isMainThread {
            preconditionFailure("YapDatabaseConnection misuse: \(description) transaction off the main thread, but permittedTransactions has .mainThreadOnly")
        }
    }

    /// A read transaction (on the queue).
    func performRead<T, E: Error>(_ block: (YapDatabaseReadTransaction) throws(E) -> T) throws(E) -> T {
        applySettings()
        confirmMappedFiles()
        let lease = longLived ?? database.engine.acquireSnapshot()
        syncCaches(to: lease.snapshot.number)
        let tx = YapDatabaseReadTransaction(connection: self, snapshot: lease.snapshot)
        defer {
            tx.invalidate()
            withExtendedLifetime(lease) {}
        }
        return try block(tx)
    }

    /// Before a transaction reads: at most once per interval, the engine compares the files it
    /// reads through memory maps with their maps and revokes the map of a file another program
    /// shrank (`Engine.confirmMappedFiles`), so reads of it report typed errors instead of
    /// stopping the process; the first such finding goes to the log handler.
    func confirmMappedFiles() {
        if let error = database.engine.confirmMappedFiles() {
            YapDatabaseLogging.log(.error, "\(database.databaseURL.path): a file read through a memory map changed under it: \(error); reads of it now fail")
        }
    }

    /// How a read-write transaction ended.
    enum WriteOutcome<T, E: Error> {
        /// Committed, or nothing to commit (also a rollback).
        case finished(T)
        /// The block threw its own error; rolled back.
        case blockFailed(E)
        /// The block returned, but nothing of it was applied: the commit failed, a write inside
        /// it failed, or the database refused it (`runsWhenRefused`).
        case commitFailed(T, YapDatabaseError)
        /// The database refused the transaction before the block ran (closed or poisoned; only
        /// without `runsWhenRefused`).
        case refused(YapDatabaseError)
    }

    /// The read-write transaction (on the queue).
    /// - Parameter runsWhenRefused: run the block even when the database refuses the
    ///   transaction (for the forms that must return the block's value).
    func performReadWrite<T, E: Error>(_ block: (YapDatabaseReadWriteTransaction) throws(E) -> T,
                                       runsWhenRefused: Bool) -> WriteOutcome<T, E> {
        applySettings()
        confirmMappedFiles()
        if longLived != nil {
            if settings.withLock({ $0.exceptionsForImplicitEnd }) {
                preconditionFailure("YapDatabaseConnection misuse: a read-write transaction implicitly ends this connection's long-lived read transaction (exceptions for this are enabled)")
            }
            longLived = nil
        }
        var transaction: YapDatabaseReadWriteTransaction?
        var value: T?
        // The block's own error, or a write inside it that failed: kept here, so the engine's
        // transaction is its non-generic form (the generic one would look up `WriteFailure`'s
        // metadata for `E` at run time on every transaction).
        var blockError: E?
        var failedWrite: YapDatabaseError?
        let changeset: Changeset?
        do throws(EngineError) {
            changeset = try database.engine.runWriteTransaction(runsBodyWhenRefused: runsWhenRefused, didCommit: { changeset in
                if let record = changeset.commitRecord { database.didCommit(record) }
            }) { engineTx in
                syncCaches(to: engineTx.baseSnapshot)
                let tx = YapDatabaseReadWriteTransaction(connection: self, engineTransaction: engineTx)
                transaction = tx
                defer { tx.invalidate() }
                do throws(E) {
                    value = try block(tx)
                } catch {
                    blockError = error
                    return .threw
                }
                if !tx.isRolledBack, tx.pendingFailure == nil { tx.runWillCommitHooks() }
                if let failure = tx.pendingFailure {
                    failedWrite = failure
                    return .threw
                }
                if tx.isRolledBack { engineTx.rollback(); return .returned }
                // Nothing to commit: the engine publishes nothing, so nothing is built for observers.
                if engineTx.hasChanges { tx.prepareCommit() }
                return .returned
            }
        } catch {
            return failed(YapDatabaseError(error), value: value, transaction: transaction)
        }
        if let blockError {
            transaction?.discardCacheChanges()
            return .blockFailed(blockError)
        }
        if let failedWrite { return failed(failedWrite, value: value, transaction: transaction) }
        if let changeset {
            advance(to: changeset.snapshot)
            transaction?.runAfterDurableCommit()
            transaction?.runCompletionBlocks()
        } else if transaction?.isRolledBack == true {
            transaction?.discardCacheChanges()
        }
        return .finished(value.unsafelyUnwrapped)
    }

    /// The outcome of a read-write transaction that failed with `failure` after the block
    /// returned `value` (`commitFailed`), or before it ran (`refused`); its cache changes are
    /// dropped.
    private func failed<T, E: Error>(_ failure: YapDatabaseError, value: T?, transaction: YapDatabaseReadWriteTransaction?) -> WriteOutcome<T, E> {
        transaction?.discardCacheChanges()
        guard let value else { return .refused(failure) }
        return .commitFailed(value, failure)
    }
}
