#!/usr/bin/env bash
# ctest 'browser': `attnfc plot`'s page as a user sees it, rendered by Debian's chromium in
# headless mode. Trains a tiny quantile model on the head of ETTh1 (2 epochs, a second or
# two), plots three windows, then checks
#   - the page: self-contained (no script, no external URL), and the elements a reader
#     needs in the DOM chromium builds (date ticks, the origin marker, legend entries of the
#     model and the baselines, the fan, metrics rows, the heatmap colour scale, the window
#     picker, the training curves' epoch 0 and kept epoch, the forecast after the data);
#   - the layout (tests/browser/probe.js run in a copy of the page): one window shown, the
#     picker switches it, tick labels do not overlap, no text leaves its chart, the
#     model's line has a point per forecast step;
#   - the screenshot (png_stats): a PNG of the window size, not blank, with the NLinear
#     and repeat-last lines' colours on it.
# Usage: plot_in_chromium.sh ATTNFC PNG_STATS. Installs chromium through
# scripts/setup-deps.sh browser when it is missing; exit 77 (skipped) with the reason only
# when it cannot be installed.
set -euo pipefail
attnfc=$1
png_stats=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/attnfc-browser.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
  echo "browser: FAILED: $*" >&2
  exit 1
}

if ! command -v chromium >/dev/null 2>&1; then
  if ! "$root/scripts/setup-deps.sh" browser >"$work/setup.log" 2>&1; then
    cat "$work/setup.log"
    echo "browser: skipped: chromium is not installed and scripts/setup-deps.sh browser" \
      "could not install it (output above)"
    exit 77
  fi
fi

# chromium in a container: no sandbox (root), no GPU, its own profile (no shared state
# with another chromium), and a time limit so a hung browser fails instead of stalling ctest.
browse() {
  timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$work/profile" --no-first-run --disable-extensions "$@" \
    2>>"$work/chromium.log"
}

head -n 1001 "$root/datasets/ETTh1.csv" >"$work/etth1.csv"
cat >"$work/tiny.json" <<EOF
{
  "data": {"path": "$work/etth1.csv", "columns": ["HUFL", "OT"],
           "split": {"train_rows": 600, "val_rows": 200, "test_rows": 200}},
  "model": {"context_length": 48, "patch_len": 8, "horizon": 24, "d_model": 16, "n_heads": 2,
            "n_layers": 1, "ff_mult": 1, "dropout": 0.0, "linear_lookback": 48,
            "quantiles": [0.1, 0.5, 0.9]},
  "train": {"epochs": 2, "batch_size": 16, "max_steps_per_epoch": 6, "lr": 0.003, "seed": 3}
}
EOF
"$attnfc" train --config "$work/tiny.json" --out "$work/run" -q >"$work/train.log" 2>&1 ||
  { cat "$work/train.log"; fail "attnfc train"; }
"$attnfc" plot -m "$work/run/model.safetensors" -i "$work/etth1.csv" --windows 3 \
  -o "$work/page.html" >"$work/plot.log" 2>&1 || { cat "$work/plot.log"; fail "attnfc plot"; }
page="$work/page.html"

# Self-contained: nothing fetched, nothing run.
! grep -q '<script' "$page" || fail "the page holds a script"
! grep -Eq "(src|href)=['\"]?(https?:)?//" "$page" || fail "the page links something outside it"

# The DOM chromium builds from it.
browse --dump-dom "file://$page" >"$work/dom.html" || { cat "$work/chromium.log"; fail "dump-dom"; }
dom="$work/dom.html"
expect() {  # expect MIN PATTERN WHAT: at least MIN matches of the extended regex
  local n
  n=$({ grep -Eo "$2" "$dom" || true; } | wc -l)
  [ "$n" -ge "$1" ] || fail "$3: found $n of /$2/, expected at least $1"
}
expect 3 '<div class="window" id="window-[0-9]' "three window panels"
expect 1 '<div class="window-picker">' "the window picker"
expect 3 '<label for="pick-[0-9]">window [0-9]+ · 2016-0[78]-' "picker labels with dates"
expect 6 '<text[^>]*>(Jul|Aug) [0-9]{1,2}( 2016)?</text>' "date tick labels"
expect 6 '<text[^>]*>[0-2][0-9]:00</text>' "hour tick labels"
expect 4 '<g class="origin-marker">' "origin markers (3 windows, the forecast after the data)"
for series in history actual attnfc nlinear repeat-last interval-80; do
  expect 3 "<g class=\"legend-entry\" data-series=\"$series\">" "legend entries of $series"
done
expect 4 '<table class="metrics">' "metrics tables (3 windows, the split)"
for model in attnfc nlinear repeat-last; do
  expect 4 "<tr class=\"(model|other)\" data-model=\"$model\">" "metrics rows of $model"
done
expect 1 '<svg class="colour-scale"' "the heatmaps' colour scale"
expect 3 '<g class="scale-tick">' "colour scale ticks"
expect 2 '<svg class="heatmap"' "heatmaps (1 layer x 2 heads)"
expect 2 '<g class="tick-key">' "heatmap key-patch ticks"
expect 1 '<g class="kept-marker">' "the kept epoch"
expect 1 '<g class="epoch0-marker">' "epoch 0 (the linear start)"
expect 1 '<section id="future">' "the forecast after the data"
expect 2 '<polygon class="band"' "fan bands"

# Layout and the picker, measured by the browser.
{ cat "$page"; echo '<script>'; cat "$root/tests/browser/probe.js"; echo '</script>'; } \
  >"$work/probe.html"
browse --dump-dom "file://$work/probe.html" >"$work/probe_dom.html" ||
  { cat "$work/chromium.log"; fail "dump-dom of the probe"; }
probe=$(sed -n '/<pre id="probe">/,/<\/pre>/p' "$work/probe_dom.html")
echo "$probe"
value() { echo "$probe" | sed -n "s/^$1=//p"; }
[ "$(value visible_windows)" = "window-2" ] || fail "shown first: $(value visible_windows), expected window-2 only"
[ "$(value after_click_first)" = "window-0" ] || fail "after picking the first: $(value after_click_first)"
[ "$(value tick_overlaps)" = "0" ] || fail "overlapping tick labels: $(value tick_overlaps)"
[ "$(value text_outside)" = "0" ] || fail "text outside its chart: $(value text_outside)"
[ "$(value model_points)" = "24" ] || fail "the model's line has $(value model_points) points, expected 24"
[ "$(value charts_drawn)" -ge 8 ] || fail "charts drawn: $(value charts_drawn)"
[ "$(value tick_labels)" -ge 12 ] || fail "tick labels: $(value tick_labels)"

# The screenshot: a real PNG of the window size with the charts on it.
browse --screenshot="$work/shot.png" --window-size=1280,1600 "file://$page" >/dev/null ||
  { cat "$work/chromium.log"; fail "screenshot"; }
stats=$("$png_stats" "$work/shot.png" '#e07b00' '#c0392b') || fail "png_stats: $stats"
echo "$stats"
stat() { echo "$stats" | awk -v k="$1" '$1 == k { print $NF }'; }
[ "$(echo "$stats" | awk '$1 == "png" { print $2 "x" $3 }')" = "1280x1600" ] ||
  fail "screenshot size: $(echo "$stats" | head -1), expected 1280x1600"
[ "$(stat distinct_colours)" -ge 100 ] || fail "$(stat distinct_colours) colours: a blank page?"
awk -v p="$(stat non_white_percent)" 'BEGIN { exit !(p >= 5) }' ||
  fail "$(stat non_white_percent)% non-white pixels: a blank page?"
orange=$(echo "$stats" | awk '$2 == "#e07b00" { print $3 }')
red=$(echo "$stats" | awk '$2 == "#c0392b" { print $3 }')
[ "$orange" -ge 150 ] || fail "$orange pixels of NLinear's orange: its line is not drawn"
[ "$red" -ge 60 ] || fail "$red pixels of repeat-last's red: its line is not drawn"
echo "browser: ok"
