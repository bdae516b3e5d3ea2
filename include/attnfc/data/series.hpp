#pragma once
// A loaded time series: what train, predict, evaluate and inspect all read.
// Loading = CSV tokenize -> time axis -> value columns -> missing-value policy.
// Whatever is wrong is an InputError naming file, line, column, found, expected.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attnfc/base/enum_names.hpp"
#include "attnfc/data/csv.hpp"
#include "attnfc/data/time.hpp"
#include "attnfc/data/value_transform.hpp"

namespace attnfc::data {

struct KnownSource;  // known_source.hpp

// What to do with missing-value tokens ("" NA NaN null ?) in value columns.
enum class MissingPolicy {
  kError,        // default: InputError listing the first rows and columns
  kFfill,        // carry the last observed value forward (leading gap: first observed)
  kInterpolate,  // linear in row index between neighbours (ends: nearest observed)
  kMask,         // fill by interpolation and mark unobserved: excluded from loss/metrics
};
// "error" | "ffill" | "interpolate" | "mask" (any case, blanks trimmed); anything else is
// an InputError.
MissingPolicy parse_missing_policy(std::string_view text);

struct CsvOptions {
  std::string path;
  char delimiter = ',';
  // One timestamp column by name. If both this and time_columns are empty, the
  // time is found automatically: composite year,month[,day[,hour[,minute]]] columns,
  // else a column named date/datetime/time/timestamp/month/ds or Datum, Zeit,
  // Zeitstempel, fecha, hora, date_heure, tijd, czas, дата (any case; "data" only when
  // its first cell parses as a time), else the first column whose first three cells are
  // dates, else the first column if its first cell is Unix seconds.
  std::string time_column;
  // Composite time, in order year, month, day, hour, minute (a prefix of it,
  // e.g. {"year","month","day","hour"}). Integer cells.
  std::vector<std::string> time_columns;
  // Value columns by name. Empty = every numeric column except the time
  // columns (text columns are skipped). A named column holding text is an error.
  std::vector<std::string> value_columns;
  MissingPolicy missing = MissingPolicy::kError;
  // Where the reader's caller sets `missing`, named by the error a missing cell gives
  // under kError ("data.missing in the config" for a run, "--missing" for inspect).
  std::string missing_setting = "a missing-value policy";
  // Numbers written as 96,54 or 1.234,5 (data.decimal, data.thousands); the default is
  // the fast path. A bad thousands grouping is an InputError naming the cell.
  NumberFormat number;
  // A strftime-style format for the single time column (data.date_format: "%d/%m/%Y",
  // "%Y-%m-%dT%H:%M:%S%z", ...; offsets convert to UTC). "": ISO dates as parse_timestamp
  // reads them, and a/b/yyyy or a.b.yyyy dates whose order is told from the cells (a
  // field above 12 is the day; dotted dates are day-first; all fields <= 12 with slashes
  // is an InputError asking for the format). Named in messages as `date_format_setting`.
  std::string date_format;
  std::string date_format_setting = "data.date_format";
  // The transform whose domain the first domain.channels value columns (SIZE_MAX: all; the
  // targets come first) must respect when it is active: data.transform takes their log or a
  // power. A cell outside is an InputError naming it and `domain_setting`.
  ValueTransform domain;
  std::string domain_setting;
  // true: any gap or off-grid step is an InputError listing the first ones.
  bool regular = false;
  // "" = infer from the timestamps; else a Frequency::parse name ("1h", "B", "1mo").
  std::string frequency;
  // Long format: the column whose text (or integer) names the series each row belongs
  // to. "" = a wide file: one series, every row. See TimeSeries::segments.
  std::string id_column;
};

// One series of a panel: rows [begin, end) of the TimeSeries, in time order.
struct SeriesSegment {
  std::string id;  // the id column's cell, as written ("" for a wide file)
  size_t begin = 0;
  size_t end = 0;  // exclusive
  size_t rows() const { return end - begin; }
};

// Where the time axis skips periods or leaves the grid.
struct Gap {
  size_t row = 0;               // 0-based data row right after the gap
  int64_t before = 0;           // timestamp of row - 1
  int64_t after = 0;            // timestamp of row
  int64_t missing_periods = 0;  // whole periods absent; -1 if `after` is off the grid
};

struct TimeSeries {
  std::string source;                     // file path
  std::vector<std::string> channels;      // value column names, in output order
  std::vector<std::string> time_columns;  // column(s) the time came from
  std::vector<int64_t> timestamps;        // strictly increasing Unix seconds, one per row
  TimeStyle time_style;                   // how the input wrote its times
  Frequency frequency;                    // inferred or given
  bool frequency_inferred = true;
  // Row-major [rows x channels]. Never NaN: missing cells are filled per
  // `missing_policy` and have observed == 0.
  std::vector<float> values;
  std::vector<uint8_t> observed;  // [rows x channels], 1 = value read from the file
  std::vector<size_t> missing_per_channel;
  MissingPolicy missing_policy = MissingPolicy::kError;
  std::vector<Gap> gaps;  // in row order; total_missing_periods sums them
  int64_t total_missing_periods = 0;
  size_t off_grid_steps = 0;  // gaps with missing_periods == -1
  // A panel (long format, CsvOptions::id_column): the series one after another, each
  // sorted by time, in the order their ids first appear in the file. Timestamps increase
  // strictly within a segment, not across them; no window, gap or fill crosses a boundary.
  // Empty = one series over every row (a wide file, or a series built by hand): read it
  // through series_segments().
  std::string id_column;
  std::vector<SeriesSegment> segments;
  // The first target_channels channels are targets, the rest past covariates (inputs only:
  // the sampler flags their target values as not counting). 0 = every channel is a target.
  // Set by the train layer from data.past_covariates, not by the reader.
  size_t target_channels = 0;
  // A panel's rows are regrouped by series: table_rows[row] is the CsvTable data row it was
  // read from (for messages naming a line). Empty = row r came from data row r.
  std::vector<size_t> table_rows;
  // What the cross-attention decoder reads beside the values (known_source.hpp): the recipe,
  // shared by the scaled copies (null = nothing), and each series' encoded static values,
  // [num_series x S] and [num_series x G] in segment order. Set by the train layer.
  std::shared_ptr<const KnownSource> known;
  std::vector<float> static_numeric;
  std::vector<int32_t> static_codes;

  size_t rows() const { return timestamps.size(); }
  size_t num_channels() const { return channels.size(); }
  float value(size_t row, size_t channel) const { return values[row * channels.size() + channel]; }
  bool is_observed(size_t row, size_t channel) const {
    return observed[row * channels.size() + channel] != 0;
  }
  size_t total_missing() const;
  // Channels [0, target_channels), or every channel when target_channels is 0.
  size_t num_targets() const { return target_channels > 0 ? target_channels : num_channels(); }
  // Whether `channel` has an observed value in rows [first, first + count).
  bool observed_in(size_t channel, size_t first, size_t count) const;
  // The first target channel with no observed value in rows [first, first + count), or -1:
  // no forecaster can forecast a target from such a context (filled cells are no values).
  long unobserved_target(size_t first, size_t count) const;
  // The segments, or one segment {"", 0, rows()} when `segments` is empty.
  std::vector<SeriesSegment> series_segments() const;
  size_t num_series() const { return segments.empty() ? 1 : segments.size(); }
  // Index into series_segments() of the series that holds `row`.
  size_t segment_index(size_t row) const;
  size_t table_row(size_t row) const { return table_rows.empty() ? row : table_rows[row]; }
  // Index of a channel by name; InputError listing the channels if absent.
  size_t channel_index(std::string_view name) const;
  // The n timestamps after the last row, stepped by `frequency`
  // (InputError if the frequency is unknown).
  std::vector<int64_t> future_timestamps(size_t n) const;
  std::string format_time(int64_t t) const { return format_timestamp(t, time_style); }
  // One line, e.g. "17420 rows x 7 channels, 2016-07-01 00:00:00 .. 2018-06-26 19:00:00, 1h, no
  // gaps"; a panel of several series starts "414 series, 373,372 rows x 1 channel, " and
  // shows its earliest .. latest time.
  std::string describe() const;
};

// Reads options.path and builds the series.
TimeSeries load_series(const CsvOptions& options);
// Builds the series from an already tokenized table (options.path/delimiter unused).
TimeSeries load_series(const CsvTable& table, const CsvOptions& options);

// Infers the sampling frequency: business days if every row is a weekday at
// midnight and weekends are skipped, calendar months/years if every row falls
// on the same day of month at midnight, else the most common step in seconds.
// Returns an unknown Frequency for fewer than 2 timestamps.
Frequency infer_frequency(const std::vector<int64_t>& timestamps);
// The same over a panel: the rules hold for every row, the steps are counted within each
// segment only (the step from one series to the next is not a step).
Frequency infer_frequency(const std::vector<int64_t>& timestamps,
                          const std::vector<SeriesSegment>& segments);
// Gaps of `timestamps` relative to `freq` (see Gap).
std::vector<Gap> find_gaps(const std::vector<int64_t>& timestamps, const Frequency& freq);

}  // namespace attnfc::data

template <>
struct attnfc::EnumNames<attnfc::data::MissingPolicy> {
  static constexpr std::array<const char*, 4> words{"error", "ffill", "interpolate", "mask"};
};
