import Testing
import TestSupport

@Test func seededRandomIsDeterministic() {
    var a = SeededRandom(seed: 42), b = SeededRandom(seed: 42)
    #expect(a.next() == b.next())
}
