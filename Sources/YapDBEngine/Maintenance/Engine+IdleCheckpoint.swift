import YapDBStorage
import Dispatch
import Synchronization

/// The idle checkpoint's bookkeeping: when the last commit happened and whether a check is
/// already scheduled (one at a time, however many commits arrive).
struct IdleCheckpointState: Sendable {
    var lastCommit = ContinuousClock.now
    var scheduled = false
}

// The idle checkpoint (docs/architecture.md, "Checkpoints"): when commits stop for
// `options.idleCheckpointDelay`, a background checkpoint writes the index changes held in
// memory, so a quiet database holds no dirty pages and a crash has nothing to replay. A commit
// costs one clock read and one uncontended lock; the check reschedules itself while commits keep
// coming, and does nothing once the engine is closed.
extension Engine {
    /// Notes a commit; schedules the idle check when none is pending.
    func noteCommitForIdleCheckpoint() {
        guard let delay = options.idleCheckpointDelay else { return }
        let schedule = idle.withLock { state in
            state.lastCommit = .now
            if state.scheduled { return false }
            state.scheduled = true
            return true
        }
        if schedule { scheduleIdleCheck(after: delay) }
    }

    /// Dispatch's timers need an event loop whose descriptors (an epoll and an event
    /// descriptor on Linux) it creates on the first timer of the process, and it stops the
    /// process when it cannot: an app that reached its descriptor limit would die at its first
    /// commit instead of getting `EMFILE` from a file call. Starting that loop when the first
    /// database opens with an idle delay, before any of its files are opened, moves the need to
    /// a moment when a descriptor is usually free (a process already at its limit then still
    /// stops inside Dispatch, which YapDB cannot prevent).
    static let dispatchTimersStarted: Bool = {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now()) {}
        return true
    }()

    private func scheduleIdleCheck(after delay: Duration) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + attoseconds / 1_000_000_000
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: nanoseconds))) { [weak self] in
            self?.idleCheckFired()
        }
    }

    /// Checkpoints when the database has been quiet for the whole delay; otherwise waits for
    /// the rest of it from the last commit.
    private func idleCheckFired() {
        guard let delay = options.idleCheckpointDelay else { return }
        let remaining: Duration? = idle.withLock { state in
            let quiet = ContinuousClock.now - state.lastCommit
            if quiet < delay { return delay - quiet }
            state.scheduled = false
            return nil
        }
        if let remaining {
            scheduleIdleCheck(after: remaining)
            return
        }
        runIdleCheckpointNow()
    }

    /// What the idle timer does once the database has been quiet for the whole delay: a
    /// checkpoint when the log grew since the last one; a failure is reported and retried
    /// (`reportCheckpointFailure`). Nothing when closed.
    ///
    /// `package` for the crash sweep (a hook, not an API): it runs the background checkpoint at
    /// a chosen point between commits, deterministically, so a simulated crash can land on each
    /// of its I/O calls; the timer thread gives no such control. Safe from any thread, as the
    /// timer calls it from a background queue.
    package func runIdleCheckpointNow() {
        guard !isClosed else { return }
        do throws(StorageError) { try checkpoint(onlyIfLogGrew: true) } catch {
            reportCheckpointFailure(error, during: "the idle checkpoint")
        }
    }

    /// Reports a checkpoint failure nobody else sees (an automatic or idle checkpoint) through
    /// `options.reportFailure`, and schedules the idle check to try again after the idle delay.
    /// A failed checkpoint changes nothing on disk that a reader relies on, and leaves the
    /// counters that made it due as they were (they are taken off only when a checkpoint is
    /// installed), so the retry — or the next commit's, an explicit one, or `close()`'s —
    /// writes what it would have. A closed engine is not retried; a poisoned one refuses
    /// every checkpoint until it is reopened, so it is reported and not retried.
    func reportCheckpointFailure(_ error: StorageError, during what: String) {
        if error == .closed { return }
        options.reportFailure?("\(path): \(what) failed: \(error)\(error == .poisoned ? "" : "; it will be retried")")
        guard error != .poisoned, let delay = options.idleCheckpointDelay else { return }
        let schedule = idle.withLock { state in
            if state.scheduled { return false }
            state.scheduled = true
            return true
        }
        if schedule { scheduleIdleCheck(after: delay) }
    }
}
