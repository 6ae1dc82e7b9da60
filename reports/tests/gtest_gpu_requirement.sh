#!/bin/sh
# BITPARITY_REQUIRE_GPU in a gtest binary: a value that is neither yes nor no fails it, naming the
# value; "off" lets a GPU test skip. Usage: gtest_gpu_requirement.sh GTEST_BINARY BITPARITY
tests=$1; bin=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
filter='*P4_determinism_nf4_f32'
if BITPARITY_REQUIRE_GPU=maybe "$tests" --gtest_filter="$filter" >"$work/maybe.txt" 2>&1; then
  cat "$work/maybe.txt"; fail "BITPARITY_REQUIRE_GPU=maybe: the tests passed"
fi
grep -q "BITPARITY_REQUIRE_GPU='maybe' is neither yes nor no" "$work/maybe.txt" ||
  { cat "$work/maybe.txt"; fail "BITPARITY_REQUIRE_GPU=maybe: the failure does not name the value"; }
if "$bin" list | grep -q '^  cuda:'; then echo "ok: maybe refused (a GPU is present: off is not shown here)"; exit 0; fi
BITPARITY_REQUIRE_GPU=off "$tests" --gtest_filter="$filter" >"$work/off.txt" 2>&1 ||
  { cat "$work/off.txt"; fail "BITPARITY_REQUIRE_GPU=off: the GPU test failed instead of skipping"; }
grep -q SKIPPED "$work/off.txt" || { cat "$work/off.txt"; fail "BITPARITY_REQUIRE_GPU=off: the GPU test did not skip"; }
echo "ok: maybe refused, off skips"
