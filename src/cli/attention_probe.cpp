// Toy attention computations for `attnfc attention demo` (see attention_probe.hpp).
// Scores come from the GEMM kernel and weights from the masked softmax kernel, the same
// code paths the model runs, so the demo shows the library's numbers.
#include "attention_probe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/kernels/gemm.hpp"
#include "attnfc/kernels/random.hpp"
#include "attnfc/kernels/softmax.hpp"

namespace attnfc::cli {

ProbeSeries parse_probe_series(const std::string& name) {
  if (const auto kind = enum_from_name<ProbeSeries>(name)) return *kind;
  throw InputError("--series: unknown series '" + name + "'; expected " +
                   enum_word_list<ProbeSeries>());
}

namespace {

void embed(ProbeSeries kind, double period, int length, uint64_t seed, float* e) {
  const double two_pi = 2.0 * std::numbers::pi;
  for (int t = 0; t < length; ++t) {
    double a = 0, b = 0;
    switch (kind) {
      case ProbeSeries::Sine:
        // f(t + P/4) = sin(2 pi t/P + pi/2) = cos(2 pi t/P).
        a = std::sin(two_pi * t / period);
        b = std::cos(two_pi * t / period);
        break;
      case ProbeSeries::Trend:
        a = t / period;
        b = t / period + 0.25;
        break;
      case ProbeSeries::Noise:
        a = kernels::random_normal(seed, 2 * static_cast<uint64_t>(t));
        b = kernels::random_normal(seed, 2 * static_cast<uint64_t>(t) + 1);
        break;
    }
    e[2 * t] = static_cast<float>(a);
    e[2 * t + 1] = static_cast<float>(b);
  }
}

// Mean entropy, mean max weight and mean Jacobian norm of softmax rows p [rows, cols].
void row_stats(const std::vector<float>& p, int rows, int cols, SoftmaxStats& s) {
  double entropy = 0, max_weight = 0, grad = 0;
  int saturated = 0;
  for (int i = 0; i < rows; ++i) {
    const float* row = p.data() + static_cast<size_t>(i) * cols;
    double h = 0, mx = 0;
    for (int j = 0; j < cols; ++j) {
      // 0 log 0 = 0: a weight that underflowed to zero carries no entropy.
      if (row[j] > 0) h -= row[j] * std::log(static_cast<double>(row[j]));
      mx = std::max(mx, static_cast<double>(row[j]));
    }
    entropy += h;
    max_weight += mx;
    saturated += mx > 0.99;
    grad += softmax_jacobian_norm(row, cols);
  }
  s.entropy = entropy / rows;
  s.max_weight = max_weight / rows;
  s.softmax_grad_norm = grad / rows;
  s.saturated_rows = static_cast<double>(saturated) / rows;
}

double variance(const std::vector<float>& x) {
  double mean = 0;
  for (float v : x) mean += v;
  mean /= static_cast<double>(x.size());
  double ss = 0;
  for (float v : x) ss += (v - mean) * (v - mean);
  return ss / static_cast<double>(x.size());
}

}  // namespace

double softmax_jacobian_norm(const float* p, int n) {
  double s2 = 0, s3 = 0;
  for (int i = 0; i < n; ++i) {
    const double v = p[i];
    s2 += v * v;
    s3 += v * v * v;
  }
  // ||diag(p) - p p^T||_F^2 = sum p^2 - 2 sum p^3 + (sum p^2)^2, which is >= 0 for a
  // probability vector; clamp the rounding error at one-hot p.
  return std::sqrt(std::max(0.0, s2 - 2 * s3 + s2 * s2));
}

LagProfile causal_lag_profile(const float* weights, int n) {
  LagProfile r;
  r.mass.assign(n, 0.0);
  r.lift.assign(n, 0.0);
  for (int lag = 0; lag < n; ++lag) {
    double mass = 0, uniform = 0;
    for (int i = lag; i < n; ++i) {
      mass += weights[static_cast<size_t>(i) * n + (i - lag)];
      uniform += 1.0 / (i + 1);
    }
    r.mass[lag] = mass / (n - lag);
    r.lift[lag] = mass / uniform;
  }
  double best = 0;
  for (int lag = 1; lag < n; ++lag) best = std::max(best, r.lift[lag]);
  for (int lag = 1; lag < n && r.dominant_lag == 0 && best > 0; ++lag)
    if (r.lift[lag] >= 0.98 * best) r.dominant_lag = lag;
  if (n > 4) {
    const std::vector<float> earlier(r.lift.begin() + 1, r.lift.end());
    r.lift_period = autocorrelation_peak(autocorrelation(earlier, (n - 1) / 2));
  }
  return r;
}

std::vector<double> autocorrelation(std::span<const float> x, int max_lag) {
  const int64_t n = static_cast<int64_t>(x.size());
  max_lag = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(max_lag, n - 1)));
  std::vector<double> acf(static_cast<size_t>(max_lag) + 1, 0.0);
  double mean = 0;
  int64_t count = 0;
  for (float v : x)
    if (!std::isnan(v)) mean += v, ++count;
  if (count == 0) return acf;
  mean /= static_cast<double>(count);
  double var = 0;
  for (float v : x)
    if (!std::isnan(v)) var += (v - mean) * (v - mean);
  if (!(var > 0)) return acf;
  for (int lag = 0; lag <= max_lag; ++lag) {
    double s = 0;
    for (int64_t t = 0; t + lag < n; ++t) {
      const float a = x[t], b = x[t + lag];
      if (!std::isnan(a) && !std::isnan(b)) s += (a - mean) * (b - mean);
    }
    acf[lag] = s / var;
  }
  return acf;
}

int autocorrelation_peak(const std::vector<double>& acf, double min_value) {
  int best = 0;
  for (size_t l = 2; l + 1 < acf.size(); ++l) {
    const bool local_max = acf[l] >= acf[l - 1] && acf[l] >= acf[l + 1] && acf[l] > min_value;
    if (local_max && (best == 0 || acf[l] > acf[best])) best = static_cast<int>(l);
  }
  return best;
}

SeriesAttention series_attention(ProbeSeries kind, double period, int length, bool scaled,
                                 uint64_t seed) {
  if (!(period >= 2.0) || !std::isfinite(period))
    throw InputError("--period: expected a number >= 2, got " + std::to_string(period));
  if (length < 1 || length > 4096)
    throw InputError("--length: expected 1..4096 positions, got " + std::to_string(length));
  SeriesAttention r;
  r.length = length;
  const int L = length, D = r.dim;
  r.embedding.resize(static_cast<size_t>(L) * D);
  embed(kind, period, L, seed, r.embedding.data());

  // scores [L, L] = s * E E^T; then the causal row softmax (query i sees keys j <= i).
  r.weights.resize(static_cast<size_t>(L) * L);
  const float s = scaled ? 1.0f / std::sqrt(static_cast<float>(D)) : 1.0f;
  kernels::gemm(false, true, L, L, D, s, r.embedding.data(), D, r.embedding.data(), D, 0.0f,
                r.weights.data(), L);
  kernels::RowMask mask;
  mask.causal = true;
  mask.rows_per_matrix = L;
  kernels::softmax_forward(r.weights.data(), r.weights.data(), L, L, mask);

  r.output.resize(static_cast<size_t>(L) * D);
  kernels::gemm(false, false, L, D, L, 1.0f, r.weights.data(), L, r.embedding.data(), D, 0.0f,
                r.output.data(), D);

  for (int i = 0; i < L; ++i) {
    double sum = 0;
    for (int j = 0; j < L; ++j) sum += r.weights[static_cast<size_t>(i) * L + j];
    r.max_row_sum_error = std::max(r.max_row_sum_error, std::abs(sum - 1.0));
  }
  LagProfile lags = causal_lag_profile(r.weights.data(), L);
  r.lag_profile = std::move(lags.mass);
  r.lag_lift = std::move(lags.lift);
  r.dominant_lag = lags.dominant_lag;
  return r;
}

WidthProbe probe_width(int width, int queries, int keys, uint64_t seed) {
  if (width < 1 || width > 65536)
    throw InputError("--width: expected 1..65536, got " + std::to_string(width));
  if (queries < 2 || queries > 4096 || keys < 2 || keys > 4096)
    throw InputError("attention probe: expected 2..4096 queries and keys, got " +
                     std::to_string(queries) + " and " + std::to_string(keys));
  WidthProbe r;
  r.width = width;
  r.queries = queries;
  r.keys = keys;
  r.max_entropy = std::log(static_cast<double>(keys));

  const size_t nq = static_cast<size_t>(queries) * width, nk = static_cast<size_t>(keys) * width;
  std::vector<float> q(nq), k(nk);
  for (size_t i = 0; i < nq; ++i) q[i] = kernels::random_normal(seed, i);
  for (size_t i = 0; i < nk; ++i) k[i] = kernels::random_normal(seed + 1, i);

  const size_t n_scores = static_cast<size_t>(queries) * keys;
  std::vector<float> unscaled(n_scores), scaled(n_scores), p(n_scores);
  kernels::gemm(false, true, queries, keys, width, 1.0f, q.data(), width, k.data(), width, 0.0f,
                unscaled.data(), keys);
  const float s = 1.0f / std::sqrt(static_cast<float>(width));
  for (size_t i = 0; i < n_scores; ++i) scaled[i] = unscaled[i] * s;

  r.unscaled.score_variance = variance(unscaled);
  kernels::softmax_forward(unscaled.data(), p.data(), queries, keys);
  row_stats(p, queries, keys, r.unscaled);

  r.scaled.score_variance = variance(scaled);
  kernels::softmax_forward(scaled.data(), p.data(), queries, keys);
  row_stats(p, queries, keys, r.scaled);
  return r;
}

}  // namespace attnfc::cli
