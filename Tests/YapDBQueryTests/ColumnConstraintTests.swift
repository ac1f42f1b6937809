import TestSupport
import Testing
@testable import YapDBQuery

/// The intervals a planner scans: checked against the evaluator over many values, so a range
/// scan plus the residual filter returns exactly the rows a full scan does.
@Suite struct ColumnConstraintTests {
    static let values: [SQLValue] = [
        .null, .integer(.min), .integer(-5), .integer(0), .integer(1), .integer(3), .integer(12), .integer(.max),
        .real(-0.5), .real(2.5), .real(3.0), .real(1e20), .real(-.infinity), .text(""), .text("12"), .text("3.0"),
        .text("a"), .text("abc"), .text("b"), .text("é"), .blob([]), .blob([0x41]),
    ]
    static let literals: [SQLValue] = [.null, .integer(3), .integer(-5), .real(3.0), .real(2.5), .text("12"), .text("3"),
                                       .text("a"), .text("abc "), .blob([0x41]), .integer(12)]

    func randomPredicate(_ random: inout SeededRandom, depth: Int) -> QueryExpression {
        func literal() -> QueryOperand { .literal(Self.literals[Int(random.next() % UInt64(Self.literals.count))]) }
        let c = QueryOperand.column("c")
        if depth > 0, random.next() % 3 == 0 {
            let left = randomPredicate(&random, depth: depth - 1)
            let right = randomPredicate(&random, depth: depth - 1)
            switch random.next() % 3 {
            case 0: return .and(left, right)
            case 1: return .or(left, right)
            default: return .not(left)
            }
        }
        switch random.next() % 8 {
        case 0, 1:
            let op = ComparisonOperator.allCases[Int(random.next() % UInt64(ComparisonOperator.allCases.count))]
            return random.next() % 4 == 0 ? .comparison(literal(), op, c) : .comparison(c, op, literal())
        case 2: return .isNull(c, negated: random.next() % 2 == 0)
        case 3: return .between(c, low: literal(), high: literal(), negated: random.next() % 2 == 0)
        case 4: return .inList(c, (0..<Int(random.next() % 4)).map { _ in literal() }, negated: random.next() % 2 == 0)
        case 5: return .comparison(.column("other"), .equal, literal())
        case 6: return .like(c, pattern: .literal(.text("a%")), escape: nil, negated: false)
        default: return .comparison(c, .greater, .column("other"))
        }
    }

    @Test(arguments: ColumnType.allCases)
    func intervalsHoldEveryMatchingValue(_ type: ColumnType) {
        let evaluator = QueryEvaluator(columns: ["c": type, "other": .integer])
        var random = SeededRandom(seed: 0xC0 + UInt64(ColumnType.allCases.firstIndex(of: type)!))
        var constrained = 0
        var exact = 0
        for _ in 0..<3000 {
            let expression = randomPredicate(&random, depth: 2)
            let prepared = evaluator.prepare(expression, columnOrder: ["other", "c"])
            for raw in Self.values {
                for other in [SQLValue.null, .integer(3), .integer(12)] {
                    let row = ["c": raw.applying(type), "other": other]
                    #expect(prepared.matches([other, raw.applying(type)]) == evaluator.evaluate(where: expression, row: row), "\(expression)")
                }
            }
            guard let constraint = expression.constraint(on: "c", type: type) else { continue }
            constrained += 1
            if constraint.isExact { exact += 1 }
            #expect(constraint.intervals == constraint.intervals.normalized())
            for raw in Self.values {
                let stored = raw.applying(type)
                for other in [SQLValue.null, .integer(3), .integer(12)] {
                    let matches = evaluator.evaluate(where: expression, row: ["c": stored, "other": other])
                    let inside = constraint.intervals.contains(stored)
                    if matches { #expect(inside, "\(expression) matched \(stored) outside \(constraint.intervals)") }
                    if constraint.isExact, inside, !matches {
                        Issue.record("\(expression) is exact but \(stored) in \(constraint.intervals) does not match")
                    }
                }
            }
        }
        // The generator exercised both kinds.
        #expect(constrained > 500 && exact > 200)
    }

    @Test func examples() throws {
        func constraint(_ text: String, _ type: ColumnType = .integer) throws -> ColumnConstraint? {
            try ParsedQuery(parsing: "WHERE " + text, columns: ["c": type, "d": .text]).bind([]).whereClause?.constraint(on: "c", type: type)
        }
        #expect(try constraint("c = 5") == ColumnConstraint(intervals: [.point(.integer(5))], isExact: true))
        // The literal gets the column's affinity: '5' is the integer 5 for an INTEGER column.
        #expect(try constraint("c = '5'") == ColumnConstraint(intervals: [.point(.integer(5))], isExact: true))
        #expect(try constraint("c = 5", .text) == ColumnConstraint(intervals: [.point(.text("5"))], isExact: true))
        #expect(try constraint("c > 3 AND c <= 9")?.intervals
                == [ValueInterval(lower: .integer(3), lowerInclusive: false, upper: .integer(9))])
        #expect(try constraint("c < 3")?.intervals == [ValueInterval(lower: .null, lowerInclusive: false, upper: .integer(3), upperInclusive: false)])
        #expect(try constraint("c IN (3, 1, 2, 3)")?.intervals == [.point(.integer(1)), .point(.integer(2)), .point(.integer(3))])
        #expect(try constraint("c IS NULL")?.intervals == [.point(.null)])
        #expect(try constraint("c = NULL")?.intervals == [])
        #expect(try constraint("c NOT IN (1, NULL)")?.intervals == [])
        #expect(try constraint("c = 1 AND d = 'x'") == ColumnConstraint(intervals: [.point(.integer(1))], isExact: false))
        #expect(try constraint("c = 1 OR d = 'x'") == nil)
        #expect(try constraint("c = 1 OR c = 2") == ColumnConstraint(intervals: [.point(.integer(1)), .point(.integer(2))], isExact: true))
        #expect(try constraint("NOT c >= 3")?.intervals == [ValueInterval(lower: .null, lowerInclusive: false, upper: .integer(3), upperInclusive: false)])
        #expect(try constraint("c LIKE 'a%'") == nil)
        #expect(try constraint("c IS NOT NULL")?.intervals == [.notNull])
        #expect(try constraint("c IS NOT NULL")?.isExact == true)
    }
}
