#!/usr/bin/env python3
"""Writes FTS5Oracle.swift: what SQLite's FTS5 answers for the texts, words, rows and queries
below (tokens, Porter stems, matching rows, bm25 scores, snippets, highlights), so the
YapDBFullText tests can compare with FTS5 without needing Python or SQLite.

Run from this directory: python3 generate_fts5_oracle.py > FTS5Oracle.swift
Deterministic (fixed seed); the SQLite version used is written into the output.
"""
import random
import sqlite3

random.seed(23)
db = sqlite3.connect(':memory:')


def swift(s):
    out = []
    for ch in s:
        if ch == '\\':
            out.append('\\\\')
        elif ch == '"':
            out.append('\\"')
        elif ch == '\n':
            out.append('\\n')
        elif ch == '\t':
            out.append('\\t')
        elif ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 or 0xD800 <= ord(ch) < 0xE000 or ord(ch) in (0x200B, 0x200C, 0x200D, 0xFEFF):
            out.append('\\u{%X}' % ord(ch))
        else:
            out.append(ch)
    return '"' + ''.join(out) + '"'


def swift_list(items):
    return '[' + ', '.join(swift(i) for i in items) + ']'


table_number = [0]


def tokens(option, text):
    table_number[0] += 1
    name = 'tok%d' % table_number[0]
    quoted = option.replace("'", "''")
    db.execute("CREATE VIRTUAL TABLE %s USING fts5(x, tokenize='%s')" % (name, quoted))
    db.execute("CREATE VIRTUAL TABLE %sv USING fts5vocab(%s, 'instance')" % (name, name))
    db.execute("INSERT INTO %s VALUES (?)" % name, (text,))
    return [r[0] for r in db.execute("SELECT term FROM %sv ORDER BY offset" % name)]


TOKENIZER_CASES = [
    ('unicode61 remove_diacritics 2', 'Résumé RESUME résumé'),
    ('unicode61 remove_diacritics 2', 'Ǖber Ḉa ḗ Ǻ ǖ'),
    ('unicode61 remove_diacritics 1', 'Ǖber Ḉa ḗ Ǻ café'),
    ('unicode61 remove_diacritics 0', 'Résumé café NAÏVE'),
    ('unicode61 remove_diacritics 2', 'e\u0301te\u0301 cafe\u0301'),
    ('unicode61 remove_diacritics 2', 'naïve CAFÉ Ångström Øresund Łódź đuro'),
    ('unicode61 remove_diacritics 2', 'ΆΈ άλφα ΣΊΣΥΦΟΣ Привет МИР ёлка'),
    ('unicode61 remove_diacritics 2', 'İstanbul ǅemal Straße ﬁne'),
    ('unicode61 remove_diacritics 2', '日本語のテキスト 中文 한국어 텍스트'),
    ('unicode61 remove_diacritics 2', '😀 hi😀there 👍🏽ok ❤️love'),
    ('unicode61 remove_diacritics 2', "don't stop-me now: a_b x.y 3.14 1,000 e-mail"),
    ('unicode61 remove_diacritics 2', 'hello\tworld\nnew\r\nline  spaced'),
    ('unicode61 remove_diacritics 2', 'x\u200by zero\u00a0width ｈｅｌｌｏ ①② Ⅻ'),
    ('unicode61 remove_diacritics 2', '#hashtag @mention $100 50% C++ C# a&b'),
    ('unicode61 remove_diacritics 2 tokenchars \'#@+\'', '#hashtag @mention C++ C# a&b'),
    ('unicode61 remove_diacritics 2 separators \'xz\'', 'taxes zebra axolotl'),
    ('unicode61 remove_diacritics 2 categories \'L* N* Co So\'', 'hi😀there ❤love'),
    ('unicode61 remove_diacritics 2 categories \'L*\'', 'abc123def 4ever'),
    ('ascii', 'Hello WORLD Résumé naïve'),
    ('ascii separators \'é\'', 'Résumé café'),
    ('porter unicode61 remove_diacritics 2', 'Running runners ran easily; happiness CONNECTED Résumés'),
    ('porter ascii', 'generalizations relational conditional'),
    ('trigram', 'Hello World'),
    ('trigram case_sensitive 1', 'Hello World'),
    ('trigram', 'ab'),
    ('trigram', '北京大学的学生'),
    ('trigram', 'héllo'),
]

PORTER_WORDS = """caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled
sized hopping tanned falling hissing fizzed failing filing happy sky relational conditional rational
valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli vietnamization
predication operator feudalism decisiveness hopefulness callousness formaliti sensitiviti sensibiliti
triplicate formative formalize electriciti electrical hopeful goodness revival allowance inference
airliner gyroscopic adjustable defensible irritant replacement adjustment dependent adoption homologou
communism activate angulariti homologous effective bowdlerize probate rate cease controll roll
generalizations oscillators running runner runs ran easily easy happiness happier connect connected
connecting connection connections abbreviation apology apologies archaeology biology
agreement agreements agree bly logically analogies analogy meetings meeting meet universities university
ion lion tion zion dying lying crying tying bus buses glass glasses""".split()


def porter_stems(words):
    db.execute("CREATE VIRTUAL TABLE porterwords USING fts5(x, tokenize='porter ascii')")
    db.execute("CREATE VIRTUAL TABLE porterwordsv USING fts5vocab(porterwords, 'instance')")
    result = []
    for word in words:
        db.execute("DELETE FROM porterwords")
        db.execute("INSERT INTO porterwords VALUES (?)", (word,))
        terms = [r[0] for r in db.execute("SELECT term FROM porterwordsv ORDER BY offset")]
        result.append((word, terms[0] if len(terms) == 1 else word))
    return result


# A corpus of two-column rows: sentences from a small vocabulary (Zipf-like), with sentence ends.
VOCAB = ("the search engine finds every message quickly while people type prefixes and phrases "
         "ranking uses term frequency inverse document frequency snippets show context around matches "
         "apple banana cherry delta echo foxtrot golf hotel india juliet kilo lima mike").split()
WEIGHTS = [1.0 / (i + 1) for i in range(len(VOCAB))]


def sentence(n):
    words = random.choices(VOCAB, WEIGHTS, k=n)
    words[0] = words[0].capitalize()
    return ' '.join(words)


def paragraph():
    parts = []
    for _ in range(random.randint(1, 4)):
        parts.append(sentence(random.randint(3, 12)) + random.choice(['.', '.', ':', '!', ',']))
    return ' '.join(parts)


ROWS = []
for _ in range(60):
    ROWS.append((sentence(random.randint(1, 6)), paragraph()))
ROWS.append(('Résumé', 'The résumé of the engine. It finds resume text: even RÉSUMÉ.'))
ROWS.append(('', 'apple banana cherry delta echo foxtrot golf hotel india juliet kilo lima mike apple search'))

QUERIES = [
    'search', 'apple', 'the', 'engine finds', '"search engine"', 'search + engine', 'sea*', '"sea"*',
    'ranking OR snippets', 'search NOT apple', 'apple AND banana', 'apple banana OR cherry',
    'apple NOT banana cherry', '(apple OR banana) AND search', 'NEAR(apple banana)', 'NEAR(apple banana, 2)',
    'NEAR(search engine message, 5)', 'title:search', 'body:apple', '{title body}:the', '-title:search',
    'title:(apple OR banana)', '^the', 'title:^search', 'resume', 'résumé', 'RESUME', '"the search"*',
    'frequency', 'people type', 'NEAR("search engine" quickly, 3)', 'apple OR banana OR cherry OR delta',
    'm*', 'the OR apple OR search', 'body:NEAR(apple lima, 12)', 'kilo NOT title:kilo',
]

SNIPPET_ARGS = [(-1, '[', ']', '...', 8), (1, '<b>', '</b>', '…', 15), (0, '*', '*', '..', 4), (-1, '{', '}', '~', 64), (1, '(', ')', '-', 2)]


# Random queries from the grammar (FTS5 3.40 refuses implicit AND next to parentheses, so the
# generator writes AND there).
QUERY_WORDS = ['search', 'engine', 'the', 'apple', 'banana', 'message', 'finds', 'people', 'type', 'lima',
               'mike', 'kilo', 'frequency', 'snippets', 'ranking', 'quickly', 'resume', 'zulu']
PREFIXES = ['se', 'sea', 'th', 'm', 'ap', 'fr', 'qu', 'z']


def random_phrase():
    r = random.random()
    if r < 0.45:
        return random.choice(QUERY_WORDS)
    if r < 0.6:
        return random.choice(PREFIXES) + '*'
    if r < 0.75:
        words = random.choices(QUERY_WORDS[:12], k=random.randint(2, 3))
        return '"' + ' '.join(words) + '"' + ('*' if random.random() < 0.2 else '')
    if r < 0.82:
        return random.choice(QUERY_WORDS) + ' + ' + random.choice(QUERY_WORDS)
    if r < 0.9:
        return '^' + random.choice(QUERY_WORDS)
    group = ' '.join(random.choice(QUERY_WORDS[:12]) for _ in range(random.randint(2, 3)))
    distance = random.choice(['', ', 0', ', 1', ', 3', ', 20'])
    return 'NEAR(%s%s)' % (group, distance)


def column_prefix():
    return random.choice(['', '', '', 'title:', 'body:', '{title body}:', '-title:', '-body:'])


def atom(depth):
    if depth < 2 and random.random() < 0.25:
        return True, column_prefix() + '(' + expression(depth + 1) + ')'
    phrase = random_phrase()
    prefix = column_prefix()
    if prefix and phrase.startswith('^') and prefix.startswith('-'):
        prefix = ''
    return False, prefix + phrase


def sequence(depth):
    atoms = [atom(depth) for _ in range(random.randint(1, 3))]
    text = atoms[0][1]
    for index in range(1, len(atoms)):
        joiner = ' AND ' if atoms[index][0] or atoms[index - 1][0] else ' '
        text += joiner + atoms[index][1]
    return text


def expression(depth):
    text = sequence(depth)
    for _ in range(random.choice([0, 0, 1, 1, 2])):
        text += random.choice([' AND ', ' OR ', ' NOT ']) + sequence(depth)
    return text


def random_queries(count):
    result = []
    while len(result) < count:
        query = expression(0)
        try:
            rows = db.execute("SELECT rowid, bm25(docs, 2.0, 0.5), snippet(docs, -1, '[', ']', '...', 10) FROM docs "
                              "WHERE docs MATCH ? ORDER BY rowid", (query,)).fetchall()
        except sqlite3.OperationalError:
            continue
        result.append((query, rows))
    return result


def main():
    print('// Generated by generate_fts5_oracle.py from SQLite %s (FTS5): do not edit.' % sqlite3.sqlite_version)
    print('// What SQLite FTS5 answers, for YapDBFullText tests to compare with.')
    print()
    print('enum FTS5Oracle {')
    print('    /// (tokenize option, text, FTS5\'s terms in order)')
    print('    static let tokenizerCases: [(option: String, text: String, terms: [String])] = [')
    for option, text in TOKENIZER_CASES:
        print('        (%s, %s, %s),' % (swift(option), swift(text), swift_list(tokens(option, text))))
    print('    ]')
    print()
    print('    /// (word, FTS5 porter\'s stem)')
    print('    static let porterStems: [(word: String, stem: String)] = [')
    for word, stem in porter_stems(PORTER_WORDS):
        print('        (%s, %s),' % (swift(word), swift(stem)))
    print('    ]')
    print()
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(title, body, tokenize='unicode61 remove_diacritics 2')")
    for i, (title, body) in enumerate(ROWS):
        db.execute("INSERT INTO docs(rowid, title, body) VALUES (?, ?, ?)", (i, title, body))
    print('    static let columns = ["title", "body"]')
    print('    /// Row i of the table (rowid i).')
    print('    static let rows: [(title: String, body: String)] = [')
    for title, body in ROWS:
        print('        (%s, %s),' % (swift(title), swift(body)))
    print('    ]')
    print()
    print('    struct Match { var row: Int; var bm25: Double; var bm25Weighted: Double; var snippets: [String]; var highlight: String }')
    print('    /// Snippet arguments, as FTS5 takes them: column (-1: best), start, end, ellipses, tokens.')
    print('    static let snippetArguments: [(column: Int, start: String, end: String, ellipses: String, tokens: Int)] = [')
    for args in SNIPPET_ARGS:
        print('        (%d, %s, %s, %s, %d),' % (args[0], swift(args[1]), swift(args[2]), swift(args[3]), args[4]))
    print('    ]')
    print('    /// Per query: the rows FTS5 matches in rowid order, and for the first six of them bm25() (weights 1, 1')
    print('    /// and 2.0, 0.5), the snippets for `snippetArguments`, and highlight(docs, 1, "<", ">").')
    print('    static let queries: [(query: String, rows: [Int], matches: [Match])] = [')
    for query in QUERIES:
        sql = ("SELECT rowid, bm25(docs), bm25(docs, 2.0, 0.5), " +
               ', '.join("snippet(docs, %d, ?, ?, ?, %d)" % (a[0], a[4]) for a in SNIPPET_ARGS) +
               ", highlight(docs, 1, '<', '>') FROM docs WHERE docs MATCH ? ORDER BY rowid")
        params = []
        for a in SNIPPET_ARGS:
            params += [a[1], a[2], a[3]]
        params.append(query)
        rows = db.execute(sql, params).fetchall()
        print('        (%s, %s, [' % (swift(query), '[' + ', '.join(str(r[0]) for r in rows) + ']'))
        for r in rows[:6]:
            print('            Match(row: %d, bm25: %r, bm25Weighted: %r, snippets: %s, highlight: %s),' % (
                r[0], r[1], r[2], swift_list(r[3:3 + len(SNIPPET_ARGS)]), swift(r[3 + len(SNIPPET_ARGS)])))
        print('        ]),')
    print('    ]')
    print()
    print('    /// Random queries from the grammar: the rows FTS5 matches, bm25(docs, 2.0, 0.5) and')
    print("    /// snippet(docs, -1, '[', ']', '...', 10) for the first three rows.")
    print('    static let randomQueries: [(query: String, rows: [Int], bm25: [Double], snippets: [String])] = [')
    for query, rows in random_queries(150):
        print('        (%s, %s, %s, %s),' % (swift(query), '[' + ', '.join(str(r[0]) for r in rows) + ']',
                                            '[' + ', '.join(repr(r[1]) for r in rows) + ']', swift_list([r[2] for r in rows[:3]])))
    print('    ]')
    print('}')


main()
