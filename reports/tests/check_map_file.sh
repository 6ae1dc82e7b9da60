#!/usr/bin/env bash
# `bitparity check --map FILE` as a maintainer uses it: a map of their own (here an 8-bit and a
# 4-bit ramp written as JSON bit patterns) is registered, listed by name in the rows, and every
# quant property runs on it; a file that is not a map is refused before anything runs.
set -uo pipefail
bitparity="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
python3 - "$work" <<'PYTHON' || fail "could not write the test maps"
import json, struct, sys
def bits(x): return struct.unpack("<I", struct.pack("<f", x))[0]
json.dump([bits((i - 127) / 128.0) for i in range(256)], open(sys.argv[1] + "/ramp8.json", "w"))
json.dump({"name": "ramp4", "values": ["0x%08x" % bits((i - 7) / 8.0) for i in range(16)]}, open(sys.argv[1] + "/four.json", "w"))
PYTHON
"$bitparity" check --map "$work/ramp8.json" --map "$work/four.json" --cases 2 --json "$work/rows.json" >"$work/out.txt" 2>&1 \
  || { cat "$work/out.txt"; fail "check on the maps failed"; }
cat "$work/out.txt"
python3 - "$work/rows.json" <<'PYTHON' || fail "the rows do not cover both maps"
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
maps = {r["format"] for r in rows}
assert maps == {"ramp8", "ramp4"}, maps
assert all(r["violations"] == 0 and "counterexample" not in r for r in rows)
properties = {r["property"].split()[0] for r in rows}
assert properties >= {"P2", "P3", "P4", "P7", "P9"}, properties
PYTHON
echo '[1, 2, 3]' >"$work/short.json"
"$bitparity" check --map "$work/short.json" --json "$work/none.json" >"$work/refused.txt" 2>&1
code=$?
cat "$work/refused.txt"
[ "$code" -eq 2 ] || fail "a 3-value map was not refused with exit 2 (exit $code)"
tail -n 1 "$work/refused.txt" | grep -q "^error: .*holds 3 values" || fail "the refusal does not say what is wrong"
[ ! -e "$work/none.json" ] || fail "a refused run wrote its results file"
echo "PASS"
