import YapDBStorage
import YapDBSimulatedDisk

/// The input format of target (b): open options, then files of one database.
///
/// ```
/// options: u8  bits 0-1 corrupt action (0 fail, 1 rename, 2 delete, 3 fail), bit 2 durability
///              normal (else full), bit 3 create if missing, bit 4 no compression, bit 5 compact,
///              bit 6 recompute every header, record, commit and end-record checksum
///              (`ChecksumRepair`) so that mutations reach the decoders behind them,
///              bit 7 read index pages with `pread` through a cache of 4 pages (else mapped)
/// then, until the input ends, files:
///   tag u8 (kind = tag % 8), number u8, length u16 LE (cut to the bytes left), bytes
///   kind 0 main file as is · 1 main file from two 64-byte header copies (placed at 0 and
///   4096, size 8192) · 2 segment NUMBER · 3 checkpoint NUMBER · 4 temporary (NUMBER % 3:
///   creating, checkpoint .tmp, segment .tmp) · 5 a file whose name only starts like ours
///   · 6 index file NUMBER (format 2, §9: header page, then tree pages; the checkpoint's
///   record 22 names the files and tree roots) · 7 nothing (the bytes are skipped)
/// ```
/// The main file is `/fuzz/db`. Every file is written, synced and its directory synced, so the
/// image is what the disk holds after a clean shutdown. With bit 6, an index file gets its
/// header crcs and every page checksum recomputed, and a checkpoint's root record its header
/// and crc, so hostile pages and roots reach the tree and root decoders.
struct RecoveryImage {
    enum Kind: Int {
        case main = 0, mainFromHeaders, segment, checkpoint, temporary, stray, index
    }

    struct File {
        var kind: Kind
        var number: UInt32
        var bytes: [UInt8]
    }

    static let directory = "/fuzz"
    static let mainPath = "/fuzz/db"
    /// What every index file's path starts with.
    static let indexPathPrefix = mainPath + Format.indexInfix

    var corruptAction: Int = 0
    var normalDurability = false
    var createIfMissing = false
    var compression = true
    var compact = false
    var repairChecksums = false
    var cachedIndexPages = false
    var files: [File] = []

    init() {}

    init(decoding input: inout FuzzInput) {
        let options = input.byte()
        corruptAction = Int(options & 3)
        normalDurability = options & 4 != 0
        createIfMissing = options & 8 != 0
        compression = options & 16 == 0
        compact = options & 32 != 0
        repairChecksums = options & 64 != 0
        cachedIndexPages = options & 128 != 0
        while !input.isAtEnd {
            let tag = Int(input.byte())
            let number = UInt32(input.byte())
            let length = min(input.u16(), input.remaining)
            let bytes = input.take(length)
            guard let kind = Kind(rawValue: tag % 8) else { continue }
            files.append(File(kind: kind, number: number, bytes: bytes))
        }
    }

    /// The input bytes that decode to this image (files longer than 65,535 bytes are cut).
    func encoded() -> [UInt8] {
        var out = FuzzOutput()
        out.byte(corruptAction | (normalDurability ? 4 : 0) | (createIfMissing ? 8 : 0) | (compression ? 0 : 16) | (compact ? 32 : 0)
                 | (repairChecksums ? 64 : 0) | (cachedIndexPages ? 128 : 0))
        for file in files {
            let bytes = file.bytes.prefix(0xFFFF)
            out.byte(file.kind.rawValue)
            out.byte(Int(file.number))
            out.u16(bytes.count)
            out.append(Array(bytes))
        }
        return out.bytes
    }

    /// The path and contents of each file on the disk, checksums repaired when asked.
    func placed() -> [(path: String, bytes: [UInt8])] {
        guard repairChecksums else { return unrepaired() }
        return unrepaired().map { path, bytes in
            var bytes = bytes
            ChecksumRepair.repairHeader(&bytes, at: 0)
            if path == Self.mainPath {
                ChecksumRepair.repairHeader(&bytes, at: Format.mainHeaderCopyOffset)
            } else if path.hasPrefix(Self.indexPathPrefix) {
                ChecksumRepair.repairIndexFile(&bytes)
            } else {
                ChecksumRepair.repairRecords(&bytes, from: Format.headerSize)
            }
            return (path, bytes)
        }
    }

    private func unrepaired() -> [(path: String, bytes: [UInt8])] {
        let names = DatabaseFiles(mainPath: Self.mainPath)
        return files.map { file in
            switch file.kind {
            case .main:
                return (Self.mainPath, file.bytes)
            case .mainFromHeaders:
                var image = [UInt8](repeating: 0, count: Format.mainFileSize)
                let first = file.bytes.prefix(Format.headerSize)
                let second = file.bytes.dropFirst(Format.headerSize).prefix(Format.headerSize)
                image.replaceSubrange(0..<first.count, with: first)
                let copy = Format.mainHeaderCopyOffset
                image.replaceSubrange(copy..<(copy + second.count), with: second)
                return (Self.mainPath, image)
            case .segment:
                return (names.segmentPath(file.number), file.bytes)
            case .checkpoint:
                return (names.checkpointPath(file.number), file.bytes)
            case .temporary:
                let path = switch file.number % 3 {
                case 0: Self.mainPath + "-creating"
                case 1: names.checkpointPath(file.number) + ".tmp"
                default: names.segmentPath(file.number) + ".tmp"
                }
                return (path, file.bytes)
            case .stray:
                return (Self.mainPath + "-stray-\(file.number)", file.bytes)
            case .index:
                return (names.indexPath(file.number), file.bytes)
            }
        }
    }

    /// Reads back the files of the database at `mainPath` on `disk` (durable images), as an
    /// image with these options: what seeds are made from.
    static func capture(_ disk: SimulatedDisk, options: RecoveryImage) -> RecoveryImage {
        var image = options
        image.files = []
        let names = DatabaseFiles(mainPath: mainPath)
        if let main = disk.durableBytes(of: mainPath) {
            let copy = Format.mainHeaderCopyOffset
            if main.count == Format.mainFileSize {
                image.files.append(File(kind: .mainFromHeaders, number: 0,
                                        bytes: Array(main[0..<Format.headerSize] + main[copy..<(copy + Format.headerSize)])))
            } else {
                image.files.append(File(kind: .main, number: 0, bytes: main))
            }
        }
        guard let listing = try? names.list(disk) else { return image }
        for number in listing.segments {
            if let bytes = disk.durableBytes(of: names.segmentPath(number)) {
                image.files.append(File(kind: .segment, number: number, bytes: bytes))
            }
        }
        for number in listing.checkpoints {
            if let bytes = disk.durableBytes(of: names.checkpointPath(number)) {
                image.files.append(File(kind: .checkpoint, number: number, bytes: bytes))
            }
        }
        for number in (try? names.listIndexFiles(disk)) ?? [] where number <= UInt8.max {
            if let bytes = disk.durableBytes(of: names.indexPath(number)) {
                image.files.append(File(kind: .index, number: number, bytes: bytes))
            }
        }
        return image
    }
}
