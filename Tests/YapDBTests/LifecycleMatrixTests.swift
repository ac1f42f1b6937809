import Foundation
import Synchronization
import Testing
import YapDBSimulatedDisk
@testable import YapDB

/// The lifecycle matrix (issue 10, item 2): every transaction form on a database that is open,
/// poisoned (a commit failed), full, read-only and closed. A refused commit never traps:
/// `write` throws the typed error; `readWrite`/`asyncReadWrite` run their block, log the
/// failure and return its value / still run the completion; asynchronous reads of a closed
/// database skip the block, log and run the completion; a synchronous read of a closed database
/// runs its block on the state at close and logs an error (a close racing a read on another
/// thread is not a misuse the caller can always avoid).
///
/// Each case runs on its own simulated disk (`YapDatabase.open(path:options:fileSystem:)`, the
/// package hook the reliability tests use), so faults are exact and nothing needs root.
@Suite struct LifecycleMatrixTests {
    enum State: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case open, poisoned, diskFull, readOnly, closed
        var testDescription: String { rawValue }

        /// What `write` throws in this state (nil: it commits).
        var writeError: YapDatabaseError? {
            switch self {
            case .open: nil
            case .poisoned: .poisoned
            case .diskFull: .diskFull
            case .readOnly: .readOnly
            case .closed: .closed
            }
        }

        /// Whether the engine refuses a transaction before it starts (a `write` block does not run).
        var refusesUpfront: Bool { self == .poisoned || self == .closed }
    }

    enum Form: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case read, readWrite, write, asyncRead, asyncReadWithCompletion, asyncReadWrite, asyncReadWriteWithCompletion
        case awaitRead, awaitWrite, flushTransactions
        var testDescription: String { rawValue }

        var writes: Bool { [.readWrite, .write, .asyncReadWrite, .asyncReadWriteWithCompletion, .awaitWrite].contains(self) }
        var isAsyncRead: Bool { [.asyncRead, .asyncReadWithCompletion, .awaitRead].contains(self) }
        /// Forms that report failures through the log handler (they cannot throw them).
        var logsFailures: Bool { [.readWrite, .asyncReadWrite, .asyncReadWriteWithCompletion].contains(self) }
    }

    /// Every form × state.
    static let cases: [(State, Form)] = State.allCases.flatMap { state in Form.allCases.map { form in (state, form) } }

    /// What a case observed.
    final class Observed: Sendable {
        let blockRan = Mutex(false)
        let blockSaw = Mutex<String?>(nil)
        let completionRan = Mutex(false)
        let thrown = Mutex<(any Error)?>(nil)
        let returned = Mutex<String?>(nil)
    }

    /// One case's database (see ``database(in:path:)``) and the log messages naming it.
    struct Subject {
        let database: YapDatabase
        let log: LogCapture

        init(_ state: State, name: String) throws {
            let path = "/matrix/\(name).yapdb"
            log = LogCapture(mentioning: path)
            database = try LifecycleMatrixTests.database(in: state, path: path)
        }

        /// Lets go of the files (without a checkpoint the faults would refuse) and stops the capture.
        func end() {
            database.abandon()
            log.stop()
        }
    }

    /// A database with `"c"/"k" = "v"` committed, on its own simulated disk, put into `state`.
    static func database(in state: State, path: String) throws -> YapDatabase {
        let disk = SimulatedDisk(seed: 10)
        try disk.mkdir("/matrix")
        let options = DatabaseFixture.fastOptions()   // .normal, and the environment's index read mode
        let database = try YapDatabase.open(path: path, options: options, fileSystem: disk)
        try database.newConnection().write { tx in tx.setObject("v", forKey: "k", inCollection: "c") }
        switch state {
        case .open: break
        case .poisoned:
            disk.inject(Fault(.write, effect: .error(EIO)))
            #expect(throws: YapDatabaseError.io(errno: EIO, operation: "pwrite")) {
                try database.newConnection().write { tx in tx.setObject("x", forKey: "poison", inCollection: "c") }
            }
            disk.clearFaults()
            #expect(database.engine.isPoisoned)
        case .diskFull:
            disk.capacity = 0
        case .readOnly:
            for call in [Fault.Call.write, .sync, .syncDirectory, .truncate, .rename, .remove] {
                disk.inject(Fault(call, persistent: true, effect: .error(EROFS)))
            }
        case .closed:
            try? database.close()
        }
        return database
    }

    /// A synchronous read (an `async` caller would pick the `async` overload).
    static func syncRead(_ connection: YapDatabaseConnection, _ block: (YapDatabaseReadTransaction) -> Void) {
        connection.read(block)
    }

    /// A synchronous `write`, for the same reason.
    static func syncWrite<T>(_ connection: YapDatabaseConnection, _ block: (YapDatabaseReadWriteTransaction) -> T) throws -> T {
        try connection.write(block)
    }

    /// The string stored under `key` in "c", read on a new connection.
    static func stored(_ key: String, _ database: YapDatabase) -> String? {
        database.newConnection().read { tx in tx.object(forKey: key, inCollection: "c") as? String }
    }

    /// Waits for `semaphore` (a completion block); a generous bound only guards against a hang.
    static func wait(_ semaphore: DispatchSemaphore, _ what: String) {
        #expect(semaphore.wait(timeout: .now() + 60) == .success, "\(what) never ran")
    }

    @Test(arguments: cases)
    func form(_ state: State, _ form: Form) async throws {
        let subject = try Subject(state, name: "\(state.rawValue)-\(form.rawValue)")
        defer { subject.end() }
        let database = subject.database, log = subject.log
        let connection = database.newConnection()
        let observed = Observed()
        let readBlock: @Sendable (YapDatabaseReadTransaction) -> Void = { tx in
            observed.blockRan.withLock { $0 = true }
            observed.blockSaw.withLock { $0 = tx.object(forKey: "k", inCollection: "c") as? String }
        }
        let writeBlock: @Sendable (YapDatabaseReadWriteTransaction) -> String = { tx in
            observed.blockRan.withLock { $0 = true }
            observed.blockSaw.withLock { $0 = tx.object(forKey: "k", inCollection: "c") as? String }
            tx.setObject("new", forKey: "k2", inCollection: "c")
            return "value"
        }
        let done = DispatchSemaphore(value: 0)
        let completion: @Sendable () -> Void = {
            observed.completionRan.withLock { $0 = true }
            done.signal()
        }

        switch form {
        case .read:
            Self.syncRead(connection, readBlock)
        case .readWrite:
            observed.returned.withLock { $0 = connection.readWrite(writeBlock) }
        case .write:
            do {
                let value = try Self.syncWrite(connection, writeBlock)
                observed.returned.withLock { $0 = value }
            } catch {
                observed.thrown.withLock { $0 = error }
            }
        case .asyncRead:
            connection.asyncRead(readBlock)
            connection.flushTransactions(completionBlock: completion)
        case .asyncReadWithCompletion:
            connection.asyncRead(readBlock, completionBlock: completion)
        case .asyncReadWrite:
            connection.asyncReadWrite { tx in _ = writeBlock(tx) }
            connection.flushTransactions(completionBlock: completion)
        case .asyncReadWriteWithCompletion:
            connection.asyncReadWrite({ tx in _ = writeBlock(tx) }, completionBlock: completion)
        case .awaitRead:
            do { _ = try await connection.read { tx in readBlock(tx) } } catch { observed.thrown.withLock { $0 = error } }
        case .awaitWrite:
            do {
                let value = try await connection.write(writeBlock)
                observed.returned.withLock { $0 = value }
            } catch {
                observed.thrown.withLock { $0 = error }
            }
        case .flushTransactions:
            connection.flushTransactions(completionBlock: completion)
        }
        if [.asyncRead, .asyncReadWithCompletion, .asyncReadWrite, .asyncReadWriteWithCompletion, .flushTransactions].contains(form) {
            Self.wait(done, "the completion block")
            #expect(observed.completionRan.withLock { $0 }, "the completion runs in every state")
        }
        #expect(connection.pendingTransactionCount == 0)

        // The block: every form runs it, except the write forms on a database that refuses
        // transactions up front and the asynchronous reads of a closed database.
        let blockShouldRun: Bool = switch form {
        case .flushTransactions: false
        case .write, .awaitWrite: !state.refusesUpfront
        case .asyncRead, .asyncReadWithCompletion, .awaitRead: state != .closed
        default: true
        }
        #expect(observed.blockRan.withLock { $0 } == blockShouldRun)
        if blockShouldRun { #expect(observed.blockSaw.withLock { $0 } == "v", "the block reads the newest committed state") }

        // Errors: thrown by the throwing forms only, typed.
        let thrown = observed.thrown.withLock { $0 }
        switch form {
        case .write, .awaitWrite:
            #expect(thrown as? YapDatabaseError == state.writeError)
            #expect(observed.returned.withLock { $0 } == (state.writeError == nil ? "value" : nil))
        case .awaitRead:
            #expect(thrown as? YapDatabaseError == (state == .closed ? .closed : nil))
        default:
            #expect(thrown == nil)
        }
        if form == .readWrite { #expect(observed.returned.withLock { $0 } == "value", "readWrite returns the block's value in every state") }

        // The log: the forms that cannot throw report each failure once, naming the database.
        let messages = log.messages.map(\.message)
        var expectedLog: String?
        if form.logsFailures && state != .open { expectedLog = "did not commit: \(state.writeError!)" }
        if [.asyncRead, .asyncReadWithCompletion].contains(form) && state == .closed {
            expectedLog = "skipped its block: the database is closed"
        }
        if form == .read && state == .closed { expectedLog = "after close(): the block reads the state at close" }
        if let expectedLog {
            #expect(messages.count == 1 && messages.first?.hasSuffix(expectedLog) == true, "\(messages)")
            #expect(log.messages.first?.level == .error)
        } else {
            #expect(messages.isEmpty, "\(messages)")
        }

        // Nothing of a failed or refused transaction is stored; an open database commits.
        if state != .closed {
            #expect(Self.stored("k2", database) == (form.writes && state == .open ? "new" : nil))
            #expect(Self.stored("k", database) == "v")
        }
    }

    struct Oops: Error, Equatable {}

    /// A `readWrite` whose block has a typed error, on a database that refuses the commit:
    /// the block's own error is rethrown, and a block that does not throw returns its value.
    @Test(arguments: [State.poisoned, .diskFull, .readOnly, .closed])
    func readWriteWithATypedErrorOnARefusingDatabase(_ state: State) throws {
        let subject = try Subject(state, name: "typed-\(state.rawValue)")
        defer { subject.end() }
        let connection = subject.database.newConnection()
        #expect(throws: Oops()) {
            try connection.readWrite { (tx) throws(Oops) in
                tx.setObject("new", forKey: "k2", inCollection: "c")
                throw Oops()
            }
        }
        let value = try connection.readWrite { (tx) throws(Oops) -> Int in
            tx.setObject("new", forKey: "k2", inCollection: "c")
            return 7
        }
        #expect(value == 7)
        #expect(subject.log.messages.map(\.message).filter { $0.hasSuffix("did not commit: \(state.writeError!)") }.count == 1,
                "only the returning block's failure is logged; the throwing one was rolled back")
    }
}
