// Chronological splits. Val/test parts begin `context` rows before their first
// target so the first forecast has a full look-back without leaking targets.
#include "attnfc/data/split.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "attnfc/base/error.hpp"
#include "attnfc/data/series.hpp"

namespace attnfc::data {

namespace {

// Target boundaries t1 <= t2 <= t3: train [0, t1), val [t1, t2), test [t2, t3).
Split make_split(size_t n_rows, size_t t1, size_t t2, size_t t3, size_t context,
                 const std::string& how) {
  if (t3 > n_rows) {
    throw InputError(how + ": needs " + std::to_string(t3) + " rows, found " +
                     std::to_string(n_rows) + "; expected a longer series or smaller parts");
  }
  if (t1 < context) {
    throw InputError(how + ": the train part has " + std::to_string(t1) +
                     " rows, fewer than the context length " + std::to_string(context) +
                     "; expected at least context rows before the val part begins");
  }
  Split s;
  s.context = context;
  s.train = {0, t1};
  s.val = {t1 - context, t2};
  s.test = {t2 - context, t3};
  return s;
}

}  // namespace

Split split_by_rows(size_t n_rows, size_t train_rows, size_t val_rows, size_t test_rows,
                    size_t context) {
  return make_split(n_rows, train_rows, train_rows + val_rows, train_rows + val_rows + test_rows,
                    context, "split by rows");
}

Split split_by_fractions(size_t n_rows, double train_frac, double test_frac, size_t context) {
  const auto bad = [](double f) { return !(f >= 0.0 && f <= 1.0); };
  if (bad(train_frac) || bad(test_frac) || train_frac + test_frac > 1.0 + 1e-9) {
    throw InputError("split by fractions: found train " + std::to_string(train_frac) + ", test " +
                     std::to_string(test_frac) +
                     "; expected fractions in [0, 1] that sum to at most 1");
  }
  // int(frac * n) in double, exactly as the Python reference code does.
  const size_t n_train = static_cast<size_t>(train_frac * static_cast<double>(n_rows));
  const size_t n_test = static_cast<size_t>(test_frac * static_cast<double>(n_rows));
  const size_t n_val = n_rows - std::min(n_rows, n_train + n_test);
  return make_split(n_rows, n_train, n_train + n_val, n_rows, context, "split by fractions");
}

Split split_by_dates(const TimeSeries& series, int64_t val_start, int64_t test_start,
                     size_t context) {
  if (test_start < val_start) {
    throw InputError(series.source + ": split by dates: the test part starts (" +
                     series.format_time(test_start) + ") before the val part (" +
                     series.format_time(val_start) + "); expected val before test");
  }
  const auto& ts = series.timestamps;
  const size_t t1 =
      static_cast<size_t>(std::lower_bound(ts.begin(), ts.end(), val_start) - ts.begin());
  const size_t t2 =
      static_cast<size_t>(std::lower_bound(ts.begin(), ts.end(), test_start) - ts.begin());
  return make_split(ts.size(), t1, t2, ts.size(), context, series.source + ": split by dates");
}

Split split_last_horizons(size_t n_rows, size_t horizon, size_t context) {
  const size_t held_out = 2 * horizon;
  if (n_rows < held_out + context)
    throw InputError("split \"last_horizon\": needs " + std::to_string(held_out + context) +
                     " rows (context " + std::to_string(context) + " + 2 x horizon " +
                     std::to_string(horizon) + "), found " + std::to_string(n_rows));
  return make_split(n_rows, n_rows - held_out, n_rows - horizon, n_rows, context,
                    "split \"last_horizon\"");
}

Split split_from_end(size_t n_rows, size_t val_rows, size_t test_rows, size_t end_offset,
                     size_t context) {
  const size_t tail = val_rows + test_rows + end_offset;
  const std::string how = "split from the end (val " + std::to_string(val_rows) + ", test " +
                          std::to_string(test_rows) + ", end offset " + std::to_string(end_offset) +
                          " rows)";
  if (n_rows < tail + context)
    throw InputError(how + ": needs " + std::to_string(tail + context) + " rows (context " +
                     std::to_string(context) + " before them), found " + std::to_string(n_rows));
  const size_t t3 = n_rows - end_offset;
  return make_split(n_rows, t3 - test_rows - val_rows, t3 - test_rows, t3, context, how);
}

Split shifted(Split split, size_t first_row) {
  for (RowRange* r : {&split.train, &split.val, &split.test}) {
    r->begin += first_row;
    r->end += first_row;
  }
  return split;
}

Split standard_split(std::string_view name, size_t n_rows, size_t context) {
  std::string key(name);
  if (const size_t slash = key.find_last_of('/'); slash != std::string::npos) {
    key = key.substr(slash + 1);
  }
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  constexpr size_t kMonth = 30 * 24;  // hours in the protocol's 30-day month
  if (key.rfind("etth", 0) == 0) {
    return make_split(n_rows, 12 * kMonth, 16 * kMonth, 20 * kMonth, context, "ETTh split");
  }
  if (key.rfind("ettm", 0) == 0) {
    return make_split(n_rows, 4 * 12 * kMonth, 4 * 16 * kMonth, 4 * 20 * kMonth, context,
                      "ETTm split");
  }
  return split_by_fractions(n_rows, 0.7, 0.2, context);
}

void validate_split(const Split& split, size_t context, size_t horizon, const std::string& source) {
  const size_t length = context + horizon;
  const std::pair<const char*, RowRange> parts[] = {
      {"train", split.train}, {"val", split.val}, {"test", split.test}};
  for (const auto& [name, range] : parts) {
    if (count_windows(range, length) > 0) continue;
    throw InputError(source + ": the " + name + " part has " + std::to_string(range.size()) +
                     " rows (" + std::to_string(range.begin) + " to " + std::to_string(range.end) +
                     "), " + std::to_string(length - range.size()) +
                     " too few for one window; expected at least context + horizon = " +
                     std::to_string(length) + " rows");
  }
}

}  // namespace attnfc::data
