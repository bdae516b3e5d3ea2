// What the cross-attention decoder reads, wired into a series (known_setup.hpp).
#include "attnfc/train/known_setup.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "attnfc/base/error.hpp"

namespace attnfc::train {

namespace {

std::vector<std::string> static_names(const data::StaticEncoder& e) {
  std::vector<std::string> out;
  for (const auto& c : e.columns) out.push_back(c.name);
  return out;
}

// The encoded statics of every series of `series`, read from `table`.
void encode_statics(const data::StaticEncoder& enc, data::TimeSeries& series,
                    const data::CsvTable* table, const data::NumberFormat& number) {
  series.static_numeric.clear();
  series.static_codes.clear();
  if (enc.columns.empty()) return;
  if (!table) throw std::logic_error("attach_known: static columns need the table");
  std::vector<bool> kinds;  // as training read them
  for (const auto& c : enc.columns) kinds.push_back(c.categorical);
  const std::vector<data::StaticColumn> cols =
      data::read_static(*table, series, static_names(enc), number, &kinds);
  const size_t unseen = enc.encode(cols, &series.static_numeric, &series.static_codes);
  if (unseen > 0)
    spdlog::warn(
        "{}: {} static value(s) name a category the model was not trained on; read as "
        "'unseen'",
        series.source, unseen);
}

}  // namespace

void attach_known(RunConfig& config, data::TimeSeries& series, const data::CsvTable* table) {
  const DataConfig& d = config.data;
  // Derived from the data every time: a resolved config.json reused without these inputs
  // must not keep the widths of the run it came from.
  config.model.known_features = 0;
  config.model.static_numeric = 0;
  config.model.static_categories.clear();
  if (!d.reads_known()) return;
  auto k = std::make_shared<data::KnownSource>();
  k->future_channels = d.future_covariates.size();
  if (!d.calendar.empty()) {
    if (!series.frequency.known())
      throw InputError("data.calendar: " + series.source +
                       ": the time step of the series is unknown, so no calendar feature "
                       "varies; expected data.frequency, or no data.calendar");
    k->calendar = data::parse_calendar(d.calendar, series.frequency, "data.calendar");
    if (k->calendar.empty())
      throw InputError("data.calendar: \"auto\": at the series' frequency " +
                       series.frequency.name() +
                       " no calendar feature varies from row to row; expected no data.calendar");
  }
  if (!d.holidays.empty()) k->holidays = data::load_holidays(d.holidays, d.csv.date_format);
  if (!d.static_columns.empty()) {
    if (!table) throw std::logic_error("attach_known: static columns need the table");
    k->statics =
        data::StaticEncoder::fit(data::read_static(*table, series, d.static_columns, d.csv.number));
  }
  encode_statics(k->statics, series, table, d.csv.number);
  series.known = k;
  config.model.known_features = static_cast<int>(k->width());
  config.model.static_numeric = static_cast<int>(k->numeric_width());
  config.model.static_categories = k->statics.category_sizes();
  config.model.validate();
}

void attach_known(const std::shared_ptr<const data::KnownSource>& recipe, data::TimeSeries& series,
                  const data::CsvTable* table, const data::NumberFormat& number) {
  if (!recipe) return;
  encode_statics(recipe->statics, series, table, number);
  series.known = recipe;
}

FutureRows::FutureRows(data::TimeSeries rows) : rows_(std::move(rows)) {
  if (rows_.rows() == 0) return;  // no future rows: has() is false for every id
  const std::vector<data::SeriesSegment> segs = rows_.series_segments();
  for (size_t k = 0; k < segs.size(); ++k) index_.emplace(segs[k].id, k);
}

std::vector<float> FutureRows::at(const std::string& id, const std::vector<int64_t>& stamps,
                                  const std::string& what) const {
  const auto it = index_.find(id);
  if (it == index_.end())
    throw InputError(what + ": no future covariate rows for this series in " + rows_.source);
  const data::SeriesSegment seg = rows_.segments.empty() ? data::SeriesSegment{"", 0, rows_.rows()}
                                                         : rows_.segments[it->second];
  const size_t F = rows_.num_channels();
  std::vector<float> out(stamps.size() * F);
  const auto first = rows_.timestamps.begin() + static_cast<ptrdiff_t>(seg.begin);
  const auto last = rows_.timestamps.begin() + static_cast<ptrdiff_t>(seg.end);
  for (size_t h = 0; h < stamps.size(); ++h) {
    const auto hit = std::lower_bound(first, last, stamps[h]);
    if (hit == last || *hit != stamps[h]) {
      const bool named = what.find(rows_.source) != std::string::npos;
      throw InputError(what + ": the future covariates" + (named ? "" : " in " + rows_.source) +
                       " have no row at " + rows_.format_time(stamps[h]) + " (forecast step " +
                       std::to_string(h + 1) + " of " + std::to_string(stamps.size()) +
                       "); expected one at every forecast step after the history");
    }
    const size_t r = static_cast<size_t>(hit - rows_.timestamps.begin());
    std::copy_n(rows_.values.data() + r * F, F, out.data() + h * F);
  }
  return out;
}

void forecast_known(const data::TimeSeries& series, const data::Scaler& scaler,
                    const std::vector<int64_t>& stamps, const std::vector<float>& future,
                    SampleBuffers& out) {
  const data::KnownSource* k = series.known.get();
  if (!k) return;
  const size_t H = stamps.size(), C = series.num_channels(), F = k->future_channels;
  out = SampleBuffers(1, 0, static_cast<int64_t>(H), 0);
  data::reserve_known(series, out);
  // The covariates are scaled as the series' own columns are: a [H x C] block with the
  // targets and past covariates left at 0, transformed, and its last F columns read.
  std::vector<float> block(H * C, 0.0f);
  for (size_t h = 0; h < H && F > 0; ++h)
    std::copy_n(future.data() + h * F, F, block.data() + h * C + (C - F));
  scaler.transform(block.data(), H);
  const size_t K = k->width();
  for (size_t h = 0; h < H && K > 0; ++h)
    k->step(stamps[h], block.data() + h * C + (C - F), out.known.data() + h * K);
  // One series (data::series_of): its statics are the first S and G values.
  std::copy_n(series.static_numeric.begin(), out.static_numeric.size(), out.static_numeric.begin());
  std::copy_n(series.static_codes.begin(), out.static_codes.size(), out.static_codes.begin());
}

}  // namespace attnfc::train
