// The M4 statistical benchmarks (the Benchmarks() function of `Benchmarks and
// Evaluation.R`): the seasonality test, the multiplicative decomposition and the
// forecasts built on them. Where R's arithmetic order or precision matters to the last
// digits (long-double colMeans and cumsum, filter's summation order), it is followed.
#include <algorithm>
#include <cmath>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnfc/train/m4.hpp"

namespace attnfc::train::m4 {

namespace {

// R's acf(x)$acf at lags 1..lag_max (type "correlation", demean = TRUE).
std::vector<double> r_acf(const std::vector<double>& x, int lag_max) {
  const size_t n = x.size();
  long double sum = 0;  // colMeans: one long-double sum, one division
  for (double v : x) sum += v;
  const double mean = static_cast<double>(sum / static_cast<long double>(n));
  std::vector<double> d(n);
  for (size_t i = 0; i < n; ++i) d[i] = x[i] - mean;
  std::vector<double> acov(static_cast<size_t>(lag_max) + 1);
  for (int lag = 0; lag <= lag_max; ++lag) {
    double s = 0;
    for (size_t i = 0; i + lag < n; ++i) s += d[i + lag] * d[i];
    acov[lag] = s / static_cast<double>(n);  // sum / (nu + lag), nu = n - lag
  }
  const double se = std::sqrt(acov[0]);
  std::vector<double> r(static_cast<size_t>(lag_max));
  for (int lag = 1; lag <= lag_max; ++lag) {
    const double a = acov[lag] / (se * se);
    r[lag - 1] = a > 1. ? 1. : (a < -1. ? -1. : a);
  }
  return r;
}

// R's filter(x, filter, sides = 2): NaN where the window leaves the series.
std::vector<double> r_centred_filter(const std::vector<double>& x, const std::vector<double>& w) {
  const long nx = static_cast<long>(x.size()), nf = static_cast<long>(w.size());
  const long shift = nf / 2;
  std::vector<double> out(x.size(), std::nan(""));
  for (long i = 0; i < nx; ++i) {
    if (i + shift - (nf - 1) < 0 || i + shift >= nx) continue;
    double z = 0;
    for (long j = 0; j < nf; ++j) z += w[j] * x[i + shift - j];
    out[i] = z;
  }
  return out;
}

std::vector<double> repeat_last(double value, int horizon) {
  return std::vector<double>(static_cast<size_t>(horizon), value);
}

void require_history(const std::vector<double>& x, int horizon) {
  if (x.empty()) throw std::invalid_argument("m4 benchmark: empty history");
  if (horizon < 1) throw std::invalid_argument("m4 benchmark: horizon must be >= 1");
}

}  // namespace

bool seasonality_test(const std::vector<double>& x, int m) {
  if (m < 2 || x.size() < 3 * static_cast<size_t>(m)) return false;
  const double n = static_cast<double>(x.size());
  int lag_max = static_cast<int>(std::floor(10 * std::log10(n)));
  lag_max = std::min(lag_max, static_cast<int>(x.size()) - 1);
  if (m > lag_max) return false;  // xacf[ppy] is NA in R, and NA counts as not seasonal
  const std::vector<double> r = r_acf(x, lag_max);
  long double cum = 1;  // cumsum(c(1, 2 * xacf^2)) up to its m-th element
  for (int k = 0; k < m - 1; ++k) cum += 2 * (r[k] * r[k]);
  const double tcrit = 1.645;
  const double clim = tcrit / std::sqrt(n) * std::sqrt(static_cast<double>(cum));
  return std::fabs(r[m - 1]) > clim;
}

std::vector<double> multiplicative_figure(const std::vector<double>& x, int m) {
  if (m < 2 || x.size() < 2 * static_cast<size_t>(m)) {
    throw std::invalid_argument("decompose: the series has fewer than 2 periods of " +
                                std::to_string(m));
  }
  std::vector<double> w;
  if (m % 2 == 0) {
    w.assign(static_cast<size_t>(m) + 1, 1.0 / m);
    w.front() = w.back() = 0.5 / m;
  } else {
    w.assign(static_cast<size_t>(m), 1.0 / m);
  }
  const std::vector<double> trend = r_centred_filter(x, w);
  std::vector<double> figure(static_cast<size_t>(m));
  for (int i = 0; i < m; ++i) {
    std::vector<double> ratios;
    for (size_t t = i; t < x.size(); t += m) {
      if (!std::isnan(trend[t])) ratios.push_back(x[t] / trend[t]);
    }
    figure[i] = r_mean(ratios);
  }
  const double mean = r_mean(figure);
  for (double& f : figure) f /= mean;
  return figure;
}

Deseasonalised deseasonalise(const std::vector<double>& x, int m, int horizon) {
  Deseasonalised d;
  d.seasonal = seasonality_test(x, m);
  if (!d.seasonal) {
    d.adjusted = x;
    d.season_out.assign(static_cast<size_t>(horizon), 1.0);
    return d;
  }
  const std::vector<double> figure = multiplicative_figure(x, m);
  const size_t n = x.size();
  d.adjusted.resize(n);
  for (size_t t = 0; t < n; ++t) d.adjusted[t] = x[t] / figure[t % m];
  // SIout: the last m seasonal factors, repeated over the horizon.
  for (int h = 0; h < horizon; ++h) d.season_out.push_back(figure[(n - m + h % m) % m]);
  return d;
}

const char* method_name(Method method) {
  switch (method) {
    case Method::kNaive1:
      return "Naive1";
    case Method::kSNaive:
      return "sNaive";
    case Method::kNaive2:
      return "Naive2";
    case Method::kSes:
      return "SES";
    case Method::kTheta:
      return "Theta";
  }
  return "?";
}

std::vector<double> naive1(const std::vector<double>& x, int horizon) {
  require_history(x, horizon);
  return repeat_last(x.back(), horizon);
}

std::vector<double> snaive(const std::vector<double>& x, int horizon, int m) {
  require_history(x, horizon);
  if (m <= 1 || x.size() < static_cast<size_t>(m)) return naive1(x, horizon);
  std::vector<double> f(static_cast<size_t>(horizon));
  for (int h = 0; h < horizon; ++h) f[h] = x[x.size() - m + h % m];
  return f;
}

std::vector<double> theta_classic(const std::vector<double>& adjusted, int horizon,
                                  double alpha_start) {
  require_history(adjusted, horizon);
  // lm(input ~ poly(xt, 1, raw = TRUE)), xt = 1..n, by the centred normal equations
  // (R solves it by QR; the two agree to ~1e-13 relative).
  const size_t n = adjusted.size();
  const double tbar = (static_cast<double>(n) + 1) / 2;
  const double ybar = r_mean(adjusted);
  double sty = 0, stt = 0;
  for (size_t t = 0; t < n; ++t) {
    const double dt = static_cast<double>(t + 1) - tbar;
    sty += dt * (adjusted[t] - ybar);
    stt += dt * dt;
  }
  const double b = stt > 0 ? sty / stt : 0.0, a = ybar - b * tbar;
  const double theta = 2, w_ses = 0.5, w_line = 0.5;
  std::vector<double> line2(n);
  for (size_t t = 0; t < n; ++t) {
    const double line0 = a + b * static_cast<double>(t + 1);
    line2[t] = theta * adjusted[t] + (1 - theta) * line0;
  }
  const double ses_out = fit_ses(line2, alpha_start).level;
  std::vector<double> f(static_cast<size_t>(horizon));
  for (int h = 0; h < horizon; ++h) {
    const double line0_out = a + b * static_cast<double>(n + 1 + h);
    f[h] = std::max(0.0, ses_out * w_ses + line0_out * w_line);  // "Zero forecasts"
  }
  return f;
}

std::vector<double> forecast(Method method, const std::vector<double>& x, int horizon, int m) {
  require_history(x, horizon);
  if (method == Method::kNaive1) return naive1(x, horizon);
  if (method == Method::kSNaive) return snaive(x, horizon, m);
  const Deseasonalised d = deseasonalise(x, m, horizon);
  std::vector<double> f;
  if (method == Method::kNaive2) f = naive1(d.adjusted, horizon);
  if (method == Method::kSes) f = repeat_last(fit_ses(d.adjusted).level, horizon);
  if (method == Method::kTheta) f = theta_classic(d.adjusted, horizon);
  for (int h = 0; h < horizon; ++h) f[h] *= d.season_out[h];
  return f;
}

std::vector<std::vector<double>> forecast_all(Method method,
                                              const std::vector<std::vector<double>>& series,
                                              int horizon, int m) {
  std::vector<std::vector<double>> out(series.size());
  std::vector<std::exception_ptr> failed(series.size());
  const long count = static_cast<long>(series.size());
  // Each series is computed on its own, so the thread count cannot change a result. An
  // exception may not leave an OpenMP region: it is kept and rethrown after it.
#pragma omp parallel for schedule(dynamic)
  for (long i = 0; i < count; ++i) {
    try {
      out[i] = forecast(method, series[i], horizon, m);
    } catch (...) {
      failed[i] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : failed) {
    if (e) std::rethrow_exception(e);
  }
  return out;
}

}  // namespace attnfc::train::m4
