#pragma once
// Forecasts of many windows in one model call. predict forecasts a panel's series in
// batches: one series at a time repacked every weight matrix for a one-row product, and
// that cost 4 s for M4 Hourly's 414 series with a five-network ensemble. A window's
// forecast does not depend on the batch it is computed in (the GEMM's unpacked path does
// the packed path's arithmetic), so the bits are those of one series at a time.
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/base/sample.hpp"
#include "attnfc/data/scaler.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/train/loaded_model.hpp"

namespace attnfc::cli {

// One series to forecast: its last L rows are read, scaled by `scaler`, with the decoder's
// inputs `known` (capacity 0 for a model without them). The pointers must outlive the call.
struct SeriesToForecast {
  const data::TimeSeries* series;
  const data::Scaler* scaler;
  const SampleBuffers* known;
  const std::string* label;  // how errors name the series ("in.csv: series 'H1'")
};

// What forecast_windows throws when a window's context holds nothing the model can read
// (model::UnobservedContext): the message names the series and column, window() is its
// index among the windows, so that a panel can leave that series out and go on.
class UnreadableWindow : public InputError {
 public:
  UnreadableWindow(const std::string& found, size_t window)
      : InputError(found + "; expected at least one value there"), found_(found), window_(window) {}
  const std::string& found() const { return found_; }  // what() without what was expected
  size_t window() const { return window_; }

 private:
  std::string found_;
  size_t window_;
};

// The forecast of each window in original units, H steps: [H, C] for a point model; with
// quantiles [H, C, Q], each step and channel's point forecast first, then the other levels
// in increasing order. Series shorter than L are front-padded with unobserved steps, and
// missing values are unobserved, as in training. All windows have the same channels.
std::vector<std::vector<float>> forecast_windows(const train::LoadedModel& lm, int H,
                                                 const std::vector<SeriesToForecast>& windows);

}  // namespace attnfc::cli
