#!/usr/bin/env python3
"""Writes SQLiteOracle.swift: what SQLite itself answers for the rows and queries below, so the
YapDBQuery tests can compare the evaluator with SQLite without needing Python or SQLite.

Run from this directory: python3 generate_sqlite_oracle.py > SQLiteOracle.swift
Deterministic (fixed seed); the SQLite version used is written into the output.
"""
import json
import math
import random
import sqlite3

random.seed(11)

COLUMNS = [("i", "INTEGER", ".integer"), ("r", "REAL", ".real"), ("n", "NUMERIC", ".numeric"), ("t", "TEXT", ".text")]

# Raw values as a client would bind them (Python types map to SQLite's storage classes).
POOL = [None, 0, 1, -5, 12, 3.0, 3.5, -0.5, 1e20, 9007199254740993, 9007199254740992.0,
        9223372036854775807, -9223372036854775808, "12", "3.0", " 12 ", "12abc", "abc", "ABC",
        "a", "b", "", "3.0e+5", "é", "É", "a_c", "a%c", "10", "9", "1e400", b"A", b"", b"\x00\xff"]

# Literals as written in SQL text, with the same value in Python (for parameters).
LITERALS = ["NULL", "0", "1", "-5", "12", "3.0", "3.5", "1e20", "9007199254740993", "9007199254740992.0",
            "'12'", "'3.0'", "' 12 '", "'abc'", "'ABC'", "'a'", "'b'", "''", "'é'", "X'41'", "TRUE", "FALSE",
            "-9223372036854775808", "'10'", "'9'", '"abc"', '"12"']
PARAMS = [None, 0, 12, 3.0, 3.5, "12", "abc", "a", "", b"A", -5, 1e20, "3.0"]
PATTERNS = ["'a%'", "'A%'", "'%c'", "'a_c'", "'%'", "'_'", "'1%'", "'12'", "'3.0'", "'%.%'", "'é'", "'É'",
            "'%b%'", "''", "'a\\%c' ESCAPE '\\'", "'%12%'", "NULL", "'1_'"]


def swift_value(v):
    if v is None:
        return ".null"
    if isinstance(v, bool):
        return ".integer(%d)" % int(v)
    if isinstance(v, int):
        return ".integer(%d)" % v if v != -9223372036854775808 else ".integer(.min)"
    if isinstance(v, float):
        if math.isinf(v):
            return ".real(.infinity)" if v > 0 else ".real(-.infinity)"
        return ".real(%r)" % v
    if isinstance(v, str):
        return ".text(%s)" % json.dumps(v, ensure_ascii=False)
    if isinstance(v, bytes):
        return ".blob([%s])" % ", ".join(str(b) for b in v)
    raise ValueError(v)


def spelled(column):
    """A column name as a client may write it: bare, in either case, or quoted three ways."""
    return random.choice([column, column, column.upper(), '"%s"' % column, "[%s]" % column, "`%s`" % column])


def operand(params):
    roll = random.random()
    if roll < 0.45:
        return spelled(random.choice(COLUMNS)[0])
    if roll < 0.85:
        return random.choice(LITERALS)
    params.append(random.choice(PARAMS))
    return "?"


def predicate(params, depth):
    if depth > 0 and random.random() < 0.35:
        left = predicate(params, depth - 1)
        right = predicate(params, depth - 1)
        join = random.choice(["AND", "OR"])
        text = "(%s) %s (%s)" % (left, join, right) if random.random() < 0.5 else "%s %s %s" % (left, join, right)
        return ("NOT " + text) if random.random() < 0.15 else text
    column = spelled(random.choice(COLUMNS)[0])
    kind = random.randrange(11)
    if kind <= 2:
        op = random.choice(["=", "==", "!=", "<>", "<", "<=", ">", ">="])
        if random.random() < 0.2:
            return "%s %s %s" % (operand(params), op, column)
        return "%s %s %s" % (column, op, operand(params))
    if kind == 3:
        return "%s IS %sNULL" % (column, random.choice(["", "NOT "]))
    if kind == 4:
        return "%s %sBETWEEN %s AND %s" % (column, random.choice(["", "NOT "]), operand(params), operand(params))
    if kind == 5:
        items = [operand(params) for _ in range(random.randrange(0, 4))]
        return "%s %sIN (%s)" % (column, random.choice(["", "NOT "]), ", ".join(items))
    if kind == 6:
        return "%s %sLIKE %s" % (column, random.choice(["", "NOT "]), random.choice(PATTERNS))
    if kind == 7:
        return "%s IS %s%s" % (column, random.choice(["", "NOT ", "DISTINCT FROM ", "NOT DISTINCT FROM "]), operand(params))
    if kind == 8:
        return "%s IS %s%s" % (column, random.choice(["", "NOT "]), random.choice(["TRUE", "FALSE"]))
    if kind == 9:
        return "(%s) %s %s" % (column, random.choice(["=", "<", ">="]), operand(params))
    return random.choice(["", "NOT "]) + column


def main():
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t(%s)" % ", ".join("%s %s" % (name, decl) for name, decl, _ in COLUMNS))
    rows = []
    for rowid in range(1, 61):
        values = [random.choice(POOL) for _ in COLUMNS] if rowid > len(POOL) else [POOL[rowid - 1]] * len(COLUMNS)
        db.execute("INSERT INTO t(rowid, i, r, n, t) VALUES (?, ?, ?, ?, ?)", [rowid] + values)
        rows.append((rowid, values))
    stored = {}
    for rowid, *values in db.execute("SELECT rowid, i, r, n, t FROM t"):
        stored[rowid] = values

    cases = []
    seen = set()
    while len(cases) < 600:
        params = []
        where = predicate(params, 3) if random.random() < 0.95 else None
        order = []
        if random.random() < 0.5:
            for _ in range(random.randrange(1, 3)):
                order.append("%s %s" % (random.choice(COLUMNS)[0], random.choice(["ASC", "DESC", ""])))
        limit = None
        if random.random() < 0.3:
            limit = "LIMIT %d" % random.randrange(0, 8)
            if random.random() < 0.5:
                limit += " OFFSET %d" % random.randrange(0, 8)
        ours = " ".join(filter(None, ["WHERE " + where if where else None,
                                      "ORDER BY " + ", ".join(o.strip() for o in order) if order else None, limit]))
        if ours in seen:
            continue
        seen.add(ours)
        theirs = "SELECT rowid FROM t %s ORDER BY %s %s" % (
            "WHERE " + where if where else "", ", ".join([o.strip() for o in order] + ["rowid"]), limit or "")
        expected = [r[0] for r in db.execute(theirs, params)]
        cases.append((ours, params, expected))

    aggregates = []
    for function in ["COUNT(*)", "COUNT(%s)", "SUM(%s)", "TOTAL(%s)", "AVG(%s)", "MIN(%s)", "MAX(%s)", "COUNT(DISTINCT %s)"]:
        for name, _, _ in COLUMNS:
            for where in [None, "%s IS NOT NULL" % name, "i > 0", "t LIKE 'a%'", "n BETWEEN 0 AND 100"]:
                text = function % name if "%s" in function else function
                sql = "SELECT %s FROM t %s" % (text, "WHERE " + where if where else "")
                try:
                    value = db.execute(sql).fetchone()[0]
                    result = swift_value(value)
                except sqlite3.Error:
                    result = "nil"
                aggregates.append((text, "WHERE " + where if where else "", result))

    out = []
    out.append("// Generated by generate_sqlite_oracle.py with SQLite %s. Do not edit; rerun the script." % sqlite3.sqlite_version)
    out.append("@testable import YapDBQuery\n")
    out.append("/// What SQLite answers for a table `t(i INTEGER, r REAL, n NUMERIC, t TEXT)` holding `rows`.")
    out.append("enum SQLiteOracle {")
    out.append("    /// The columns of the table, as YapDatabase's column types.")
    out.append("    static let columns: [String: ColumnType] = [%s]" % ", ".join('"%s": %s' % (n, s) for n, _, s in COLUMNS))
    out.append("    /// Each row's values as bound on insert (before affinity).")
    out.append("    static let rows: [QueryRow] = [")
    for rowid, values in rows:
        out.append("        (%d, [%s])," % (rowid, ", ".join('"%s": %s' % (c[0], swift_value(v)) for c, v in zip(COLUMNS, values))))
    out.append("    ]")
    out.append("    /// Each row's values as SQLite stored them (after the columns' affinity).")
    out.append("    static let stored: [Int64: [String: SQLValue]] = [")
    for rowid in sorted(stored):
        out.append("        %d: [%s]," % (rowid, ", ".join('"%s": %s' % (c[0], swift_value(v)) for c, v in zip(COLUMNS, stored[rowid]))))
    out.append("    ]")
    out.append("    /// Query text (after FROM), its parameters, and the row ids SQLite returns (ties by row id).")
    out.append("    static let queries: [(text: String, parameters: [SQLValue], expected: [Int64])] = [")
    for text, params, expected in cases:
        out.append("        (%s, [%s], [%s])," % (json.dumps(text, ensure_ascii=False), ", ".join(swift_value(p) for p in params),
                                               ", ".join(map(str, expected))))
    out.append("    ]")
    out.append("    /// An aggregate function, a WHERE clause, and SQLite's result (nil: SQLite reported an error).")
    out.append("    static let aggregates: [(function: String, query: String, expected: SQLValue?)] = [")
    for text, where, result in aggregates:
        out.append("        (%s, %s, %s)," % (json.dumps(text), json.dumps(where), result))
    out.append("    ]")
    out.append("}")
    print("\n".join(out))


main()
