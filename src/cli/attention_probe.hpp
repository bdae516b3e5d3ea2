#pragma once
// The numbers behind `attnfc attention demo`: attention made visible on toy inputs.
// Computed with the kernels directly (GEMM for scores, the masked row softmax),
// so what the demo prints is what the library computes, never typed-in values.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "attnfc/base/enum_names.hpp"

namespace attnfc::cli {

// The toy series a demo head attends over. Each position t is embedded as the 2-D
// vector e_t = (f(t), f(t + period/4)):
//   Sine:  f(t) = sin(2 pi t / period), so e_t = (sin 2 pi t/P, cos 2 pi t/P);
//   Trend: f(t) = t / period (a ramp rising one unit per period);
//   Noise: two independent standard normal channels (seeded).
enum class ProbeSeries { Sine, Trend, Noise };
// "sine" | "trend" | "noise"; throws InputError naming the value otherwise.
ProbeSeries parse_probe_series(const std::string& name);

struct SeriesAttention {
  int length = 0;
  int dim = 2;
  std::vector<float> embedding;  // [length, dim]; Q = K = V = embedding
  std::vector<float> weights;    // [length, length]: row i = query i, causal (j <= i)
  std::vector<float> output;     // [length, dim] = weights . V
  double max_row_sum_error = 0;  // max_i |sum_j weights[i][j] - 1|
  // lag_profile[l] = mean over queries i >= l of weights[i][i - l] (attention mass at lag l).
  std::vector<double> lag_profile;
  // lag_lift[l] = lag_profile[l] / what uniform causal attention would give at lag l
  // (mean over i >= l of 1/(i+1)). Early queries see few keys, so raw mass favours short
  // lags; the lift removes that bias: > 1 means the head prefers that lag.
  std::vector<double> lag_lift;
  // The smallest lag l >= 1 whose lift is within 2% of the largest (0 when length == 1):
  // multiples of a period tie on a periodic series, and the period itself is the answer.
  int dominant_lag = 0;
};

// One causal head, softmax(Q K^T * s) V with Q = K = V = the embedding, where
// s = 1/sqrt(dim) when scaled, else 1. period >= 2, 1 <= length <= 4096 (InputError otherwise).
SeriesAttention series_attention(ProbeSeries kind, double period, int length, bool scaled = true,
                                 uint64_t seed = 1);

// What the 1/sqrt(d_k) divisor does to a softmax over random scores.
struct SoftmaxStats {
  double score_variance = 0;     // variance of the logits fed to the softmax
  double entropy = 0;            // mean over query rows of -sum p log p (nats)
  double max_weight = 0;         // mean over query rows of max_j p_j
  double softmax_grad_norm = 0;  // mean over rows of ||d softmax / d logits||_F
  double saturated_rows = 0;     // fraction of rows whose largest weight exceeds 0.99
};
struct WidthProbe {
  int width = 0, queries = 0, keys = 0;
  double max_entropy = 0;  // log(keys): the entropy of uniform attention
  SoftmaxStats scaled;     // logits q.k / sqrt(width)
  SoftmaxStats unscaled;   // logits q.k
};

// Queries [queries, width] and keys [keys, width] with i.i.d. unit-variance normal
// entries (seeded). 1 <= width <= 65536, 2 <= queries, keys <= 4096 (InputError otherwise).
WidthProbe probe_width(int width, int queries = 64, int keys = 64, uint64_t seed = 1);

// Where a causal attention matrix puts its mass, by distance i - j.
struct LagProfile {
  // mass[l] = mean over queries i >= l of weights[i][i - l].
  std::vector<double> mass;
  // lift[l] = mass[l] / the same quantity for uniform causal attention (mean over i >= l
  // of 1/(i+1)). Early queries see few keys, so raw mass favours short lags; the lift
  // removes that bias: > 1 means the head prefers that lag.
  std::vector<double> lift;
  // The smallest lag l >= 1 whose lift is within 2% of the largest (0 when n == 1 or no
  // query looks back at all): multiples of a period tie on a periodic series, and the
  // period itself is the answer.
  int dominant_lag = 0;
  // The period of the lift profile itself: the autocorrelation peak of lift[1..n-1]
  // (0 when it has none). A head that tracks a seasonal phase puts lift peaks one
  // period apart even when its first peak sits at an offset.
  int lift_period = 0;
};
// weights: row-major [n, n], row i = query i (entries above the diagonal are ignored).
LagProfile causal_lag_profile(const float* weights, int n);

// Sample autocorrelation r(l) = sum_t (x_t - m)(x_{t+l} - m) / sum_t (x_t - m)^2 for
// l = 0..max_lag (max_lag is clamped to size - 1). NaN entries are missing: skipped in
// the mean, the variance and every pair. A constant or empty series gives all zeros.
std::vector<double> autocorrelation(std::span<const float> x, int max_lag);
// The lag of the highest local maximum of acf over lags >= 2 that exceeds min_value
// (a seasonal period; pass about 2/sqrt(n) to ignore what white noise produces);
// 0 when there is none (e.g. a trend, whose acf only decays).
int autocorrelation_peak(const std::vector<double>& acf, double min_value = 0.0);

// ||J||_F for J = diag(p) - p p^T, the Jacobian of softmax at output p (closed form:
// sqrt(sum p^2 - 2 sum p^3 + (sum p^2)^2)).
double softmax_jacobian_norm(const float* p, int n);

}  // namespace attnfc::cli

template <>
struct attnfc::EnumNames<attnfc::cli::ProbeSeries> {
  static constexpr std::array<const char*, 3> words{"sine", "trend", "noise"};
};
