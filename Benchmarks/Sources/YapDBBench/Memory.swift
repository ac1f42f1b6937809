import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The process's private memory: `RssAnon` of /proc/self/status (anonymous pages resident:
/// heap, stacks, private mappings; not the file pages of a memory map or the page cache), in
/// bytes. Nil where there is no /proc (then the report says n/a). Reads into a fixed buffer, so
/// sampling allocates nothing.
func privateMemoryBytes() -> Int? {
    #if os(Linux)
    let fd = open("/proc/self/status", O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8192) { buffer -> Int? in
        let count = read(fd, buffer.baseAddress, buffer.count)
        guard count > 0 else { return nil }
        let text = UnsafeBufferPointer(rebasing: buffer[0..<count])
        let label = Array("RssAnon:".utf8)
        var i = 0
        while i + label.count <= text.count {
            if text[i] == label[0], text[i..<(i + label.count)].elementsEqual(label) {
                var j = i + label.count
                var kib = 0
                while j < text.count, text[j] == UInt8(ascii: " ") || text[j] == UInt8(ascii: "\t") { j += 1 }
                while j < text.count, text[j] >= UInt8(ascii: "0"), text[j] <= UInt8(ascii: "9") {
                    kib = kib * 10 + Int(text[j] - UInt8(ascii: "0"))
                    j += 1
                }
                return kib * 1024
            }
            i += 1
        }
        return nil
    }
    #else
    return nil
    #endif
}

/// Samples `privateMemoryBytes()` every `intervalMicroseconds` on a background thread until
/// `stop()`, keeping the highest value seen (`RssAnon`, not `VmHWM`, which counts file pages).
final class PeakMemorySampler: Sendable {
    private let peak = Atomic<Int>(0)
    private let running = Atomic<Bool>(true)
    private let finished = Atomic<Bool>(false)

    init(intervalMicroseconds: UInt32 = 2_000) {
        peak.store(privateMemoryBytes() ?? 0, ordering: .relaxed)
        let thread = Thread { [self] in
            while running.load(ordering: .acquiring) {
                if let now = privateMemoryBytes(), now > peak.load(ordering: .relaxed) { peak.store(now, ordering: .relaxed) }
                usleep(intervalMicroseconds)
            }
            finished.store(true, ordering: .releasing)
        }
        thread.start()
    }

    /// Stops sampling (waits for the thread's last sample) and returns the peak in bytes.
    func stop() -> Int {
        running.store(false, ordering: .releasing)
        while !finished.load(ordering: .acquiring) { usleep(500) }
        if let now = privateMemoryBytes(), now > peak.load(ordering: .relaxed) { peak.store(now, ordering: .relaxed) }
        return peak.load(ordering: .relaxed)
    }
}
