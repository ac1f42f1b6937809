#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import YapDBStorage
import YapDBSimulatedDisk

/// Creating the main file on a disk that cannot hold it.
@Suite struct MainFileCreateTests {
    /// Bug (found by the reliability harness's disk-full row): a creation that failed for
    /// space left `NAME-creating` behind, taking space on a disk that was already full.
    @Test(arguments: [Fault.Effect.error(ENOSPC), .shortWrite(ENOSPC), .syncFailsMarkingClean])
    func aFailedCreationLeavesNoFile(effect: Fault.Effect) throws {
        let disk = try makeDisk()
        disk.inject(Fault(effect == .syncFailsMarkingClean ? .sync : .write, effect: effect))
        #expect(throws: StorageError.self) { _ = try MainFile.create(at: "/db/main", fileSystem: disk) }
        #expect(try disk.listDirectory("/db").isEmpty)
    }
}
