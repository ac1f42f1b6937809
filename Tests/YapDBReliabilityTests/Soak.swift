import Foundation
import Synchronization

/// Runs one writer and several readers on their own threads until the writer returns or the
/// time is up, counting invariant checks and collecting violations (concurrency soaks, issue 5
/// item 5). Threading: every member is safe from any thread (atomics and a `Mutex`).
final class Soak: Sendable {
    let seconds: Double
    private let stopped = Atomic<Bool>(false)
    private let checkCount = Atomic<Int>(0)
    private let violations = Mutex<[String]>([])

    init(seconds: Double) { self.seconds = seconds }

    var isStopped: Bool { stopped.load(ordering: .acquiring) }
    var checks: Int { checkCount.load(ordering: .relaxed) }
    var problems: [String] { violations.withLock { $0 } }

    /// Records one invariant check; `holds` false records `message` as a violation.
    func check(_ holds: Bool, _ message: @autoclosure () -> String) {
        checkCount.add(1, ordering: .relaxed)
        if !holds { violations.withLock { if $0.count < 20 { $0.append(message()) } } }
    }

    /// Runs `writer` (which should loop until `isStopped`, or return early) and each reader
    /// (looping until `isStopped`) on their own threads; stops them after `seconds` or when
    /// the writer returns; returns the wall time in seconds.
    @discardableResult
    func run(writer: @escaping @Sendable () -> Void, readers: [@Sendable () -> Void]) -> Double {
        let start = Date()
        let group = DispatchGroup()
        let writerDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread { writer(); writerDone.signal() }
        for reader in readers {
            group.enter()
            Thread.detachNewThread { reader(); group.leave() }
        }
        let finished = writerDone.wait(timeout: .now() + seconds) == .success
        stopped.store(true, ordering: .releasing)
        if !finished { writerDone.wait() }
        group.wait()
        return Date().timeIntervalSince(start)
    }
}

/// An integer shared between threads (an `Atomic` in a class, so closures can capture it).
final class SharedCounter: Sendable {
    private let storage = Atomic<Int>(0)
    var value: Int { storage.load(ordering: .acquiring) }
    func set(_ value: Int) { storage.store(value, ordering: .releasing) }
}
