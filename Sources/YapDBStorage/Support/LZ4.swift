#if canImport(Compression)
import Compression
#else
import CLZ4
#endif

/// LZ4 block compression: the system's liblz4 on Linux; on Apple platforms (where iOS, tvOS,
/// watchOS and visionOS have no liblz4) the Compression framework's `COMPRESSION_LZ4_RAW`, which
/// reads and writes the same bare LZ4 block format. Pure functions, safe from any thread.
package enum LZ4 {
    /// The largest input LZ4 accepts (liblz4's `LZ4_MAX_INPUT_SIZE`).
    static let maxInputSize = 0x7E00_0000

    /// The most bytes compressing `count` bytes can produce (liblz4's `LZ4_compressBound`).
    static func compressBound(_ count: Int) -> Int { count + count / 255 + 16 }

    /// Compresses `input`. Returns nil when the compressor fails or the input is larger than it accepts.
    package static func compress(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        guard input.count <= maxInputSize, let source = input.baseAddress else {
            return input.isEmpty ? [] : nil
        }
        let bound = compressBound(input.count)
        var output = [UInt8](repeating: 0, count: bound)
        let written = output.withUnsafeMutableBytes { out -> Int in
            #if canImport(Compression)
            compression_encode_buffer(out.baseAddress!.assumingMemoryBound(to: UInt8.self), bound,
                                      source.assumingMemoryBound(to: UInt8.self), input.count, nil, COMPRESSION_LZ4_RAW)
            #else
            Int(LZ4_compress_default(
                source.assumingMemoryBound(to: CChar.self),
                out.baseAddress!.assumingMemoryBound(to: CChar.self),
                Int32(input.count), Int32(bound)))
            #endif
        }
        guard written > 0, written <= bound else { return nil }
        output.removeSubrange(written...)
        return output
    }

    /// The most bytes an LZ4 block of `blockSize` bytes can decompress to. A sequence's match
    /// length grows by at most 255 per input byte, so no block expands more than 255:1.
    package static func maxDecompressedSize(blockSize: Int) -> Int {
        blockSize <= Int(Int32.max) ? blockSize * 255 : Int.max
    }

    /// Decompresses an LZ4 block that must produce exactly `rawLength` bytes
    /// (`rawLength` already checked against the limits by the caller). Returns nil on any
    /// malformed input, without allocating when `rawLength` is more than the block can hold
    /// (`maxDecompressedSize`): a declared length read from disk never sizes an allocation
    /// beyond 255 times the bytes actually there. liblz4's safe decoder never reads or writes
    /// out of bounds.
    package static func decompress(_ input: UnsafeRawBufferPointer, rawLength: Int) -> [UInt8]? {
        guard rawLength >= 0, rawLength <= Int(Int32.max), input.count <= Int(Int32.max),
              rawLength <= maxDecompressedSize(blockSize: input.count) else { return nil }
        if rawLength == 0 { return input.count == 1 && input[0] == 0 ? [] : (input.isEmpty ? [] : nil) }
        guard let source = input.baseAddress else { return nil }
        #if canImport(Compression)
        // One spare byte: a block that decodes to more than `rawLength` fills it and is refused
        // (the framework truncates at the buffer's end instead of failing).
        var output = [UInt8](repeating: 0, count: rawLength + 1)
        let produced = output.withUnsafeMutableBytes { out in
            compression_decode_buffer(out.baseAddress!.assumingMemoryBound(to: UInt8.self), rawLength + 1,
                                      source.assumingMemoryBound(to: UInt8.self), input.count, nil, COMPRESSION_LZ4_RAW)
        }
        guard produced == rawLength else { return nil }
        output.removeLast()
        return output
        #else
        var output = [UInt8](repeating: 0, count: rawLength)
        let produced = output.withUnsafeMutableBytes { out in
            LZ4_decompress_safe(
                source.assumingMemoryBound(to: CChar.self),
                out.baseAddress!.assumingMemoryBound(to: CChar.self),
                Int32(input.count), Int32(rawLength))
        }
        return produced == Int32(rawLength) ? output : nil
        #endif
    }
}
