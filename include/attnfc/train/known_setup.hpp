#pragma once
// Wiring what the cross-attention decoder reads (data/known_source.hpp) into a series:
// from the data section when training, from the model file when predicting.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "attnfc/data/csv.hpp"
#include "attnfc/data/known_source.hpp"
#include "attnfc/data/scaler.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/train/run_config.hpp"

namespace attnfc::train {

// Training: builds the series' KnownSource from data.future_covariates (the series' last
// channels), data.calendar (against its frequency), data.holidays and data.static (read
// from `table`, the file the series was loaded from, and encoded over its series), attaches
// it and the encoded statics to `series`, and sets model.known_features, static_numeric and
// static_categories; then checks the model config (model.decoder must read them).
// Nothing to read: the series and model stay as they are.
void attach_known(RunConfig& config, data::TimeSeries& series, const data::CsvTable* table);

// Predict and evaluate: the model's recipe on an input series; its static columns are read
// from `table` and encoded with the model's encoder (a category training never saw gets
// code 0, with one warning naming the file); numbers as the training file wrote them
// (data.decimal, data.thousands).
void attach_known(const std::shared_ptr<const data::KnownSource>& recipe, data::TimeSeries& series,
                  const data::CsvTable* table, const data::NumberFormat& number);

// The future covariates of a predict input, by series id: its rows after the history
// (LoadedModel::read_history) or a --future file (read_future).
class FutureRows {
 public:
  FutureRows() = default;
  explicit FutureRows(data::TimeSeries rows);
  bool empty() const { return rows_.rows() == 0; }
  bool has(const std::string& id) const { return index_.count(id) > 0; }
  // Series `id`'s values at `stamps`, [stamps x F] in original units. InputError naming
  // `what`, the step and its time when a stamp has no row.
  std::vector<float> at(const std::string& id, const std::vector<int64_t>& stamps,
                        const std::string& what) const;

 private:
  data::TimeSeries rows_;
  std::unordered_map<std::string, size_t> index_;  // id -> segment
};

// The decoder's inputs for a forecast after the last row of `series` (one series) into
// `out` (resized: one sample of the model's H steps): calendar and holidays at `stamps`,
// `future` ([H x F], original units) scaled like the series by `scaler`, and the statics.
void forecast_known(const data::TimeSeries& series, const data::Scaler& scaler,
                    const std::vector<int64_t>& stamps, const std::vector<float>& future,
                    SampleBuffers& out);

}  // namespace attnfc::train
