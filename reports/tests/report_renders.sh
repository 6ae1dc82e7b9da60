#!/usr/bin/env bash
# Looks at report.html as a person would: headless Chromium (from the distribution's packages) loads
# it offline, the page measures its plots, and this checks that every SVG plot drew at a non-zero
# size, that lines and bars are there, and that a screenshot of the page is not blank.
set -uo pipefail
bitparity="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || fail "chromium is not installed; ./scripts/install-deps installs it (package chromium)"
"$bitparity" report --out "$work/r" --steps 20 --elements 32 --check-cases 1 --skip-sweeps >"$work/report.txt" 2>&1 || {
  cat "$work/report.txt"; fail "the report failed"; }
html="$work/r/report.html"
grep -q -E 'src=|href=|url\(' "$html" && fail "report.html refers to something outside itself"
flags=(--headless=new --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile")
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$html" >"$work/dom.html" 2>"$work/chromium.log" || {
  tail -n 5 "$work/chromium.log"; fail "chromium could not load the report"; }
timeout 120 "$browser" "${flags[@]}" --window-size=1400,2200 --screenshot="$work/shot.png" "file://$html" >>"$work/chromium.log" 2>&1 || {
  tail -n 5 "$work/chromium.log"; fail "chromium could not take a screenshot"; }
python3 - "$html" "$work/dom.html" "$work/shot.png" <<'EOF' || fail "the plots did not draw"
import re, sys, zlib
source, dom, shot = open(sys.argv[1]).read(), open(sys.argv[2]).read(), open(sys.argv[3], "rb").read()
expected = source.count('<svg class="plot"')
assert expected >= 77, f"only {expected} plots in the page"  # 22 drift cards (3 or 4 plots) + the margin chart
sizes = re.findall(r'<svg class="plot"[^>]*data-rendered="(\d+)x(\d+)"', dom)
assert len(sizes) == expected, f"{len(sizes)} of {expected} plots were measured after layout"
assert all(int(w) > 0 and int(h) > 0 for w, h in sizes), "a plot has zero size"
assert f'data-plots="{expected} plots, 0 empty"' in dom, "the page reports empty plots"
assert dom.count("<path d=") >= 2 * 66, "too few drift lines"
assert len(re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="[\d.]+" height="(?!0\.0")[\d.]+" fill="#', dom)) > 66, "too few bars"
# The screenshot: a PNG whose pixels are not all one colour.
assert shot[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
width, height = int.from_bytes(shot[16:20], "big"), int.from_bytes(shot[20:24], "big")
data, at = b"", 8
while at < len(shot):
    length = int.from_bytes(shot[at:at + 4], "big")
    kind = shot[at + 4:at + 8]
    if kind == b"IDAT":
        data += shot[at + 8:at + 8 + length]
    at += 12 + length
raw = zlib.decompress(data)
assert len(set(raw[1:width * 4:7])) > 1 or len(set(raw)) > 16, "the screenshot is blank"
print(f"{expected} plots drawn, screenshot {width}x{height}, {len(raw)} bytes of pixels")
EOF
echo "report renders: passed"
