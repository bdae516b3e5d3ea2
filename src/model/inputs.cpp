// Normalisation statistics, token features and targets (see inputs.hpp).
#include "inputs.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/kernels/threading.hpp"

namespace attnfc::model::detail {

namespace {

// The linear shortcut's input (C == 1, validated): the K steps before `end`, as
// (x - base) / sigma; 0 before the window start and where unobserved.
void lookback_row(const SeriesView& s, int64_t b, int64_t end, int64_t K, double base, double sigma,
                  float* row) {
  for (int64_t k = 0; k < K; ++k) {
    const int64_t t = end - K + k;
    const bool use = t >= 0 && s.observed(b, t, 0);
    row[k] = use ? static_cast<float>((s.value(b, t, 0) - base) / sigma) : 0.0f;
  }
}

}  // namespace

Prepared prepare_inputs(const ModelConfig& cfg, const SeriesView& s, bool last_only) {
  const int64_t B = s.batch, C = s.channels, P = cfg.patch_len, N = cfg.num_patches();
  const int64_t S = cfg.stride(), F = 2 * P * C, n_out = last_only ? 1 : N;
  Prepared out;
  out.known = s.known;
  out.features = ag::empty({B, N, F});
  out.scale = ag::empty({B, n_out, 1, C});
  out.offset = ag::empty({B, n_out, 1, C});
  float* feat = out.features.data();
  float* scale = out.scale.data();
  float* offset = out.offset.data();
  const int64_t K = cfg.linear_lookback;
  if (K > 0) out.lookback = ag::empty({B, n_out, K});
  float* lookback = K > 0 ? out.lookback.data() : nullptr;
  const double eps = cfg.norm_eps;
  // Windows are independent (each writes its own rows), so threads change nothing;
  // serial inside another parallel region (a part of a micro-batched step) and when small.
  const bool parallel = B * C * (N * P + n_out * K) >= (int64_t{1} << 15) && !omp_in_parallel();
#pragma omp parallel if (parallel)
  {
    kernels::enable_flush_to_zero();  // as every kernel region: denormals alike on any thread
#pragma omp for schedule(static)
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t c = 0; c < C; ++c) {
        // Whole-context statistics for instance normalisation.
        double total = 0, total_sq = 0;
        int64_t total_count = 0;
        if (cfg.norm == InputNorm::kInstance) {
          for (int64_t t = 0; t < cfg.context_length; ++t) {
            if (!s.observed(b, t, c)) continue;
            const double x = s.value(b, t, c);
            total += x;
            total_sq += x * x;
            ++total_count;
          }
        }
        double run = 0, run_sq = 0;  // causal: patches 0..n
        int64_t run_count = 0;
        bool has_last = false;
        double last = 0;
        for (int64_t n = 0; n < N; ++n) {
          // The steps token n adds to the causal statistics: those after token n - 1's end.
          const int64_t end = cfg.patch_end(n), start = n == 0 ? 0 : cfg.patch_end(n - 1);
          for (int64_t t = start; t < end; ++t) {
            if (!s.observed(b, t, c)) continue;
            const double x = s.value(b, t, c);
            run += x;
            run_sq += x * x;
            ++run_count;
            last = x;
            has_last = true;
          }
          double mu = 0, sigma = 1;
          const double sum = cfg.norm == InputNorm::kCausal ? run : total;
          const double sum_sq = cfg.norm == InputNorm::kCausal ? run_sq : total_sq;
          const int64_t count = cfg.norm == InputNorm::kCausal ? run_count : total_count;
          if (cfg.norm != InputNorm::kNone && count > 0) {
            mu = sum / count;
            const double var = std::max(0.0, sum_sq / count - mu * mu);
            sigma = std::sqrt(var + eps);
          }
          float* f = feat + (b * N + n) * F;
          for (int64_t p = 0; p < P; ++p) {
            const int64_t t = n * S + p;
            const bool obs = s.observed(b, t, c);
            f[p * C + c] = obs ? static_cast<float>((s.value(b, t, c) - mu) / sigma) : 0.0f;
            f[P * C + p * C + c] = obs ? 1.0f : 0.0f;
          }
          const int64_t slot = last_only ? (n == N - 1 ? 0 : -1) : n;
          if (slot < 0) continue;
          const double base = (cfg.target == HeadTarget::kDeltaFromLast && has_last) ? last : mu;
          scale[(b * n_out + slot) * C + c] = static_cast<float>(sigma);
          offset[(b * n_out + slot) * C + c] = static_cast<float>(base);
          if (lookback) lookback_row(s, b, end, K, base, sigma, lookback + (b * n_out + slot) * K);
        }
      }
    }
  }
  return out;
}

int64_t prepare_targets(const ModelConfig& cfg, const SeriesView& s, bool last_only,
                        ag::Tensor* targets, ag::Tensor* mask) {
  const int64_t B = s.batch, C = s.channels, N = cfg.num_patches();
  const int64_t H = cfg.horizon;
  const int64_t n_out = last_only ? 1 : N;
  *targets = ag::empty({B, n_out, H, C});
  *mask = ag::empty({B, n_out, H, C});
  float* y = targets->data();
  float* m = mask->data();
  // A past covariate (c >= target_channels) is an input only, never a target.
  const int64_t scored = cfg.target_channels == 0 ? C : std::min<int64_t>(C, cfg.target_channels);
  int64_t observed = 0;
  // Windows are independent and the count is an integer sum, so threads change nothing;
  // serial inside another parallel region (a part of a micro-batched step) and when small.
  const bool parallel = B * n_out * H * C >= (int64_t{1} << 15) && !omp_in_parallel();
#pragma omp parallel for schedule(static) reduction(+ : observed) if (parallel)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t slot = 0; slot < n_out; ++slot) {
      const int64_t n = last_only ? N - 1 : slot;
      for (int64_t h = 0; h < H; ++h) {
        const int64_t t = cfg.patch_end(n) + h;
        const int64_t k = ((b * n_out + slot) * H + h) * C;
        // Every target lies inside a window of L + H steps; the check keeps a shorter
        // series safe (those targets are simply not scored).
        for (int64_t c = 0; c < C; ++c) {
          const bool ok = c < scored && t < s.length && s.observed(b, t, c);
          y[k + c] = ok ? s.value(b, t, c) : 0.0f;
          m[k + c] = ok ? 1.0f : 0.0f;
          observed += ok;
        }
      }
    }
  }
  return observed;
}

void sinusoidal_table(int positions, int d, float* out) {
  for (int n = 0; n < positions; ++n) {
    for (int i = 0; i < d; i += 2) {
      const double freq = std::pow(10000.0, -static_cast<double>(i) / d);
      out[n * d + i] = static_cast<float>(std::sin(n * freq));
      if (i + 1 < d) out[n * d + i + 1] = static_cast<float>(std::cos(n * freq));
    }
  }
}

}  // namespace attnfc::model::detail
