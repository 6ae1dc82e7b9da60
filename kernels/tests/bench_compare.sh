#!/usr/bin/env bash
# scripts/bench-compare runs two builds in turns and prints one row per benchmark both ran, with
# the speedup of its pairs; it keeps each run's JSON and its table under --out; bad arguments are
# refused with exit 2 and one line before any run.
set -uo pipefail
compare="$1"
bench="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$compare" --rounds 2 --min-time 0.01 --out "$work/out" "$bench" "$bench" 'dequantize/nf4/f32/' >"$work/table.txt" 2>&1
code=$?
cat "$work/table.txt"
[ "$code" -eq 0 ] || fail "exit $code comparing a build with itself"
grep -Eq '^dequantize/nf4/f32/2\^24/cpu +[0-9.]+ +[0-9.]+ +[0-9.]+ +\[[0-9.]+, [0-9.]+\]' "$work/table.txt" ||
  fail "no row for the one matching benchmark"
grep -q "^bench-compare: 1 benchmarks compared" "$work/table.txt" || fail "the count of compared benchmarks is missing"
for kept in base-1.json base-2.json changed-1.json changed-2.json compare.txt; do
  [ -s "$work/out/$kept" ] || fail "--out lacks $kept"
done
ls "$work/out" | grep -q '\.tmp$' && fail "a temporary file was left in --out"

# Bad arguments: exit 2, one line naming the problem, and no run.
refused() {
  local expected="$1"
  shift
  "$compare" "$@" >"$work/refusal.txt" 2>&1
  local status=$?
  [ "$status" -eq 2 ] || fail "'$*' gave exit $status, expected 2: $(cat "$work/refusal.txt")"
  [ "$(wc -l <"$work/refusal.txt")" -eq 1 ] || fail "'$*' printed more than one line: $(cat "$work/refusal.txt")"
  grep -q "^error: .*$expected" "$work/refusal.txt" || fail "'$*' did not say '$expected': $(cat "$work/refusal.txt")"
}
refused "is not an executable file" "$work/none" "$bench" 'x'
refused "CHANGED_BENCH" "$bench" "$work" 'x'
refused "not between 1 and 100" --rounds 0 "$bench" "$bench" 'x'
refused "not a number of seconds" --min-time soon "$bench" "$bench" 'x'
refused "FILTER is empty" "$bench" "$bench" ' '
refused "arguments are required" "$bench"
refused "is not a regular expression" "$bench" "$bench" 'dequantize/(nf4'
touch "$work/a-file"
refused "is a file; name a folder" --out "$work/a-file" "$bench" "$bench" 'x'

# A filter neither build has: exit 1, said so.
"$compare" --rounds 1 --min-time 0.01 "$bench" "$bench" 'no-such-benchmark' >"$work/none.txt" 2>&1
code=$?
[ "$code" -eq 1 ] || fail "a filter that matches nothing gave exit $code, expected 1"
grep -q "^error: no benchmark matched" "$work/none.txt" || fail "an empty match was not explained: $(cat "$work/none.txt")"
# A build that fails: exit 1 naming it and its last message, nothing half-written left in --out.
printf '#!/bin/sh\necho "out of device memory" >&2\nexit 3\n' >"$work/failing-bench"
chmod +x "$work/failing-bench"
"$compare" --rounds 1 --min-time 0.01 --out "$work/failed" "$work/failing-bench" "$bench" 'x' >"$work/failed.txt" 2>&1
code=$?
[ "$code" -eq 1 ] || fail "a failing build gave exit $code, expected 1"
grep -q "^error: .*failing-bench exited 3: out of device memory" "$work/failed.txt" || fail "the failure was not named: $(cat "$work/failed.txt")"
ls "$work/failed" | grep -q . && fail "a failed run left files in --out: $(ls "$work/failed")"
echo "bench-compare: all checks passed"
