#!/usr/bin/env bash
# Inputs found by a sweep of bad input (each failed before its fix):
#   a newline in an argument stays inside the one error line (it was echoed raw, forging a line);
#   a whole number with a leading zero is decimal (it was read as octal); an empty TMPDIR is none;
#   a file name that is not UTF-8 reaches the results file (its dump failed: exit 5); fuzz states
#   that no run can continue from are refused before any visit, and a run on the budget alone stops
#   at the last position a state may hold;
#   a file far larger than a code map or a saved case is refused on its size, before it is read
#   (replay read a 300 MiB file whole first, --map JSON had no limit at all);
#   a code map in a large safetensors file costs its own bytes, and checkpoint inspect checks a
#   large file in pieces (both read the whole file);
#   a reader that closes stdout early leaves the results file written (SIGPIPE ended the run);
#   stdout on a full device is exit 3, not a silent 0;
#   a case file naming an unknown mutant, or with inputs its property cannot take, is refused
#   before any case runs (the others ran first);
#   state-plan sizes whose total overflows, fuzz --jobs above the hardware threads and an unknown
#   mutant given to check are refused (they printed negative totals, blamed a correct build for
#   its machine's load, and called a misspelt mutant a mutant).
#   cli_input_limits.sh BITPARITY safetensors|no-safetensors   (the reader is built with Open MPI)
set -uo pipefail
bitparity="$1"; safetensors="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Runs a command; prints "EXIT MAXRSS_KB" (the largest resident set of the command, in KiB).
measured() {
  python3 - "$@" <<'EOF'
import resource, subprocess, sys
with open(sys.argv[1], "w") as out:
    code = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT).returncode
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
EOF
}

# One line, and the newline written as \n.
"$bitparity" check --suite $'quant\nerror: forged' >"$work/out.txt" 2>"$work/err.txt"
code=$?
[ "$code" -eq 2 ] || fail "newline: exit $code"
[ "$(wc -l <"$work/err.txt")" -eq 1 ] || { cat "$work/err.txt"; fail "newline: the error is not one line"; }
grep -q 'quant\\nerror: forged' "$work/err.txt" || { cat "$work/err.txt"; fail "newline: not escaped"; }

# A leading zero is decimal, as everywhere else in the contract (CLI11 read it as octal: --steps 010
# ran 8 steps, --seed 010 was seed 8, --block-size 064 was refused as 52).
"$bitparity" drift --optimizer sgd --steps 010 --elements 010 --seed 010 >"$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "leading zeros: exit $?"; }
grep -q "1 runs of 10 steps x 10 elements on cpu, seed 10$" "$work/out.txt" || { head -n 2 "$work/out.txt"; fail "leading zeros: read as octal"; }
"$bitparity" state-plan --size 4096 --block-size 064 >"$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "--block-size 064: exit $?"; }

# An empty TMPDIR is no TMPDIR (P11's checkpoint folder failed with exit 3 after the table began).
if [ "$safetensors" = safetensors ]; then
  TMPDIR="" "$bitparity" sharded --property P11 --optimizer adam --dtype f32 --states 32 --layout zero-3 >"$work/out.txt" 2>&1 ||
    { cat "$work/out.txt"; fail "TMPDIR='': exit $?"; }
  # A TMPDIR where nothing can be made (root passes access() on /proc) ended in Open MPI's pages.
  TMPDIR=/proc "$bitparity" sharded --property P6 --optimizer adam --dtype f32 >"$work/out.txt" 2>&1
  code=$?
  [ "$code" -eq 2 ] && [ "$(wc -l <"$work/out.txt")" -eq 1 ] && grep -q "^error: TMPDIR=/proc is not a writable folder" "$work/out.txt" ||
    { cat "$work/out.txt"; fail "TMPDIR=/proc: exit $code"; }
fi

# A 40 MiB JSON map (sparse) is refused on its size.
truncate -s 40M "$work/huge.json"
"$bitparity" check --suite quant --map "$work/huge.json" >"$work/out.txt" 2>&1
code=$?
[ "$code" -eq 2 ] && tail -n 1 "$work/out.txt" | grep -q "^error: .*huge.json: 41943040 bytes, more than a code map .* can be (16 MiB)" ||
  { cat "$work/out.txt"; fail "huge map: exit $code"; }

# The resident set of a run that reads no file: the yardstick below (14 MiB here, about 146 MiB
# under ASan, whose shadow memory an absolute limit mistook for a file read).
read -r code base < <(measured "$work/out.txt" "$bitparity" replay "$work/absent-case.json")
[ "$code" -eq 2 ] || { cat "$work/out.txt"; fail "absent case: exit $code"; }

# A 300 MiB file given to replay: refused without reading it (resident set far below its size).
truncate -s 300M "$work/huge-case.json"
read -r code rss < <(measured "$work/out.txt" "$bitparity" replay "$work/huge-case.json")
[ "$code" -eq 2 ] && tail -n 1 "$work/out.txt" | grep -q "larger than 256 MiB" || { cat "$work/out.txt"; fail "huge case: exit $code"; }
[ "$rss" -lt $((base + 100000)) ] || fail "huge case: $rss KiB resident ($base without a file); the file was read"

# A 4-bit map beside a 1 GiB tensor in one safetensors file: only the header and the map are read.
if [ "$safetensors" = safetensors ]; then
python3 - "$work/states.safetensors" <<'EOF'
import json, struct, sys
values = [-1, -0.75, -0.5, -0.375, -0.25, -0.125, -0.0625, 0, 0.0625, 0.125, 0.25, 0.375, 0.5, 0.75, 0.875, 1]
big = 1 << 30
header = json.dumps({"qmap": {"dtype": "F32", "shape": [16], "data_offsets": [0, 64]},
                     "state": {"dtype": "U8", "shape": [big], "data_offsets": [64, 64 + big]}}).encode()
header += b" " * ((8 - len(header) % 8) % 8)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(header)) + header + struct.pack("<16f", *values))
    f.truncate(8 + len(header) + 64 + big)  # sparse: the state's bytes take no disk
EOF
read -r code rss < <(measured "$work/out.txt" "$bitparity" check --suite quant --property P7 --map "$work/states.safetensors:qmap" --cases 1)
[ "$code" -eq 0 ] || { cat "$work/out.txt"; fail "safetensors map: exit $code"; }
[ "$rss" -lt $((base + 300000)) ] || fail "safetensors map: $rss KiB resident ($base without a file); the whole file was read"
# checkpoint inspect checks every tensor's CRC in pieces: the 1 GiB tensor costs no 1 GiB of memory.
read -r code rss < <(measured "$work/out.txt" "$bitparity" checkpoint inspect "$work/states.safetensors")
[ "$code" -eq 0 ] || { cat "$work/out.txt"; fail "checkpoint inspect of a large file: exit $code"; }
qmap_crc=$(python3 -c 'import struct, sys, zlib; f = open(sys.argv[1], "rb"); n = struct.unpack("<Q", f.read(8))[0]; f.seek(8 + n); print("%08x" % zlib.crc32(f.read(64)))' "$work/states.safetensors")
grep -Eq "^  qmap +F32 +\[16\] +64 $qmap_crc " "$work/out.txt" || { cat "$work/out.txt"; fail "checkpoint inspect: qmap's CRC is not $qmap_crc"; }
grep -Eq "^  state +U8 +\[1073741824\] +1073741824 [0-9a-f]{8} " "$work/out.txt" || { cat "$work/out.txt"; fail "checkpoint inspect: the large tensor is not listed"; }
[ "$rss" -lt $((base + 300000)) ] || fail "checkpoint inspect: $rss KiB resident ($base without a file); the whole file was read"
fi

# stdout closed after one byte: the run ends normally and writes its results file.
"$bitparity" check --suite quant --format nf4 --property P7 --cases 1 --json "$work/piped.json" | head -c 1 >/dev/null
code=${PIPESTATUS[0]}
[ "$code" -eq 0 ] || fail "closed stdout: exit $code"
python3 -c "import json, sys; assert json.load(open(sys.argv[1]))['complete']" "$work/piped.json" || fail "closed stdout: no results file"

# stdout on a full device: the table is lost, which exit 3 and one line say (it exited 0); the
# results file is still written.
if [ -w /dev/full ]; then
  "$bitparity" check --suite quant --format nf4 --property P7 --cases 1 --json "$work/full-stdout.json" >/dev/full 2>"$work/err.txt"
  code=$?
  [ "$code" -eq 3 ] && [ "$(wc -l <"$work/err.txt")" -eq 1 ] && grep -q "^error: standard output could not be written" "$work/err.txt" ||
    { cat "$work/err.txt"; fail "stdout on /dev/full: exit $code"; }
  python3 -c "import json, sys; assert json.load(open(sys.argv[1]))['complete']" "$work/full-stdout.json" || fail "stdout on /dev/full: no results file"
fi

# A case naming a mutant this build lacks is refused before any case runs (it ran the others first).
corpus_case=$(dirname "$0")/../../properties/corpus/cases/P1-adam-f32-mutant.adam-eps-inside-sqrt-2bdecaf9cf6901c5.json
python3 - "$corpus_case" "$work/unknown-mutant.json" <<'EOF'
import json, sys
case = json.load(open(sys.argv[1]))
case["implementation"] = "mutant:nosuch"
case.pop("fingerprint", None)
json.dump(case, open(sys.argv[2], "w"))
EOF
"$bitparity" replay "$corpus_case" "$work/unknown-mutant.json" >"$work/out.txt" 2>&1
code=$?
[ "$code" -eq 2 ] && tail -n 1 "$work/out.txt" | grep -q "^error: .*unknown-mutant.json: its implementation mutant:nosuch cannot be made here" ||
  { cat "$work/out.txt"; fail "unknown mutant in a case: exit $code"; }
grep -q "kills mutant" "$work/out.txt" && fail "unknown mutant in a case: the other case ran first"
# A case whose inputs do not fit its property (P7's out_dtype u8, found only as the property draws
# it) is refused before any case runs, too (the others ran first, then exit 2).
p7_case=$(dirname "$0")/../../properties/corpus/cases/P7-dynamic8-signed-f32-64-mutant.approximate-division-0d5de6b8bb9266e9.json
python3 - "$p7_case" "$work/u8-out.json" <<'EOF'
import json, sys
case = json.load(open(sys.argv[1]))
case["inputs"]["out_dtype"] = "u8"
case.pop("fingerprint", None)
json.dump(case, open(sys.argv[2], "w"))
EOF
"$bitparity" replay "$corpus_case" "$work/u8-out.json" >"$work/out.txt" 2>&1
code=$?
[ "$code" -eq 2 ] && [ "$(wc -l <"$work/out.txt")" -eq 1 ] && grep -q "^error: .*u8-out.json: dtype 'u8' is not a float dtype" "$work/out.txt" ||
  { cat "$work/out.txt"; fail "a case whose inputs do not fit: exit $code"; }

# A file name that is not UTF-8 is written into the results as U+FFFD (the dump failed after the
# run: exit 5, no results file).
cp "$corpus_case" "$work/"$'case\xfe.json'
"$bitparity" replay "$work/"$'case\xfe.json' --json "$work/not-utf8.json" >"$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "non-UTF-8 name: exit $?"; }
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["results"][0]["file"].endswith("case\ufffd.json"), r' "$work/not-utf8.json" ||
  fail "non-UTF-8 name: the results file does not hold the case"

refused() {  # refused PATTERN ARGS...
  local pattern=$1; shift
  "$bitparity" "$@" >"$work/refused.txt" 2>&1
  code=$?
  [ "$code" -eq 2 ] && tail -n 1 "$work/refused.txt" | grep -q "^error: .*$pattern" || { cat "$work/refused.txt"; fail "not refused with '$pattern' (exit $code)"; }
}
# Fuzz states a run cannot continue from are refused before any visit (a "runs" that is no list
# ended in exit 5 after the header; a position past 2^50 failed every visit, or overflowed).
mkdir -p "$work/states"
echo '{"schema": "bitparity.fuzz-state/1", "next_visit": 3, "runs": 5}' >"$work/states/fuzz-state.json"
refused "states/fuzz-state.json: 'runs' is not a list of runs; undo the edit" fuzz --corpus "$work/states" --budget 1s
# A wrong position is named as such (it was "not a fuzz state", with the advice to drop the history).
echo '{"schema": "bitparity.fuzz-state/1", "next_visit": -1, "runs": []}' >"$work/states/fuzz-state.json"
refused "states/fuzz-state.json: 'next_visit' is -1, not a position from 0 on (a whole number written without a sign or a point); undo the edit" fuzz --corpus "$work/states" --budget 1s
echo '{"schema": "bitparity.fuzz-state/1", "next_visit": 1125899906842625}' >"$work/states/fuzz-state.json"
refused "its next_visit 1125899906842625 is past 2.50" fuzz --corpus "$work/states" --budget 1s
if [ "$safetensors" = safetensors ]; then
  echo '{"schema": "bitparity.fuzz-over-ranks-state/1", "next_round": 9223372036854775807}' >"$work/states/fuzz-state-over-ranks.json"
  refused "its next_round 9223372036854775807 is past 2.50" fuzz --suite sharded --corpus "$work/states" --budget 1s
fi
refused "--first-visit 1125899906842624 with --visits 3 ends past visit 2.50" fuzz --corpus "$work/fresh" --first-visit 1125899906842624 --visits 3
# A run on the budget alone stops at visit 2^50, the last position a state may hold (it saved one
# past it, which the next run refused); a run from there is refused up front (it visited nothing).
"$bitparity" fuzz --budget 3s --first-visit 1125899906842620 --corpus "$work/last" --suite quant --format nf4 --property P7 >"$work/out.txt" 2>&1 ||
  { cat "$work/out.txt"; fail "a run ending at visit 2^50: exit $?"; }
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["next_visit"] == 2**50' "$work/last/fuzz-state.json" ||
  fail "a run on the budget alone saved a state past visit 2^50"
refused "the corpus state .*last/fuzz-state.json is at visit 2.50.*start again with --first-visit 0" fuzz --budget 1s --corpus "$work/last"
refused "the --size values add up to more than 2^50 elements" state-plan --size 1125899906842624 --size 1125899906842624
[ "$(nproc)" -ge 256 ] || refused "--jobs 256 is more than this machine's [0-9]* hardware threads" fuzz --jobs 256 --budget 1s --corpus "$work/corpus"
refused "unknown mutant 'nosuch'; .bitparity list. names" check --implementation mutant:nosuch
refused "mutant:ignore-strides is a mutant; check runs cpu" check --implementation mutant:ignore-strides
echo "cli input limits: passed"
