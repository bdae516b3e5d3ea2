// libFuzzer target for the CSV reader and series loader (scripts/fuzz.sh, `make fuzz`).
// Any input must end in a loaded series or an attnfc::InputError: another
// exception, a crash, a sanitizer report, a hang or a NaN in the values is a bug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/data/csv.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/data/split.hpp"
#include "attnfc/data/time.hpp"

using namespace attnfc::data;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void exercise(const TimeSeries& s) {
  check(s.values.size() == s.rows() * s.num_channels());
  for (float v : s.values) check(std::isfinite(v));
  for (size_t r = 1; r < s.rows(); ++r) check(s.timestamps[r] > s.timestamps[r - 1]);
  (void)s.describe();
  if (s.frequency.known()) {
    for (int64_t t : s.future_timestamps(3)) check(t > s.timestamps.back());
  }
  for (int64_t t : s.timestamps) {
    // Printing and re-parsing a timestamp gives it back.
    const std::string text = format_timestamp(t, s.time_style);
    if (!s.time_style.pattern.empty()) {
      check(parse_timestamp_as(text, s.time_style.pattern) == t);
    } else if (s.time_style.format == TimeFormat::kDateTimeSeconds ||
               s.time_style.format == TimeFormat::kUnixSeconds) {
      check(parse_timestamp(text) == t);
    }
  }
  try {
    (void)standard_split("custom", s.rows(), 2);
  } catch (const attnfc::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the delimiter and options; the rest is the file.
  const uint8_t knobs = data[0];
  static const char kDelims[] = {',', ';', '\t', '|'};
  const char delim = kDelims[knobs & 3];
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const CsvTable table = CsvTable::parse(std::move(bytes), "fuzz.csv", delim);
    (void)summarize_columns(table, NumberFormat{delim == ';' ? ',' : '.', 0});
    CsvOptions opt;
    opt.delimiter = delim;
    // The formatted number path: decimal commas in ';' files, thousands commas in '|' ones.
    if (delim == ';') opt.number.decimal = ',';
    if (delim == '|') opt.number.thousands = ',';
    opt.missing = static_cast<MissingPolicy>((knobs >> 2) & 3);
    opt.regular = (knobs & 16) != 0;
    if (knobs & 32) opt.frequency = (knobs & 64) ? "B" : "1mo";
    if ((knobs & 128) && table.num_columns() > 1) {
      opt.time_column = table.header()[0];
      opt.value_columns = {table.header().back()};
    }
    exercise(load_series(table, opt));
  } catch (const attnfc::InputError& e) {
    const std::string msg = e.what();
    check(!msg.empty() && msg.find('\n') == std::string::npos);  // one line, always
  }
  return 0;
}
