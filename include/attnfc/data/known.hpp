#pragma once
// Inputs known in advance (issue 19): calendar features of any timestamp, a user's holiday
// dates, and per-series static columns of a long file with their training-fit encoding.
// These are values a model may read for the forecast horizon too, since they do not
// depend on the series' future values. Bad input is an InputError naming the file, line,
// column or config key, what was found and what was expected.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "attnfc/base/enum_names.hpp"
#include "attnfc/data/csv.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/data/time.hpp"

namespace attnfc::data {

// ---- Calendar features ----

// Each feature is two columns, sin and cos of 2*pi*phase with phase in [0, 1): a cyclic
// encoding, so Sunday sits next to Monday and December next to January (a plain index
// would put them at opposite ends).
enum class CalendarFeature {
  kHourOfDay,   // (seconds since midnight) / 86400
  kDayOfWeek,   // weekday / 7, Monday = 0
  kDayOfMonth,  // (day - 1) / days in that month: the last day is always just before the 1st
  kMonth,       // (month - 1) / 12
  // (ISO 8601 week - 1) / 53. ISO weeks start on Monday, so the feature marks the same
  // retail week every year; in a year of 52 weeks the step from week 52 to week 1 is 2/53.
  kWeekOfYear,
};

// The features that vary at `freq`, in enum order (what "auto" picks). A feature is allowed
// when the step is shorter than its period, so that it is not the same on every row:
//   hour_of_day  seconds, step < 1 day
//   day_of_week  seconds, step < 7 days; business days, step < 5B
//   day_of_month seconds, step < 28 days; business days, step < 20B
//   month        seconds, step < 365 days; business days, step < 260B; months, step < 12
//   week_of_year seconds, step <= 7 days; business days, step <= 5B
// (a business day counts as 7/5 calendar days). An unknown frequency allows nothing.
std::vector<CalendarFeature> calendar_allowed(const Frequency& freq);

// Parses a config's list (e.g. data.calendar): {"auto"} = calendar_allowed(freq); else each
// word once (any case, blanks trimmed). An unknown word, a repeated one, "auto" beside other
// words, or a word `freq` does not allow is an InputError that starts with `key`.
std::vector<CalendarFeature> parse_calendar(const std::vector<std::string>& words,
                                            const Frequency& freq, std::string_view key);

size_t calendar_width(const std::vector<CalendarFeature>& features);  // 2 per feature
// Writes calendar_width(features) floats: for each feature its sin, then its cos.
void calendar_row(const std::vector<CalendarFeature>& features, int64_t unix_seconds, float* out);
// "hour_of_day.sin", "hour_of_day.cos", ... in the order calendar_row writes them.
std::vector<std::string> calendar_names(const std::vector<CalendarFeature>& features);

// ---- Holidays ----

struct Holidays {
  std::string source;         // the file they were read from
  std::vector<int64_t> days;  // sorted unique days since 1970-01-01
  bool empty() const { return days.empty(); }
  // Whether the civil date of t (any time of that day) is a holiday. No allocation.
  bool contains(int64_t unix_seconds) const;
};

// Reads a CSV of holiday dates: a header line, the column named "date" (any case) or else
// the first column, one date per row in any form parse_timestamp accepts or in
// `date_format` (data.date_format; "" for none), a time part only if it is 00:00. Other
// columns (a name) are ignored; a date twice is fine. An empty file, a file without data
// rows, or a cell that is not a date (named by file, line, column and the cell) is an
// InputError.
Holidays load_holidays(const std::string& path, const std::string& date_format = "");

// ---- Static features (long format) ----

// One static column of a panel: one value per series, constant over the series' rows.
struct StaticColumn {
  std::string name;
  bool categorical = false;       // true when some cell of the column is not a number
  std::vector<float> numeric;     // [num_series], when !categorical
  std::vector<std::string> text;  // [num_series], the cell as written (trimmed), when categorical
};

// Reads `columns` (e.g. data.static) from the table `series` was loaded from
// (load_series(table, options)), one value per series in series order. InputError for a
// column that is absent (the message lists the columns), named twice, or also the id, time
// or a value column of `series`; for a missing cell (empty, NA, ...) and for a value that
// changes within a series (both named by file, line, column and series id).
// `categorical` (optional, one flag per column): the kinds a model was trained with, so
// that predict reads a column as training did whatever its own cells look like (a
// categorical column whose file holds only "10" stays categorical; a numeric one holding
// text is refused naming the line and column).
// Numbers are read in `number` (data.decimal, data.thousands).
std::vector<StaticColumn> read_static(const CsvTable& table, const TimeSeries& series,
                                      const std::vector<std::string>& columns,
                                      const NumberFormat& number = {},
                                      const std::vector<bool>* categorical = nullptr);

// The encoding of static columns, fit on every series of the training file (a static value
// is no observation of the target, so the split does not restrict it) and kept with the model,
// so that predict encodes the same way.
struct StaticEncoder {
  struct Column {
    std::string name;
    bool categorical = false;
    float mean = 0, scale = 1;            // numeric: (value - mean) / scale
    std::vector<std::string> categories;  // categorical: code of categories[i] is i + 1
  };
  std::vector<Column> columns;

  // Numeric columns: mean and population standard deviation over the series (a constant
  // column gets scale 1). Categorical columns: the categories in order of first appearance;
  // code 0 is kept for a category not seen in training.
  static StaticEncoder fit(const std::vector<StaticColumn>& cols);
  size_t numeric_width() const;      // numeric columns
  size_t categorical_width() const;  // categorical columns
  // Per categorical column, in order: categories.size() + 1 (the unseen slot included).
  std::vector<int> category_sizes() const;

  // Encodes columns of the same names and kinds in the same order (else an InputError
  // naming the column and what the model expects): numeric = [num_series x numeric_width()]
  // row-major, standardised; codes = [num_series x categorical_width()]. Returns how many
  // (series, column) cells held a category not seen in training (code 0; the caller warns).
  size_t encode(const std::vector<StaticColumn>& cols, std::vector<float>* numeric,
                std::vector<int32_t>* codes) const;

  // {"columns": [{"name", "kind": "numeric", "mean", "scale"} or {"name", "kind":
  // "categorical", "categories": [...]}]}; floats round-trip exactly. from_json checks
  // every key and throws an InputError starting with `what` (e.g. "model file X:
  // static_encoder") and naming the key.
  nlohmann::json to_json() const;
  static StaticEncoder from_json(const nlohmann::json& j, const std::string& what);
};

}  // namespace attnfc::data

template <>
struct attnfc::EnumNames<attnfc::data::CalendarFeature> {
  static constexpr std::array<const char*, 5> words{"hour_of_day", "day_of_week", "day_of_month",
                                                    "month", "week_of_year"};
};
