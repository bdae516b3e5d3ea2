#!/usr/bin/env bash
# scripts/benchmark-published-windows.sh OUT BIN "suite_setting ..." "suite:h1,h2 ..."
# The suite table again, on the windows the published numbers were scored on: the LTSF code
# bases tested in batches of B windows with drop_last=True, so each published MSE leaves out
# the last W mod B test windows (scripts/published_ltsf.tsv: B per cell, and whose code).
# Each finished run of OUT/<suite_setting>/ is scored once more by `attnfc evaluate
# --drop-last B` (kept as runs/<run>/eval_published_windows.json, reused on a re-run). Per
# cell: the model (mean ± sample std over seeds), its linear start, our NLinear and
# repeat-last, over the same subset. Writes OUT/PUBLISHED_WINDOWS.md and prints it; exits 1
# when a run could not be scored (its row then says how many of the cell's runs were).
set -euo pipefail
OUT=$1 BIN=$2 CELLS=$3 HORIZONS=$4
TSV=$(dirname "$0")/published_ltsf.tsv
failed=0  # 1 when a run could not be scored again (its row says how many were)

lookup() {  # lookup SUITE SETTING H FIELD (4 mse, 5 who, 6 batch)
  awk -F'\t' -v s="$1" -v t="$2" -v h="$3" -v f="$4" \
    '!/^#/ && $1 == s && $2 == t && $3 == h { print $f; found = 1 } END { if (!found) print "-" }' "$TSV"
}
# The finished runs of SWEEP at horizon H.
runs_at() {  # runs_at SWEEP H
  awk -F, -v h="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["model.horizon"] == h && $col["status"] == "done" { print $col["run"] }' "$1/results.csv"
}
# Scores each finished run of SWEEP at horizon H on the first floor(W/B)*B test windows (again
# only when its JSON is missing, for another B, or older than the model); prints the JSON
# paths of those that were scored.
score_runs() {  # score_runs SWEEP H B
  runs_at "$1" "$2" | while read -r run; do
    local dir=$1/runs/$run json=$1/runs/$run/eval_published_windows.json
    if [ ! -s "$json" ] || [ "$dir/model.safetensors" -nt "$json" ] ||
      [ "$(jq -r '.drop_last.batch // 0' "$json")" != "$3" ]; then
      "$BIN" --log-level error evaluate -m "$dir/model.safetensors" \
        -i "$(jq -r '.data.path' "$dir/config.json")" --drop-last "$3" --json "$json" >/dev/null ||
        { echo "benchmark: evaluate --drop-last $3 failed for $dir" >&2; continue; }
    fi
    echo "$json"
  done
}
# "mean ± std | start | NLinear | repeat-last | windows" over the JSON files.
cell_stats() {
  [ $# -gt 0 ] || { echo "- | - | - | - | -"; return; }
  jq -r '[.test.models.attnfc.scaled.mse, (.test.models["linear-start"].scaled.mse // "-"),
          .test.models.nlinear.scaled.mse, .test.models["repeat-last"].scaled.mse,
          .test.windows] | map(tostring) | join(" ")' "$@" |
    awk '{ n++; m += $1; q += $1 * $1; if ($2 != "-") { ns++; s += $2 } nl = $3; rl = $4; w = $5 }
      END { v = n > 1 ? (q - n * (m / n)^2) / (n - 1) : 0
            printf "%.4f ± %.4f | %s | %.4f | %.4f | %d\n", m / n, (v > 0 ? sqrt(v) : 0),
              ns ? sprintf("%.4f", s / ns) : "-", nl, rl, w }'
}

{
  echo "## On the windows the published numbers were scored on"
  echo
  echo "The published runs tested in batches of B windows and dropped the last incomplete batch;"
  echo "here every run is scored again on those first floor(W/B)*B windows (\`attnfc evaluate"
  echo "--drop-last B\`; B and whose code it is: \`scripts/published_ltsf.tsv\`). The table above"
  echo "(every window) is the tool's own protocol; this one compares with the papers like for like."
  echo
  echo "| dataset | setting | H | B | windows (of all) | attnfc MSE | linear start | NLinear (ours) | repeat-last | best published |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for cell in $CELLS; do
    suite=${cell%%_*} setting=${cell#*_}
    for h in $(echo "$HORIZONS" | tr ' ' '\n' | sed -n "s/^$suite://p" | tr , ' '); do
      b=$(lookup "$suite" "$setting" "$h" 6)
      [ "$b" != "-" ] && [ -f "$OUT/$cell/results.csv" ] || continue
      mapfile -t files < <(score_runs "$OUT/$cell" "$h" "$b")
      IFS='|' read -r mse start nl rl kept <<<"$(cell_stats "${files[@]}")"
      runs=$(runs_at "$OUT/$cell" "$h" | wc -l)
      if [ "${#files[@]}" -ne "$runs" ]; then  # a failed re-score: say so in the row too
        failed=1 mse="$mse(${#files[@]} of $runs runs) "
      fi
      all=$(jq -r '.test.windows' "$(dirname "${files[0]:-/nonexistent}")/metrics.json" 2>/dev/null || echo -)
      echo "| $suite | $setting | $h | $b | ${kept// /} ($all) | ${mse% } |$start|$nl|$rl| $(lookup "$suite" "$setting" "$h" 4) ($(lookup "$suite" "$setting" "$h" 5)) |"
    done
  done
} >"$OUT/PUBLISHED_WINDOWS.md"
cat "$OUT/PUBLISHED_WINDOWS.md"
exit "$failed"
