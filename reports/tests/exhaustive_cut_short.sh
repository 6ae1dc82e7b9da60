#!/usr/bin/env bash
# An exhaustive sweep (P12) stopped at its share of a budget claims only what it checked: its row is
# incomplete with no whole case and fewer elements than the full sweep, in check and in fuzz.
set -uo pipefail
bitparity="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$bitparity" check --suite conversions --seconds 2 --json "$work/check.json" >"$work/check.txt" 2>&1
code=$?
cat "$work/check.txt"
[ "$code" -eq 0 ] || fail "check: exit $code"
python3 - "$work/check.json" <<'PY' || fail "check: a sweep cut short claims the whole sweep"
import json, sys
doc = json.load(open(sys.argv[1]))
full = 2**32 + 2**16
rows = [r for r in doc["results"] if r["property"].startswith("P12")]
cut = [r for r in rows if r.get("incomplete")]
assert cut and not doc["complete"], doc
for r in cut:
    assert r["cases"] == 0 and 2**16 <= r["elements"] < full, r
PY

"$bitparity" fuzz --suite conversions --budget 3s --seed 1 --corpus "$work/corpus" --json "$work/fuzz.json" >"$work/fuzz.txt" 2>&1
code=$?
tail -n 3 "$work/fuzz.txt"
[ "$code" -eq 0 ] || fail "fuzz: exit $code"
grep -q "^summary: 1 visits (1 stopped before their end: an exhaustive sweep checks what its share of the budget allows)" "$work/fuzz.txt" ||
  fail "fuzz: the summary does not say the sweep was cut short"
python3 - "$work/fuzz.json" <<'PY' || fail "fuzz: a sweep cut short claims the whole sweep"
import json, sys
total = json.load(open(sys.argv[1]))["total"]
assert total["incomplete_visits"] == 1 and total["cases"] == 0 and total["elements"] < 2**32, total
PY
echo "exhaustive sweeps cut short: passed"
