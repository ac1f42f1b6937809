// Running code with the standard descriptors closed, without touching the rest of the process.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `body` on a new thread that has a private copy of the descriptor table
/// (`unshare(CLONE_FILES)`, Linux only) with descriptors 0, 1 and 2 closed in that copy, and
/// returns its result. Other threads keep their standard streams throughout; descriptors
/// `body` leaves open vanish with the thread's table.
///
/// Returns `nil` where a private table is not available (not Linux, or `unshare` refused), so
/// callers can skip rather than fail.
public func withStandardDescriptorsClosed(_ body: @escaping @Sendable () -> Bool) -> Bool? {
    #if os(Linux)
    final class Job: @unchecked Sendable {
        // Unchecked: `result` is written by the spawned thread before it exits and read by the
        // caller only after `pthread_join`, which orders the two.
        let body: @Sendable () -> Bool
        var result: Bool?
        init(_ body: @escaping @Sendable () -> Bool) { self.body = body }
    }
    typealias Unshare = @convention(c) (Int32) -> Int32
    let job = Job(body)
    var thread = pthread_t()
    let context = Unmanaged.passRetained(job).toOpaque()
    let created = pthread_create(&thread, nil, { raw in
        let job = Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue()
        let clone_files: Int32 = 0x0000_0400
        guard let library = dlopen(nil, RTLD_NOW), let symbol = dlsym(library, "unshare") else { return nil }
        let unshare = unsafeBitCast(symbol, to: Unshare.self)
        guard unshare(clone_files) == 0 else { return nil }
        close(0); close(1); close(2)
        job.result = job.body()
        return nil
    }, context)
    guard created == 0 else {
        Unmanaged<Job>.fromOpaque(context).release()
        return nil
    }
    pthread_join(thread, nil)
    return job.result
    #else
    return nil
    #endif
}
