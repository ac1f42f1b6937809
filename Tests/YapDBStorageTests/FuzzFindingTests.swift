#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import YapDBStorage

/// Regression tests for storage bugs the fuzz harness found (inputs in Fuzz/Crashes/).
@Suite struct StorageFuzzFindingTests {
    /// A compressed value record of 45 bytes that declares a 1 GiB raw length.
    static func hugeDeclaredLengthRecord() -> [UInt8] {
        var buffer: [UInt8] = []
        let start = RecordCodec.begin(.object, flags: Format.flagCompressed, in: &buffer)
        buffer.appendVarint(1)          // rowid
        buffer.appendString("c")
        buffer.appendString("k")
        buffer.appendVarint(1 << 30)    // declared raw length: Format.maxValueSize
        buffer.append(contentsOf: [0x10, 0x41])   // a 2-byte LZ4 block ("A")
        _ = RecordCodec.finish(&buffer, start: start)
        return buffer
    }

    static func peakResidentMegabytes() -> Int {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return Int(usage.ru_maxrss) / 1024   // kilobytes on Linux
    }

    /// Fuzz/Crashes/records/lz4-declared-length-huge-allocation: a compressed value's declared
    /// raw length (up to 1 GiB) sized an allocation before LZ4 looked at the block, so 45
    /// bytes on disk cost 1 GiB of memory. Now a length the block cannot hold (LZ4 expands at
    /// most 255:1) is refused before anything is allocated.
    @Test func declaredLengthBeyondWhatTheBlockHoldsIsRefusedWithoutAllocating() throws {
        let record = Self.hugeDeclaredLengthRecord()
        let before = Self.peakResidentMegabytes()
        let outcome: Result<[UInt8], RecordCodec.FrameError> = record.withUnsafeBytes { raw in
            Result { () throws(RecordCodec.FrameError) -> [UInt8] in
                let frame = try RecordCodec.frame(in: raw, at: 0)
                return try RecordCodec.value(of: try RecordCodec.valueRecord(frame, in: raw), in: raw)
            }
        }
        guard case .failure(.invalid(let reason)) = outcome else {
            Issue.record("expected an invalid-record error, got \(outcome)")
            return
        }
        #expect(reason.contains("more than an LZ4 block of 2 bytes can hold"), "\(reason)")
        #expect(Self.peakResidentMegabytes() - before < 256, "decoding 45 bytes must not touch a gigabyte")
        #expect([UInt8](repeating: 0x41, count: 2).withUnsafeBytes { LZ4.decompress($0, rawLength: 1 << 30) } == nil)
        #expect(LZ4.maxDecompressedSize(blockSize: 2) == 510)
    }
}
