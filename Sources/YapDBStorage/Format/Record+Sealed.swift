#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import YapDBCrypto

/// The frame of a record in an encrypted segment or checkpoint (docs/format.md §12, "Sealed
/// units"): `u32 sealed length L` (the plain record's length, in the clear so a scan can frame
/// records), then the plain record of §3 (crc, type, flags, length, payload) sealed for its
/// place: nonce, L bytes of ciphertext, tag.
package enum SealedRecord {
    /// What a frame adds to the plain record: its length and the seal's nonce and tag.
    package static let overhead = Format.sealedRecordLengthSize + CipherFormat.sealOverhead

    /// The frame of `record` (a whole plain record), sealed with a fresh nonce for `address`
    /// (its file and the offset the frame starts at).
    package static func seal(_ record: [UInt8], sealer: UnitSealer, address: UnitAddress) throws(StorageError) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(record.count + overhead)
        frame.appendLE(UInt32(record.count))
        do { frame.append(contentsOf: try sealer.seal(record, at: address)) } catch {
            throw .io(IOFailure(errno: EINVAL, operation: "seal: \(error)", path: ""))
        }
        return frame
    }

    /// The size of the whole frame that starts with `sealedLength` (its first four bytes),
    /// checked before anything is allocated: the plain record holds at least a record header
    /// and at most a maximal payload, and the frame ends within the `bytesLeft` of its file.
    package static func frameSize(sealedLength: UInt32, bytesLeft: Int64, path: String, offset: Int64) throws(StorageError) -> Int {
        let length = Int(sealedLength)
        guard length >= Format.recordHeaderSize, length <= Format.recordHeaderSize + Format.maxRecordPayload else {
            throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): sealed record length \(length) out of range")
        }
        let size = length + overhead
        guard Int64(size) <= bytesLeft else {
            throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): sealed record runs past the end of the file")
        }
        return size
    }

    /// The plain record inside `frame` (a whole frame, as `frameSize` measured it).
    ///
    /// - Throws: `corrupted` at `offset` when the frame's length disagrees with its size or it
    ///   does not authenticate for `address`: its bytes were changed, damaged or torn, or it was
    ///   moved from another place. Recovery classifies it as it does a bad crc (torn tail or
    ///   damage, docs/format.md §5).
    package static func open(_ frame: [UInt8], sealer: UnitSealer, address: UnitAddress, path: String, offset: Int64) throws(StorageError) -> [UInt8] {
        guard frame.count >= overhead else {
            throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): sealed record shorter than its frame")
        }
        let length = frame.withBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt32.self))) }
        guard length + overhead == frame.count else {
            throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): sealed record length disagrees with its frame")
        }
        do {
            return try sealer.open(frame[Format.sealedRecordLengthSize...], at: address)
        } catch {
            throw .corrupted(offset: offset, reason: "\(Paths.fileName(of: path)): sealed record did not authenticate")
        }
    }
}

extension FileHeader {
    /// The address of a unit of this file at `position` (a byte offset, or a page number).
    package func unitAddress(position: UInt64, type: SealedUnitType) -> UnitAddress {
        UnitAddress(databaseUUID: uuid, fileKind: kind.rawValue, fileNumber: fileNumber, position: position, unitType: type)
    }
}
