// Only in ThreadSanitizer builds (`make reliability` passes `-Xswiftc -DYAPDB_TSAN`): a stand-in
// for `Synchronization.Mutex` that ThreadSanitizer can see. With Swift 6.3.1 on Linux, TSan does
// not observe the standard Mutex's futex lock, so it reports every access made under one as a
// race (a ten-line program that only appends to a Mutex-guarded array from four threads gets
// dozens of reports; the same program with a pthread mutex gets none — docs/reliability.md).
// `SanitizerMutex` has the same `init`, `withLock` and `withLockIfAvailable` as the standard one, over a
// `pthread_mutex_t`, which TSan intercepts; a module-local `Mutex` typealias (here, and one line
// in each module above that uses `Mutex`) shadows the standard type. Normal builds never see it.
#if YAPDB_TSAN
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a pthread mutex (ThreadSanitizer builds only; see the file comment).
///
/// `@unchecked Sendable`: `value` is read and written only between `pthread_mutex_lock` and
/// `pthread_mutex_unlock` of `mutex`, in `withLock`.
///
/// The value lives in memory of its own, not in a stored property: an `inout` access to a class's
/// stored property is checked for exclusivity at run time, and ThreadSanitizer reported those
/// checks on a `Mutex<Void>` (a zero-sized value) as "Swift access races" between two threads that
/// each held the pthread mutex in turn. Plain memory accesses under the mutex are what TSan is
/// meant to judge, and a real race on the value is still reported as a data race.
package final class SanitizerMutex<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let value = UnsafeMutablePointer<Value>.allocate(capacity: 1)

    package init(_ initialValue: consuming Value) {
        value.initialize(to: initialValue)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    package func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }

    /// `Synchronization.Mutex.withLockIfAvailable`: runs `body` only when the lock is free
    /// now (`pthread_mutex_trylock`), else returns nil without waiting.
    package func withLockIfAvailable<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}

/// Shadows `Synchronization.Mutex` in this module (ThreadSanitizer builds only).
typealias Mutex<Value> = SanitizerMutex<Value>
#endif
