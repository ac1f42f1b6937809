import Testing
import YapDBStorage
@testable import YapDBEngine
import TestSupport

/// `YAPDB_TEST_INDEX_READ_MODE` (read by the test helpers only) parses as documented, and the
/// engine tests' options carry the mode it names.
@Suite struct TestEnvironmentTests {
    @Test func theIndexReadModeVariableParses() {
        #expect(TestEnvironment.parseIndexReadMode(nil) == nil)
        #expect(TestEnvironment.parseIndexReadMode("") == nil)
        #expect(TestEnvironment.parseIndexReadMode("mapped") == nil)
        #expect(TestEnvironment.parseIndexReadMode("cached:16") == 16)
        #expect(TestEnvironment.parseIndexReadMode("cached:1") == 1)
    }

    @Test func engineTestOptionsFollowTheEnvironment() throws {
        let options = EngineTesting.options(try EngineTesting.simulated())
        let expected: IndexReadMode = TestEnvironment.cachedIndexPages.map { .cached(pages: $0) } ?? .mapped
        #expect(options.indexReadMode == expected)
        #expect(EngineOptions().indexReadMode == .mapped, "the engine's own default never reads the environment")
    }
}
