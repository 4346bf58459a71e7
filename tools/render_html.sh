#!/usr/bin/env bash
# Screenshot of an HTML report with headless Chromium, to look at it (or put it
# in the docs) without a browser:
#   tools/render_html.sh IN.html OUT.png [WIDTH [HEIGHT]]
# WIDTH defaults to 1280 px. Without HEIGHT the whole page is captured: Chromium
# renders into a tall window (headless --screenshot captures the window, not the
# page) and the empty background below the page is cut off with Python's PIL,
# when it is installed. With HEIGHT the capture is exactly WIDTH x HEIGHT.
# The page is opened from a file: URL; no network is needed (the report loads
# nothing), and Chromium runs with a throw-away profile.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 4 ]; then
  echo "usage: $0 IN.html OUT.png [WIDTH [HEIGHT]]" >&2
  exit 2
fi
in=$1
out=$2
width=${3:-1280}
height=${4:-}
[ -f "$in" ] || { echo "$0: no such file: $in" >&2; exit 2; }
case "$width$height" in *[!0-9]*) echo "$0: WIDTH and HEIGHT are pixel counts" >&2; exit 2 ;; esac

chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
[ -n "$chromium" ] || { echo "$0: chromium not found (set CHROMIUM=/path/to/chromium)" >&2; exit 1; }

in_abs=$(cd "$(dirname "$in")" && pwd)/$(basename "$in")
out_abs=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

window_height=${height:-12000}
# --virtual-time-budget lets the inline script run before the capture; the
# rest keeps Chromium from touching the GPU, the network or the user profile.
"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --mute-audio \
  --no-first-run --no-default-browser-check --disable-extensions --disable-background-networking \
  --user-data-dir="$profile" --force-device-scale-factor=1 --virtual-time-budget=2000 \
  --window-size="$width,$window_height" --screenshot="$out_abs" "file://$in_abs" >"$profile/log" 2>&1 || {
  cat "$profile/log" >&2
  exit 1
}
[ -s "$out_abs" ] || { echo "$0: chromium wrote no screenshot" >&2; cat "$profile/log" >&2; exit 1; }

if [ -z "$height" ]; then
  # Cut the rows below the page: from the bottom, every row that is one flat colour
  # (the body background), keeping a 16 px margin.
  python=${PYTHON:-/usr/bin/python3}
  if "$python" -c 'import PIL' 2>/dev/null; then
    "$python" - "$out_abs" <<'EOF'
import sys
from PIL import Image
path = sys.argv[1]
img = Image.open(path).convert("RGB")
w, h = img.size
px = img.load()
bottom = h
while bottom > 1:
    y = bottom - 1
    first = px[0, y]
    if any(px[x, y] != first for x in range(0, w, 2)):
        break
    bottom -= 1
img.crop((0, 0, w, min(h, bottom + 16))).save(path, optimize=True)
EOF
  else
    echo "$0: PIL not found: the capture keeps its full ${window_height} px height" >&2
  fi
fi
echo "$out"
