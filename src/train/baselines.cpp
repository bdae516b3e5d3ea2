#include "attnfc/train/baselines.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "attnfc/data/seasonality.hpp"
#include "attnfc/kernels/threading.hpp"

namespace attnfc::train {

namespace {

// The last observed value of channel c at or before context step t (NaN if none).
double last_observed(const SampleBatch& s, int64_t b, int t, int c) {
  const int64_t C = s.width;
  const float* ctx = s.context_values + b * s.context * C;
  const uint8_t* obs = s.context_observed ? s.context_observed + b * s.context * C : nullptr;
  for (; t >= 0; --t) {
    const int64_t i = static_cast<int64_t>(t) * C + c;
    if (!obs || obs[i]) return ctx[i];
  }
  return std::nan("");
}

}  // namespace

int infer_period(const SeriesRef& train, int max_lag, double min_acf) {
  // No season means period 1: seasonal-naive is then repeat-last.
  return std::max(
      1, data::seasonal_period(train.data, train.rows, train.channels, max_lag, nullptr, min_acf));
}

void repeat_last(const SampleBatch& s, int horizon, float* out) {
  const int C = static_cast<int>(s.width), L = static_cast<int>(s.context);
  for (int64_t b = 0; b < s.count; ++b) {
    float* o = out + b * horizon * C;
    for (int c = 0; c < C; ++c) {
      const float last = static_cast<float>(last_observed(s, b, L - 1, c));
      for (int h = 0; h < horizon; ++h) o[h * C + c] = last;
    }
  }
}

void seasonal_naive(const SampleBatch& s, int horizon, int period, float* out) {
  const int C = static_cast<int>(s.width), L = static_cast<int>(s.context);
  if (period < 1 || period > L)
    throw std::invalid_argument("seasonal-naive: period " + std::to_string(period) +
                                " must be between 1 and the context length " + std::to_string(L));
  for (int64_t b = 0; b < s.count; ++b) {
    float* o = out + b * horizon * C;
    for (int h = 1; h <= horizon; ++h) {
      // Same phase in the last season the context saw: T + h - m * ceil(h / m).
      const int back = period * ((h + period - 1) / period);
      const int t = L - 1 + h - back;  // index into the context, 0-based
      for (int c = 0; c < C; ++c) {
        double v = last_observed(s, b, t, c);
        // Nothing observed up to that step (a gap across the context's start): the last
        // observed value, as repeat-last takes it.
        if (std::isnan(v)) v = last_observed(s, b, L - 1, c);
        o[(h - 1) * C + c] = static_cast<float>(v);
      }
    }
  }
}

void cholesky_solve(std::vector<double>& A, int n, std::vector<double>& B, int nrhs) {
  // A = L L^T, L stored in the lower triangle of A.
  for (int j = 0; j < n; ++j) {
    double d = A[static_cast<size_t>(j) * n + j];
    for (int k = 0; k < j; ++k)
      d -= A[static_cast<size_t>(j) * n + k] * A[static_cast<size_t>(j) * n + k];
    if (!(d > 0)) throw std::runtime_error("cholesky_solve: matrix is not positive definite");
    const double ljj = std::sqrt(d);
    A[static_cast<size_t>(j) * n + j] = ljj;
    for (int i = j + 1; i < n; ++i) {
      double s = A[static_cast<size_t>(i) * n + j];
      const double* li = &A[static_cast<size_t>(i) * n];
      const double* lj = &A[static_cast<size_t>(j) * n];
      for (int k = 0; k < j; ++k) s -= li[k] * lj[k];
      A[static_cast<size_t>(i) * n + j] = s / ljj;
    }
  }
  // Forward: L Z = B, then backward: L^T X = Z.
  for (int i = 0; i < n; ++i) {
    double* bi = &B[static_cast<size_t>(i) * nrhs];
    for (int k = 0; k < i; ++k) {
      const double l = A[static_cast<size_t>(i) * n + k];
      const double* bk = &B[static_cast<size_t>(k) * nrhs];
      for (int r = 0; r < nrhs; ++r) bi[r] -= l * bk[r];
    }
    const double inv = 1.0 / A[static_cast<size_t>(i) * n + i];
    for (int r = 0; r < nrhs; ++r) bi[r] *= inv;
  }
  for (int i = n - 1; i >= 0; --i) {
    double* bi = &B[static_cast<size_t>(i) * nrhs];
    for (int k = i + 1; k < n; ++k) {
      const double l = A[static_cast<size_t>(k) * n + i];
      const double* bk = &B[static_cast<size_t>(k) * nrhs];
      for (int r = 0; r < nrhs; ++r) bi[r] -= l * bk[r];
    }
    const double inv = 1.0 / A[static_cast<size_t>(i) * n + i];
    for (int r = 0; r < nrhs; ++r) bi[r] *= inv;
  }
}

namespace {

// The lower triangle of X^T X and X^T y over every complete training window (features:
// the L last-value-normalised inputs and a constant 1; targets: the H normalised values).
struct NormalEquations {
  std::vector<double> xtx, xty;
  int64_t windows = 0;
};
NormalEquations normal_equations(const std::vector<SeriesRef>& trains, int context, int horizon) {
  const int n = context + 1;  // features: L last-value-normalised inputs and a constant 1
  std::vector<double> xtx(static_cast<size_t>(n) * n, 0.0),
      xty(static_cast<size_t>(n) * horizon, 0.0);

  // Windows are gathered in chunks and each chunk is added to X^T X with rows of the product
  // split across threads: every entry is owned by one thread and summed in window order, so
  // the fit is identical at any thread count.
  constexpr int kChunk = 256;
  std::vector<double> xc(static_cast<size_t>(kChunk) * n),
      yc(static_cast<size_t>(kChunk) * horizon);
  int64_t used = 0;
  auto flush = [&](int rows) {
    if (rows == 0) return;
#pragma omp parallel for schedule(dynamic, 8)
    for (int i = 0; i < n; ++i) {
      kernels::enable_flush_to_zero();
      double* xtx_i = &xtx[static_cast<size_t>(i) * n];
      double* xty_i = &xty[static_cast<size_t>(i) * horizon];
      for (int r = 0; r < rows; ++r) {
        const double* xr = &xc[static_cast<size_t>(r) * n];
        const double* yr = &yc[static_cast<size_t>(r) * horizon];
        const double xi = xr[i];
        for (int j = 0; j <= i; ++j) xtx_i[j] += xi * xr[j];
        for (int k = 0; k < horizon; ++k) xty_i[k] += xi * yr[k];
      }
    }
  };
  int fill = 0;
  for (const SeriesRef& train : trains)  // a panel: every series' windows, in series order
    for (int c = 0; c < train.channels; ++c) {
      const int64_t starts = train.rows - context - horizon + 1;
      for (int64_t s = 0; s < starts; ++s) {
        bool ok = true;
        for (int64_t t = s; t < s + context + horizon && ok; ++t) ok = !std::isnan(train.at(t, c));
        if (!ok) continue;
        const double last = train.at(s + context - 1, c);
        double* xr = &xc[static_cast<size_t>(fill) * n];
        double* yr = &yc[static_cast<size_t>(fill) * horizon];
        for (int i = 0; i < context; ++i) xr[i] = train.at(s + i, c) - last;
        xr[context] = 1.0;
        for (int k = 0; k < horizon; ++k) yr[k] = train.at(s + context + k, c) - last;
        ++used;
        if (++fill == kChunk) flush(fill), fill = 0;
      }
    }
  flush(fill);
  return {std::move(xtx), std::move(xty), used};
}

}  // namespace

NLinear NLinear::fit(const SeriesRef& train, int context, int horizon, double ridge) {
  return fit_path(train, context, horizon, {ridge}).front();
}

std::vector<NLinear> NLinear::fit_path(const SeriesRef& train, int context, int horizon,
                                       const std::vector<double>& ridges) {
  return fit_path(std::vector<SeriesRef>{train}, context, horizon, ridges);
}

std::vector<NLinear> NLinear::fit_path(const std::vector<SeriesRef>& trains, int context,
                                       int horizon, const std::vector<double>& ridges) {
  if (ridges.empty()) throw std::invalid_argument("NLinear: no ridge given");
  if (context < 1 || horizon < 1)
    throw std::invalid_argument("NLinear: context and horizon must be positive");
  const int n = context + 1;  // features: L last-value-normalised inputs and a constant 1
  NormalEquations eq = normal_equations(trains, context, horizon);
  std::vector<double>& xtx = eq.xtx;
  const std::vector<double>& xty = eq.xty;
  const int64_t used = eq.windows;
  if (used < n)
    throw std::invalid_argument("NLinear: " + std::to_string(used) +
                                " complete training windows, need at least " + std::to_string(n) +
                                " for a context of " + std::to_string(context));
  for (int i = 0; i < n; ++i)  // mirror the lower triangle
    for (int j = i + 1; j < n; ++j)
      xtx[static_cast<size_t>(i) * n + j] = xtx[static_cast<size_t>(j) * n + i];
  double trace = 0;
  for (int i = 0; i < context; ++i) trace += xtx[static_cast<size_t>(i) * n + i];
  std::vector<NLinear> out;
  for (const double ridge : ridges) {
    // The last input is always 0 after normalisation; the ridge also makes that direction
    // solvable.
    const double lambda = std::max(ridge * trace / context, 1e-12);
    std::vector<double> a = xtx, sol = xty;
    for (int i = 0; i < context; ++i) a[static_cast<size_t>(i) * n + i] += lambda;
    cholesky_solve(a, n, sol, horizon);
    NLinear m;
    m.context_ = context;
    m.horizon_ = horizon;
    m.fit_windows_ = used;
    m.weight_.assign(static_cast<size_t>(horizon) * context, 0.0);
    m.bias_.assign(horizon, 0.0);
    for (int k = 0; k < horizon; ++k) {
      for (int i = 0; i < context; ++i)
        m.weight_[static_cast<size_t>(k) * context + i] = sol[static_cast<size_t>(i) * horizon + k];
      m.bias_[k] = sol[static_cast<size_t>(context) * horizon + k];
    }
    out.push_back(std::move(m));
  }
  return out;
}

void NLinear::forecast(const SampleBatch& s, float* out) const {
  if (s.context != context_)
    throw std::invalid_argument("NLinear: samples of context " + std::to_string(s.context) +
                                ", fitted for " + std::to_string(context_));
  const int C = static_cast<int>(s.width);
  std::vector<double> x(context_);
  for (int64_t b = 0; b < s.count; ++b) {
    const float* ctx = s.context_values + b * context_ * C;
    const uint8_t* obs = s.context_observed ? s.context_observed + b * context_ * C : nullptr;
    float* o = out + b * horizon_ * C;
    for (int c = 0; c < C; ++c) {
      // Missing context values are carried forward from the last observation before them.
      double prev = std::nan("");
      for (int i = 0; i < context_; ++i) {
        const int64_t k = static_cast<int64_t>(i) * C + c;
        if (!obs || obs[k]) prev = ctx[k];
        x[i] = prev;
      }
      const double last = x[context_ - 1];
      for (int i = 0; i < context_; ++i) x[i] = std::isnan(x[i]) ? 0.0 : x[i] - last;
      for (int k = 0; k < horizon_; ++k) {
        const double* w = &weight_[static_cast<size_t>(k) * context_];
        double sum = bias_[k];
        for (int i = 0; i < context_; ++i) sum += w[i] * x[i];
        o[static_cast<int64_t>(k) * C + c] = static_cast<float>(last + sum);
      }
    }
  }
}

}  // namespace attnfc::train
