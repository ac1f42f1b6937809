import Foundation
import YapDBCrypto

/// YapDatabase's key block: returns the bytes of a key, a salt or a key spec when the database
/// opens (so the app can fetch it from the keychain only then). `@Sendable`: YapDB may call it
/// on the thread that opens the database, which need not be the one that set it.
public typealias YapDatabaseCipherKeyBlock = @Sendable () -> Data

/// YapDatabase's `YapDatabaseCipherCompatability` (SQLCipher's `PRAGMA cipher_compatibility`).
/// Accepted so that code written for YapDatabase compiles; YapDB's format has one cipher
/// layout, so every value means the same (docs/format.md §12).
public enum YapDatabaseCipherCompatability: Int, Sendable, Hashable, CaseIterable {
    /// No compatibility setting (YapDatabase's default).
    case `default` = 0
    /// SQLCipher 3's settings; no effect in YapDB.
    case version3 = 3
    /// SQLCipher 4's settings; no effect in YapDB.
    case version4 = 4
}

/// A key for an encrypted database (a YapDB addition, preferred over the key blocks in new code).
///
/// The key never opens the files directly: it wraps the database's random data key, so
/// changing it (`YapDatabase.rekey(to:)`) rewrites one key slot and no data
/// (docs/format.md §12). `description` never shows the key.
public enum YapDatabaseCipherKey: Sendable, Hashable, CustomStringConvertible {
    /// 32 random bytes (more are allowed; the first 32 are used, so a 48-byte SQLCipher key
    /// spec works). No key derivation runs: the fastest open, for keys kept in a keychain.
    case raw(Data)
    /// A passphrase, stretched with PBKDF2-HMAC-SHA512 over a random salt kept in the
    /// database's key slot, with ``YapDatabaseOptions/kdfIterNumber`` iterations (256,000 when
    /// it is 0: SQLCipher 4's default) when the database is created, and the count the slot
    /// records at every later open.
    case passphrase(String)

    public var description: String {
        switch self {
        case .raw: return "YapDatabaseCipherKey.raw(<hidden>)"
        case .passphrase: return "YapDatabaseCipherKey.passphrase(<hidden>)"
        }
    }

    /// The key as the encryption layer takes it.
    var userKey: UserKey {
        switch self {
        case .raw(let bytes): return .raw([UInt8](bytes))
        case .passphrase(let text): return .passphrase(Array(text.utf8))
        }
    }
}

/// The cipher settings behind `YapDatabaseOptions`' properties. Blocks compare by presence
/// (closures have no equality); everything else by value.
struct CipherValues: Sendable, Equatable {
    var key: YapDatabaseCipherKey?
    var keyBlock: YapDatabaseCipherKeyBlock?
    var saltBlock: YapDatabaseCipherKeyBlock?
    var keySpecBlock: YapDatabaseCipherKeyBlock?
    var compatability = YapDatabaseCipherCompatability.default
    var kdfIterNumber: UInt = 0
    var defaultKDFIterNumber: UInt = 0
    var pageSize: UInt = 0
    var unencryptedHeaderLength: UInt = 0

    static func == (a: CipherValues, b: CipherValues) -> Bool {
        a.key == b.key && (a.keyBlock == nil) == (b.keyBlock == nil) && (a.saltBlock == nil) == (b.saltBlock == nil)
            && (a.keySpecBlock == nil) == (b.keySpecBlock == nil) && a.compatability == b.compatability
            && a.kdfIterNumber == b.kdfIterNumber && a.defaultKDFIterNumber == b.defaultKDFIterNumber
            && a.pageSize == b.pageSize && a.unencryptedHeaderLength == b.unencryptedHeaderLength
    }

    /// Whether any key source is set: the database is (to be) encrypted.
    var requestsEncryption: Bool { key != nil || keyBlock != nil || keySpecBlock != nil }

    /// The key to open with, asked for once: ``YapDatabaseOptions/cipherKey`` first, then the
    /// key spec block (a raw key), then the key block (a passphrase, as SQLCipher takes it);
    /// nil when none is set (a plain database).
    ///
    /// - Throws: `keyUnavailable` when the source that is set gives no key (a block returning
    ///   empty data, as a keychain does while the device is locked; an empty raw key or passphrase).
    func resolvedKey() throws(YapDatabaseError) -> UserKey? {
        if let key {
            switch key {
            case .raw(let bytes) where bytes.isEmpty: throw .keyUnavailable
            case .passphrase(let text) where text.isEmpty: throw .keyUnavailable
            default: return key.userKey
            }
        }
        if let keySpecBlock {
            let spec = keySpecBlock()
            guard !spec.isEmpty else { throw .keyUnavailable }
            return .raw([UInt8](spec))
        }
        if let keyBlock {
            let passphrase = keyBlock()
            guard !passphrase.isEmpty else { throw .keyUnavailable }
            return .passphrase([UInt8](passphrase))
        }
        return nil
    }

    /// PBKDF2 iterations for a new passphrase database: `kdfIterNumber`, else
    /// `cipherDefaultkdfIterNumber`, else 256,000; at most `CipherFormat.maxKDFIterations`.
    var creationIterations: UInt32 {
        let asked = kdfIterNumber > 0 ? kdfIterNumber : (defaultKDFIterNumber > 0 ? defaultKDFIterNumber : UInt(CipherFormat.defaultKDFIterations))
        return UInt32(min(asked, UInt(CipherFormat.maxKDFIterations)))
    }
}

extension YapDatabaseOptions {
    /// What the key blocks read as before they are set: a block returning empty data.
    static let emptyKeyBlock: YapDatabaseCipherKeyBlock = { Data() }

    /// The key of an encrypted database (a YapDB addition; prefer it to ``cipherKeyBlock``).
    /// Default nil: the database is not encrypted.
    ///
    /// Set it before creating a database to create it encrypted (every record, checkpoint and
    /// index page sealed with AES-256-GCM; docs/format.md §12), and give the same key at every
    /// open. It takes precedence over ``cipherKeySpecBlock`` and ``cipherKeyBlock``. An empty
    /// key is ``YapDatabaseError/keyUnavailable``; a key that does not open the database is
    /// ``YapDatabaseError/wrongKey``. Neither changes any file, whatever ``corruptAction`` says.

    public var cipherKey: YapDatabaseCipherKey? {
        get { storage.withLock { $0.cipher.key } }
        set { storage.withLock { $0.cipher.key = newValue } }
    }

    /// YapDatabase's passphrase block: returns the passphrase (any bytes; UTF-8 for text), asked
    /// for once per open, so the app can keep it in the keychain. YapDB stretches it with
    /// PBKDF2-HMAC-SHA512 (``kdfIterNumber`` iterations when the database is created) and uses
    /// the result to unwrap the database's data key, as ``YapDatabaseCipherKey/passphrase(_:)``
    /// does. Setting it makes the database encrypted; returning empty data (the keychain is
    /// locked) fails the open with ``YapDatabaseError/keyUnavailable``, changing nothing.
    ///
    /// Reading it before it was set gives a block that returns empty data (the header declares
    /// it non-null).
    public var cipherKeyBlock: YapDatabaseCipherKeyBlock {
        get { storage.withLock { $0.cipher.keyBlock } ?? Self.emptyKeyBlock }
        set { storage.withLock { $0.cipher.keyBlock = newValue } }
    }

    /// YapDatabase's key spec block: returns a raw key (SQLCipher's "key spec": 32 key bytes,
    /// usually followed by a 16-byte salt), asked for once per open, so that no key derivation
    /// runs at launch. YapDB uses the first 32 bytes as the key that wraps the data key (as
    /// ``YapDatabaseCipherKey/raw(_:)``) and ignores the rest: its salts live in the files'
    /// plaintext headers. It takes precedence over ``cipherKeyBlock``; unlike YapDatabase it
    /// needs no ``cipherUnencryptedHeaderLength``. Empty data, or fewer than 32 bytes, fails the
    /// open (``YapDatabaseError/keyUnavailable``, ``YapDatabaseError/wrongKey``).
    public var cipherKeySpecBlock: YapDatabaseCipherKeyBlock {
        get { storage.withLock { $0.cipher.keySpecBlock } ?? Self.emptyKeyBlock }
        set { storage.withLock { $0.cipher.keySpecBlock = newValue } }
    }

    /// YapDatabase's salt block (SQLCipher's `PRAGMA cipher_salt`). In YapDB it gives the
    /// 16-byte PBKDF2 salt of a new passphrase database's key slot instead of a random one;
    /// the slot keeps it in the main file's plaintext header, so later opens never need it
    /// and ignore it. Any other length is ignored (a random salt is drawn). Reading it before
    /// it was set gives a block that returns empty data.
    public var cipherSaltBlock: YapDatabaseCipherKeyBlock {
        get { storage.withLock { $0.cipher.saltBlock } ?? Self.emptyKeyBlock }
        set { storage.withLock { $0.cipher.saltBlock = newValue } }
    }

    /// YapDatabase's `cipherCompatability`; accepted, no effect: YapDB's encrypted format has
    /// one layout. Default ``YapDatabaseCipherCompatability/default``.
    public var cipherCompatability: YapDatabaseCipherCompatability {
        get { storage.withLock { $0.cipher.compatability } }
        set { storage.withLock { $0.cipher.compatability = newValue } }
    }

    /// PBKDF2 iterations for a passphrase (SQLCipher's `kdf_iter`), used when an encrypted
    /// database is created from ``cipherKeyBlock`` or ``YapDatabaseCipherKey/passphrase(_:)``.
    /// 0 (the default) means ``cipherDefaultkdfIterNumber``, or 256,000 when that is 0 too;
    /// counts above 10,000,000 act as 10,000,000. The key slot records the count, so later
    /// opens use the recorded one and ignore this (unlike SQLCipher, changing it cannot make a
    /// database unreadable). Each open of a passphrase database runs the derivation once
    /// (about 0.1 s at 256,000 on a phone); a raw key skips it.
    public var kdfIterNumber: UInt {
        get { storage.withLock { $0.cipher.kdfIterNumber } }
        set { storage.withLock { $0.cipher.kdfIterNumber = newValue } }
    }

    /// SQLCipher's `cipher_default_kdf_iter`: the PBKDF2 iterations used when
    /// ``kdfIterNumber`` is 0. Default 0 (256,000 then applies).
    public var cipherDefaultkdfIterNumber: UInt {
        get { storage.withLock { $0.cipher.defaultKDFIterNumber } }
        set { storage.withLock { $0.cipher.defaultKDFIterNumber = newValue } }
    }

    /// SQLCipher's `cipher_page_size`; accepted, no effect. YapDB seals each log record and
    /// each index page on its own (an index page's size is set when the database is created),
    /// so there is no cipher page to size. Default 0.
    public var cipherPageSize: UInt {
        get { storage.withLock { $0.cipher.pageSize } }
        set { storage.withLock { $0.cipher.pageSize = newValue } }
    }

    /// SQLCipher's `cipher_plaintext_header_size`; accepted, no effect. Every YapDB file keeps
    /// its header in the clear whatever this says (magic, version, database id, file number,
    /// salts: nothing secret; docs/format.md §12), so recovery and tools can classify files
    /// without the key. Apps set it for iOS, which must recognize a SQLite WAL database to let
    /// a suspended app keep its lock; YapDB's lock is on its own `NAME-lock` file. Default 0.
    public var cipherUnencryptedHeaderLength: UInt {
        get { storage.withLock { $0.cipher.unencryptedHeaderLength } }
        set { storage.withLock { $0.cipher.unencryptedHeaderLength = newValue } }
    }
}
