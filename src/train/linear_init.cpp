// Least-squares start for the linear shortcut (see linear_init.hpp).
#include "attnfc/train/linear_init.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/train/baselines.hpp"

namespace attnfc::train {

int64_t init_linear_shortcut(model::PatchTransformer& net, const data::TimeSeries& scaled,
                             const data::Split& split, double ridge) {
  const model::ModelConfig& cfg = net.config();
  const int K = cfg.linear_lookback, H = cfg.horizon;
  if (K <= 0)
    throw InputError("train.linear_init: \"least_squares\" needs model.linear_lookback > 0");
  if (cfg.target != model::HeadTarget::kDeltaFromLast)
    throw InputError(
        "train.linear_init: \"least_squares\" fits changes from the last value, which needs "
        "model.target = \"delta\" (found \"" +
        std::string(model::to_string(cfg.target)) + "\"); use \"zero\"");
  const ag::Tensor weight = net.parameters().find("linear_skip.weight");
  if (!weight.defined() || weight.numel() != static_cast<int64_t>(K) * H)
    throw std::logic_error("init_linear_shortcut: model has no linear_skip.weight [H, K]");

  // Training rows with NaN where a value was not read from the file, so that no
  // filled-in value becomes a least-squares target.
  const size_t C = scaled.num_channels();
  std::vector<float> rows(split.train.size() * C);
  for (size_t r = 0; r < split.train.size(); ++r)
    for (size_t c = 0; c < C; ++c) {
      const size_t i = (split.train.begin + r) * C + c;
      rows[r * C + c] = scaled.observed[i] ? scaled.values[i] : std::nanf("");
    }
  const SeriesRef train{rows.data(), static_cast<int64_t>(split.train.size()), static_cast<int>(C)};
  NLinear fit;
  try {
    fit = NLinear::fit(train, K, H, ridge);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("train.linear_init: cannot fit the linear shortcut: ") + e.what() +
                     " (use \"zero\" or a shorter model.linear_lookback)");
  }
  const std::vector<double>& w = fit.weights();  // [H, K], the layout of the parameter
  float* dst = weight.data();
  for (size_t i = 0; i < w.size(); ++i) dst[i] = static_cast<float>(w[i]);
  const std::vector<double>& b = fit.bias();  // [H], in data units like the model's
  float* bias = net.parameters().find("linear_skip.bias").data();
  for (size_t i = 0; i < b.size(); ++i) bias[i] = static_cast<float>(b[i]);
  return fit.fit_windows();
}

}  // namespace attnfc::train
