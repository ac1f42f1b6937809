// Fault scripts for the simulated disk: which call fails, when, and how.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import YapDBStorage

/// A scripted failure of one kind of call on a `SimulatedDisk`.
///
/// A fault counts the calls of its `call` kind made after it is injected (only those whose
/// path contains `pathContains`, when set; a rename matches when either path does). The
/// `nth` such call (1-based) fails with `effect`; a `persistent` fault also fails every later
/// matching call, a one-shot fault is then discarded. When several faults fire on the same
/// call, the one injected first decides the effect and every one-shot fault that fired is
/// discarded.
package struct Fault: Sendable, Equatable, CustomStringConvertible {
    /// The kind of call a fault applies to.
    package enum Call: String, Sendable, Equatable, CaseIterable {
        case write, sync, syncDirectory, truncate, rename, remove, open, read, map, listDirectory, lock
    }

    /// What the failing call does.
    package enum Effect: Sendable, Equatable {
        /// The call changes nothing and throws `errno` (`EIO`, `ENOSPC`, `EFBIG`, …).
        case error(Int32)
        /// A write lands a seeded-length prefix (shorter than the whole, possibly empty) and
        /// then throws `errno`. On any other call it acts as `.error(errno)`.
        case shortWrite(Int32)
        /// A sync throws `EIO` and the file's pending writes are dropped without reaching the
        /// durable image, as Linux marks pages clean after a writeback error; reads still see
        /// them until a power cut. On any other call it acts as `.error(EIO)`.
        case syncFailsMarkingClean
    }

    package var call: Call
    /// Which matching call fails first, counting from 1 at the moment of injection.
    package var nth: Int
    /// Whether every matching call from the `nth` on fails (otherwise only the `nth`).
    package var persistent: Bool
    /// Only calls whose path contains this substring count and fail; `nil` matches all.
    package var pathContains: String?
    package var effect: Effect

    /// - Parameters:
    ///   - call: the kind of call to fail.
    ///   - nth: the matching call that fails first, 1-based (values below 1 act as 1).
    ///   - persistent: keep failing every matching call from then on.
    ///   - pathContains: restrict to paths containing this substring.
    ///   - effect: what the failing call does.
    package init(_ call: Call, nth: Int = 1, persistent: Bool = false,
                 pathContains: String? = nil, effect: Effect = .error(EIO)) {
        self.call = call
        self.nth = max(1, nth)
        self.persistent = persistent
        self.pathContains = pathContains
        self.effect = effect
    }

    package var description: String {
        let which = persistent ? "from call \(nth) on" : "call \(nth)"
        let filter = pathContains.map { " on paths containing \"\($0)\"" } ?? ""
        return "fault \(call.rawValue) \(which)\(filter): \(effect)"
    }
}

/// A fault and how many matching calls it has seen.
struct ArmedFault {
    var fault: Fault
    var seen = 0
}

extension SimulatedDisk.State {
    /// Advances every fault matching a `call` on `paths` and returns the effect to apply, if
    /// any fires. Discards fired one-shot faults.
    mutating func firingFault(_ call: Fault.Call, _ paths: String...) -> Fault.Effect? {
        callCounts[call, default: 0] += 1
        var chosen: Fault.Effect?
        var index = 0
        while index < faults.count {
            let fault = faults[index].fault
            let matches = fault.call == call
                && (fault.pathContains.map { filter in paths.contains { $0.contains(filter) } } ?? true)
            guard matches else { index += 1; continue }
            faults[index].seen += 1
            let seen = faults[index].seen
            let fires = fault.persistent ? seen >= fault.nth : seen == fault.nth
            guard fires else { index += 1; continue }
            record("\(fault) fires on \(call.rawValue)(\(paths.joined(separator: " -> ")))")
            if chosen == nil { chosen = fault.effect }
            if fault.persistent { index += 1 } else { faults.remove(at: index) }
        }
        return chosen
    }

    /// The errno a fault effect throws.
    static func errno(of effect: Fault.Effect) -> Int32 {
        switch effect {
        case .error(let code), .shortWrite(let code): code
        case .syncFailsMarkingClean: EIO
        }
    }
}
