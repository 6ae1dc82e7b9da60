#!/usr/bin/env bash
# A worker stuck in a visit (here by the test hook) is killed a grace period (30 s) after the
# budget and reported as a failure naming the visit; nothing is left running. A worker in a visit
# when its supervisor is killed ends with it, at once, not at its next report.
set -uo pipefail
bitparity="$1"
work=$(mktemp -d)
trap 'pkill -KILL -f "$work" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
BITPARITY_TEST_FUZZ_FAULT=hang:2 "$bitparity" fuzz --budget 3s --jobs 1 --seed 3 --first-visit 0 --corpus "$work/hang" \
  --json "$work/hang.json" >"$work/hang.txt" 2>&1
code=$?
grep -A1 "^FAILED" "$work/hang.txt" | head -n 2
[ "$code" -eq 1 ] || fail "a hung worker gave exit $code, expected 1"
python3 - "$work/hang.json" <<'EOF' || fail "the hang was not reported with its visit"
import json, sys
d = json.load(open(sys.argv[1]))
hang = [f for f in d["failures"] if f.get("event") == "hang"]
assert hang and hang[0]["visit"] == 2 and "did not finish" in hang[0]["violation"], d["failures"]
EOF
pgrep -f "$work/hang" >/dev/null && fail "the hung worker is still running"

# Two workers share the visits (0, 2, 4, ... and 1, 3, 5, ...): the state saved after one hung at
# visit 1 resumes at 3, not after the faster worker's last visit (which skipped the slower one's share).
BITPARITY_TEST_FUZZ_FAULT=hang:1 "$bitparity" fuzz --budget 60s --visits 8 --jobs 2 --seed 3 --first-visit 0 --corpus "$work/share" \
  >"$work/share.txt" 2>&1 &
supervisor=$!
for _ in $(seq 1 100); do
  pgrep -f -- "--worker 0 .*$work/share" >/dev/null && break
  sleep 0.1
done
# Worker 0 does visits 0, 2, 4 and 6 and ends; worker 1 hangs in visit 1.
for _ in $(seq 1 450); do
  pgrep -f -- "--worker 0 .*$work/share" >/dev/null || break
  sleep 0.1
done
pgrep -f -- "--worker 0 .*$work/share" >/dev/null && fail "worker 0 did not finish its 4 visits in 45 s"
kill -TERM "$supervisor"
wait "$supervisor"
code=$?
[ "$code" -eq 143 ] || { cat "$work/share.txt"; fail "the interrupted run with a hung worker gave exit $code, expected 143"; }
next=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["next_visit"])' "$work/share/fuzz-state.json")
[ "$next" -eq 3 ] || { cat "$work/share.txt"; fail "the state resumes at visit $next, not 3 (the hung worker's next)"; }

BITPARITY_TEST_FUZZ_FAULT=hang:0 "$bitparity" fuzz --budget 60s --jobs 1 --seed 3 --first-visit 0 \
  --corpus "$work/orphan" >/dev/null 2>&1 &
supervisor=$!
for _ in $(seq 1 100); do
  pgrep -f -- "--worker 0 .*$work/orphan" >/dev/null && break
  sleep 0.1
done
pgrep -f -- "--worker 0 .*$work/orphan" >/dev/null || fail "the worker never started"
sleep 1  # in its hung visit
kill -KILL "$supervisor"
wait "$supervisor" 2>/dev/null
sleep 1
pgrep -f "$work/orphan" >/dev/null && fail "a worker outlived its killed supervisor by a second"
echo "fuzz hang: passed"
