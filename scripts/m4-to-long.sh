#!/bin/sh
# Converts the M4 competition's wide, ragged files (one row per series: "H1","605",...,
# short series right-padded with empty fields; datasets/README.md, section m4) to the long
# format attnfc reads with data.id_column / --id-column id:
#
#   scripts/m4-to-long.sh datasets/m4/Hourly-train.csv [datasets/m4/Hourly-test.csv] > m4.csv
#
# writes "id,time,value", one row per observation, each series' rows together in time
# order and the series in the train file's order.
#
# M4 publishes no timestamps with the series (their start dates sit in M4-info.csv, which
# is not bundled), so the time axis is synthetic: hourly, every series starting at
# 1970-01-01 00:00:00, written YYYY-MM-DD HH:MM:SS. Only the spacing is real; a calendar
# feature read from these times means nothing. With TEST, each series' 48 test values
# follow its train values on the same axis (the hours right after its last train hour).
# The files are kept unmodified: convert at run time. POSIX sh and awk (mawk is enough).
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 TRAIN.csv [TEST.csv] > out.csv" >&2
  exit 2
fi
for f in "$@"; do
  if [ ! -r "$f" ]; then
    echo "m4-to-long.sh: cannot read '$f'" >&2
    exit 2
  fi
done
train=$1
test_file=${2:-}

# With one file, awk reads it alone; with two, the test file first (NR == FNR), kept per id.
if [ -n "$test_file" ]; then
  set -- "$test_file" "$train"
else
  set -- "$train"
fi

awk -F, -v have_test="$([ -n "$test_file" ] && echo 1 || echo 0)" '
# Days since 1970-01-01 -> YYYY-MM-DD (the proleptic Gregorian calendar; H. Hinnant).
function civil(z,    era, doe, yoe, y, doy, mp, d, m) {
  z += 719468
  era = int(z / 146097)
  doe = z - era * 146097
  yoe = int((doe - int(doe / 1460) + int(doe / 36524) - int(doe / 146096)) / 365)
  y = yoe + era * 400
  doy = doe - (365 * yoe + int(yoe / 4) - int(yoe / 100))
  mp = int((5 * doy + 2) / 153)
  d = doy - int((153 * mp + 2) / 5) + 1
  m = mp + ((mp < 10) ? 3 : -9)
  if (m <= 2) y++
  return sprintf("%04d-%02d-%02d", y, m, d)
}
function stamp(hour,    day) {
  day = int(hour / 24)
  if (!(day in dates)) dates[day] = civil(day)
  return sprintf("%s %02d:00:00", dates[day], hour % 24)
}
# Writes the non-empty fields from the second on as rows from hour `start`; returns the
# next hour.
function emit(id, start,    i, v, h) {
  h = start
  for (i = 2; i <= NF; i++) {
    v = $i
    gsub(/"/, "", v)
    if (v == "") break  # the right-padding of a short series
    printf "%s,%s,%s\n", id, stamp(h), v
    h++
  }
  return h
}
{ sub(/\r$/, "") }
FNR == 1 { next }  # the header "V1","V2",...
have_test == 1 && NR == FNR {
  id = $1
  gsub(/"/, "", id)
  test_row[id] = $0
  next
}
FNR == 2 { print "id,time,value" }
{
  id = $1
  gsub(/"/, "", id)
  next_hour = emit(id, 0)
  if (have_test == 1) {
    if (!(id in test_row)) {
      printf "m4-to-long.sh: series %s is in the train file but not in the test file\n", id > "/dev/stderr"
      exit 2
    }
    $0 = test_row[id]
    emit(id, next_hour)
  }
}
' "$@"
