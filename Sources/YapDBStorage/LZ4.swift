import CLZ4

/// LZ4 block compression through the system's liblz4. Pure functions, safe from any thread.
package enum LZ4 {
    /// Compresses `input`. Returns nil when liblz4 fails or the input is larger than it accepts.
    package static func compress(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        guard input.count <= Int(LZ4_MAX_INPUT_SIZE), let source = input.baseAddress else {
            return input.isEmpty ? [] : nil
        }
        let bound = Int(LZ4_compressBound(Int32(input.count)))
        guard bound > 0 else { return nil }
        var output = [UInt8](repeating: 0, count: bound)
        let written = output.withUnsafeMutableBytes { out in
            LZ4_compress_default(
                source.assumingMemoryBound(to: CChar.self),
                out.baseAddress!.assumingMemoryBound(to: CChar.self),
                Int32(input.count), Int32(bound))
        }
        guard written > 0 else { return nil }
        output.removeSubrange(Int(written)...)
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
        var output = [UInt8](repeating: 0, count: rawLength)
        let produced = output.withUnsafeMutableBytes { out in
            LZ4_decompress_safe(
                source.assumingMemoryBound(to: CChar.self),
                out.baseAddress!.assumingMemoryBound(to: CChar.self),
                Int32(input.count), Int32(rawLength))
        }
        return produced == Int32(rawLength) ? output : nil
    }
}
