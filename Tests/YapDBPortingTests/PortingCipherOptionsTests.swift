import Foundation
import XCTest
import YapDB

/// The cipher options of YapDatabaseOptions.h (its SQLCipher build) set the way apps that kept
/// private data set them: a passphrase from the keychain (ChatSecure), a raw key spec with a
/// salt and a plaintext header (Signal), a compatibility level.
final class PortingCipherOptionsTests: PortingTestCase {
    func testSignalAndChatSecureStyleSettingsCompileAndStick() {
        let keychain = Data(repeating: 0x5A, count: 48)
        let options = YapDatabaseOptions()
        options.corruptAction = .fail
        options.cipherKeyBlock = { Data("passphrase from the keychain".utf8) }
        options.cipherKeySpecBlock = { keychain }
        options.cipherSaltBlock = { keychain.suffix(16) }
        options.cipherUnencryptedHeaderLength = 32
        options.kdfIterNumber = 64_000
        options.cipherDefaultkdfIterNumber = 64_000
        options.cipherPageSize = 4096
        options.cipherCompatability = .version3
        let block: YapDatabaseCipherKeyBlock = options.cipherKeySpecBlock
        XCTAssertEqual(block(), keychain)
        XCTAssertEqual(options.cipherSaltBlock().count, 16)
        XCTAssertEqual(options.cipherUnencryptedHeaderLength, 32)
        XCTAssertEqual(options.kdfIterNumber, 64_000)
        XCTAssertEqual(options.cipherCompatability, .version3)
        // The Swift-native form beside them.
        options.cipherKey = .raw(keychain)
        XCTAssertEqual(options.cipherKey, .raw(keychain))
    }
}
