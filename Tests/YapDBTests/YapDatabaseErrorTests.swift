import Foundation
import Testing
@testable import YapDB

@Suite struct YapDatabaseErrorTests {
    @Test func casesCompareByValue() {
        #expect(YapDatabaseError.corrupted(offset: 10, reason: "crc") == .corrupted(offset: 10, reason: "crc"))
        #expect(YapDatabaseError.corrupted(offset: 10, reason: "crc") != .corrupted(offset: 11, reason: "crc"))
        #expect(YapDatabaseError.unsupportedVersion(found: 2, supported: 1) != .unsupportedVersion(found: 3, supported: 1))
        #expect(YapDatabaseError.io(errno: 5, operation: "pwrite") == .io(errno: 5, operation: "pwrite"))
        #expect(YapDatabaseError.locked != .alreadyOpen)
        #expect(YapDatabaseError.serialization(collection: "c", key: "k", underlying: "u")
                != .serialization(collection: "c", key: "k2", underlying: "u"))
    }

    @Test func descriptionsNameTheFacts() {
        #expect(YapDatabaseError.unsupportedVersion(found: 7, supported: 1).description.contains("7"))
        let corrupted = YapDatabaseError.corrupted(offset: 4096, reason: "bad checksum").description
        #expect(corrupted.contains("4096") && corrupted.contains("bad checksum"))
        let io = YapDatabaseError.io(errno: 28, operation: "fdatasync").description
        #expect(io.contains("fdatasync") && io.contains("28"))
        let ser = YapDatabaseError.serialization(collection: "people", key: "alice", underlying: "boom").description
        #expect(ser.contains("people") && ser.contains("alice") && ser.contains("boom"))
        #expect(YapDatabaseError.poisoned.description.contains("reopen"))
        #expect(YapDatabaseError.closed.localizedDescription == YapDatabaseError.closed.description)
        let all: [YapDatabaseError] = [.fileNotFound, .notADatabase, .unsupportedVersion(found: 2, supported: 1),
                                       .corrupted(offset: 0, reason: "r"), .locked, .alreadyOpen, .readOnly, .diskFull,
                                       .io(errno: 1, operation: "o"), .valueTooLarge,
                                       .serialization(collection: "", key: "", underlying: ""), .closed, .poisoned,
                                       .invalidQuery(offset: 0, reason: "r")]
        #expect(Set(all.map(\.description)).count == all.count)
    }

    @Test func typedThrowsCarryTheCase() {
        func fail() throws(YapDatabaseError) { throw .diskFull }
        do { try fail() } catch { #expect(error == .diskFull) }
    }
}
