// Least-squares start for the linear shortcut (see linear_init.hpp).
#include "attnfc/train/linear_init.hpp"

#include <spdlog/spdlog.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/kernels/gemm.hpp"
#include "attnfc/train/baselines.hpp"

namespace attnfc::train {

namespace {

// The shortcut's validation MSE for each candidate fit, on every complete stride-1
// validation window (context L, horizon H), each window and channel weighted equally:
// inputs are the K steps ending at the context's end as changes from its last value,
// 0 before the window start (as in the model). One GEMM per candidate.
// A panel: the windows of every series' validation part, in series order.
struct ValPart {
  const float* val;
  int64_t rows;
};
std::vector<double> validation_mse(const std::vector<NLinear>& fits,
                                   const std::vector<ValPart>& parts, int C, int L, int K, int H) {
  std::vector<float> x, y;  // [windows, K], [windows, H]
  int64_t windows = 0;
  for (const auto& [val, rows] : parts)
    for (int c = 0; c < C; ++c)
      for (int64_t s = 0; s + L + H <= rows; ++s) {
        bool ok = true;
        for (int64_t t = s; t < s + L + H && ok; ++t) ok = !std::isnan(val[t * C + c]);
        if (!ok) continue;
        const float last = val[(s + L - 1) * C + c];
        for (int k = 0; k < K; ++k) {
          const int64_t t = s + L - K + k;
          x.push_back(t >= s ? val[t * C + c] - last : 0.0f);
        }
        for (int h = 0; h < H; ++h) y.push_back(val[(s + L + h) * C + c] - last);
        ++windows;
      }
  std::vector<double> mse(fits.size(), std::numeric_limits<double>::infinity());
  if (windows == 0) return mse;
  std::vector<float> w(static_cast<size_t>(H) * K), pred(static_cast<size_t>(windows) * H);
  for (size_t f = 0; f < fits.size(); ++f) {
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(fits[f].weights()[i]);
    kernels::gemm(false, true, static_cast<int>(windows), H, K, 1.0f, x.data(), K, w.data(), K,
                  0.0f, pred.data(), H);
    double total = 0;
    for (int64_t i = 0; i < windows; ++i) {
      double se = 0;
      for (int h = 0; h < H; ++h) {
        const double e = pred[i * H + h] + fits[f].bias()[h] - y[i * H + h];
        se += e * e;
      }
      total += se / H;
    }
    mse[f] = total / static_cast<double>(windows);
  }
  return mse;
}

}  // namespace

LinearStart init_linear_shortcut(model::PatchTransformer& net, const SeriesRef& scaled,
                                 const data::Split& split, double ridge) {
  return init_linear_shortcut(net, scaled, std::vector<data::Split>{split}, ridge);
}

LinearStart init_linear_shortcut(model::PatchTransformer& net, const SeriesRef& scaled,
                                 const std::vector<data::Split>& splits, double ridge) {
  const model::ModelConfig& cfg = net.config();
  const int K = cfg.linear_lookback, H = cfg.horizon, L = cfg.context_length;
  if (K <= 0)
    throw InputError("train.linear_init: \"least_squares\" needs model.linear_lookback > 0");
  if (cfg.target != model::HeadTarget::kDeltaFromLast)
    throw InputError(
        "train.linear_init: \"least_squares\" fits changes from the last value, which needs "
        "model.target = \"delta\" (found \"" +
        std::string(enum_name(cfg.target)) + "\"); use \"zero\"");
  const ag::Tensor weight = net.parameters().find("linear_skip.weight");
  const ag::Tensor bias = net.parameters().find("linear_skip.bias");
  if (!weight.defined() || weight.numel() != static_cast<int64_t>(K) * H || !bias.defined())
    throw std::logic_error("init_linear_shortcut: model has no linear_skip [H, K] and bias [H]");

  // The normal equations X^T X of K + 1 features in double, and a copy per solve: a
  // lookback of tens of thousands would ask for tens of GB before fitting anything.
  constexpr double kMaxBytes = 2.0 * (1u << 30);
  const double bytes = 2.0 * 8.0 * (K + 1.0) * (K + 1.0);
  if (bytes > kMaxBytes)
    throw InputError("model.linear_lookback: found " + std::to_string(K) +
                     ", whose least-squares start needs " + std::to_string(bytes / (1 << 30)) +
                     " GiB; expected at most " +
                     std::to_string(static_cast<int>(std::sqrt(kMaxBytes / 16.0)) - 1) +
                     " (or train.linear_init: \"zero\")");
  const int C = scaled.channels;
  std::vector<SeriesRef> trains;
  std::vector<ValPart> vals;
  for (const data::Split& split : splits) {
    trains.push_back(
        {scaled.data + split.train.begin * C, static_cast<int64_t>(split.train.size()), C});
    vals.push_back({scaled.data + split.val.begin * C, static_cast<int64_t>(split.val.size())});
  }
  const bool automatic = ridge < 0;
  const std::vector<double> ridges =
      automatic ? std::vector<double>(std::begin(kRidgeCandidates), std::end(kRidgeCandidates))
                : std::vector<double>{ridge};
  std::vector<NLinear> fits;
  try {
    fits = NLinear::fit_path(trains, K, H, ridges);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("train.linear_init: cannot fit the linear shortcut: ") + e.what() +
                     " (use \"zero\" or a shorter model.linear_lookback)");
  }
  LinearStart start;
  size_t best = 0;
  if (automatic) {
    const std::vector<double> mse = validation_mse(fits, vals, C, L, K, H);
    for (size_t i = 0; i < mse.size(); ++i) {
      spdlog::debug("linear shortcut: ridge {:g}, validation MSE {:.5f}", ridges[i], mse[i]);
      if (mse[i] < mse[best]) best = i;  // ties keep the smaller ridge
    }
    start.val_mse = mse[best];
  }
  const NLinear& fit = fits[best];
  float* dst = weight.data();  // [H, K], the layout of fit.weights()
  for (size_t i = 0; i < fit.weights().size(); ++i) dst[i] = static_cast<float>(fit.weights()[i]);
  float* b = bias.data();  // [H], in data units like the model's
  for (size_t i = 0; i < fit.bias().size(); ++i) b[i] = static_cast<float>(fit.bias()[i]);
  start.windows = fit.fit_windows();
  start.ridge = ridges[best];
  return start;
}

}  // namespace attnfc::train
