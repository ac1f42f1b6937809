#!/usr/bin/env bash
# Documentation coverage of YapDB's public API: lists every public (or open) symbol of the YapDB
# module that has no doc comment of its own, with its file and line, and exits 1 if there is
# one (0 when every symbol is documented).
#
# It reads the symbol graph that swift-docc-plugin extracts (`make docs` writes it); it runs
# the plugin first unless called with --no-build. Not counted: members the compiler
# synthesizes or inherits from a protocol extension (`!=`, OptionSet's set algebra, ...),
# implicit members with no place in the source (an enum's `init(rawValue:)`), and
# `extension` blocks themselves. A symbol whose only documentation is inherited from a
# protocol requirement (e.g. `description`) counts as undocumented: the project's rule is a
# doc comment on every public symbol.
#
# Usage: docs/check-doc-coverage.sh [--no-build]      (or: make docs-coverage)
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
BUILD=.build

if [ "${1:-}" != "--no-build" ]; then
  mkdir -p "$BUILD"
  if ! "$SWIFT" package --allow-writing-to-directory "$BUILD/docs" generate-documentation --target YapDB \
      --output-path "$BUILD/docs" >"$BUILD/doc-coverage-build.log" 2>&1; then
    echo "building the symbol graph failed; see $BUILD/doc-coverage-build.log" >&2
    exit 2
  fi
fi

# The plugin writes .build/<triple>/extracted-symbols/<package>/YapDB/*.symbols.json; take the
# newest set (a checkout moved to another directory leaves an older one behind).
graph=$(ls -t "$BUILD"/*/extracted-symbols/*/YapDB/YapDB.symbols.json 2>/dev/null | head -n 1 || true)
if [ -z "$graph" ]; then
  echo "no symbol graph of YapDB under $BUILD; run without --no-build (or make docs) first" >&2
  exit 2
fi

exec python3 - "$(dirname "$graph")" <<'PY'
import glob, json, os, sys
from urllib.parse import unquote, urlparse

directory = sys.argv[1]
root = os.getcwd() + "/"
total, missing = 0, []
for path in sorted(glob.glob(os.path.join(directory, "YapDB*.symbols.json"))):
    for symbol in json.load(open(path))["symbols"]:
        if symbol["accessLevel"] not in ("public", "open"):
            continue
        if symbol["kind"]["identifier"] == "swift.extension":
            continue
        if "::SYNTHESIZED::" in symbol["identifier"]["precise"] or "location" not in symbol:
            continue
        total += 1
        doc = symbol.get("docComment")
        # A comment of the symbol's own carries its source location; an inherited one does not.
        if doc and "uri" in doc and any(line["text"].strip() for line in doc["lines"]):
            continue
        location = symbol["location"]
        file = unquote(urlparse(location["uri"]).path).replace(root, "")
        line = location["position"]["line"] + 1
        name = ".".join(symbol["pathComponents"])
        why = "inherited doc only" if doc else "no doc comment"
        missing.append((file, line, name, symbol["kind"]["displayName"], why))

for file, line, name, kind, why in sorted(missing):
    print(f"{file}:{line}: {name} ({kind}): {why}")
documented = total - len(missing)
percent = 100.0 * documented / total if total else 100.0
print(f"YapDB public symbols: {total}, documented: {documented} ({percent:.1f}%), undocumented: {len(missing)}")
sys.exit(1 if missing else 0)
PY
