#pragma once
// Chronological train/val/test splits without leakage.
//
// A split part is a row range [begin, end) of the series that windows of
// context + horizon rows are cut from. Val and test begin `context` rows before
// their first target row, so every target lies inside its own part while the
// first forecast still sees a full look-back (the Informer/Autoformer/PatchTST
// protocol). The parts' target rows never overlap; train targets precede val
// targets, which precede test targets.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnfc::data {

struct TimeSeries;

struct RowRange {
  size_t begin = 0;
  size_t end = 0;  // exclusive
  size_t size() const { return end - begin; }
};

struct Split {
  RowRange train, val, test;
  size_t context = 0;
  // Rows whose values are targets in each part (part.begin + context for
  // val/test; train starts at its begin).
  RowRange val_targets() const { return {val.begin + context, val.end}; }
  RowRange test_targets() const { return {test.begin + context, test.end}; }
};

// The split of a panel: one Split per series kept, in the panel's row numbers
// (data::shifted), and why each series left out was left out.
struct PanelSplit {
  std::vector<Split> splits;
  std::vector<size_t> series;  // the segment index of each split
  std::vector<std::string> skipped;
};

// Target rows: train [0, train_rows), val next val_rows, test next test_rows.
// Rows after them are unused. InputError if they do not fit in n_rows or the
// train part is shorter than context.
Split split_by_rows(size_t n_rows, size_t train_rows, size_t val_rows, size_t test_rows,
                    size_t context);

// Autoformer "custom" rule: train = int(train_frac * n), test = int(test_frac * n),
// val = the rest (computed in double, exactly like the Python reference, so
// 0.7 * 2820 gives 1973). Fractions must be in [0, 1] and sum to <= 1 + 1e-9.
Split split_by_fractions(size_t n_rows, double train_frac, double test_frac, size_t context);

// Val targets start at the first row at or after val_start, test targets at the
// first row at or after test_start (timestamps as Unix seconds). Test runs to the end.
Split split_by_dates(const TimeSeries& series, int64_t val_start, int64_t test_start,
                     size_t context);

// The M4 protocol, per series: the last `horizon` rows are the test targets, the `horizon`
// rows before them the val targets, everything before those the train part.
Split split_last_horizons(size_t n_rows, size_t horizon, size_t context);

// Counted from the end of the series: the test targets are the `test_rows` rows that end
// `end_offset` rows before the last row, the val targets the `val_rows` rows before them,
// the train part everything earlier; the last `end_offset` rows are unused. A rolling-origin
// backtest (train/backtest.hpp) cuts its folds this way; last_horizon is (H, H, 0).
Split split_from_end(size_t n_rows, size_t val_rows, size_t test_rows, size_t end_offset,
                     size_t context);

// The same split moved `first_row` rows later (a series' split in the rows of its panel).
Split shifted(Split split, size_t first_row);

// The standard long-horizon benchmark protocols:
//   "etth"  (ETTh1, ETTh2): train 12*30*24 rows, val 4*30*24, test 4*30*24.
//   "ettm"  (ETTm1, ETTm2): the same months at 15 minutes (x4 rows).
//   "custom": split_by_fractions(n, 0.7, 0.2).
// Also accepts a dataset file name ("ETTh1.csv" -> "etth"; unknown -> "custom").
Split standard_split(std::string_view protocol_or_file, size_t n_rows, size_t context);

// Number of stride-1 windows of `length` rows in a range (0 if shorter).
inline size_t count_windows(const RowRange& range, size_t length) {
  return range.size() >= length ? range.size() - length + 1 : 0;
}

// InputError unless every part holds at least one window of context + horizon
// rows; the message says which part is too short and by how much.
void validate_split(const Split& split, size_t context, size_t horizon, const std::string& source);

}  // namespace attnfc::data
