#pragma once
// The M4 competition's evaluation and statistical benchmarks, rebuilt to give the
// published numbers: the metrics of `Benchmarks and Evaluation.R` (github.com/
// Mcompetitions/M4-methods) and its Naive1, sNaive, Naive2, SES and Theta forecasts, which
// call R's forecast package (v8.2) and stats (acf, decompose, filter). Everything is in
// double precision; sums that R keeps in long double (mean, cumsum, colMeans) are kept in
// long double here too, so the deterministic methods agree with R to the last digits.
//
// Metrics, per series of horizon H (y actual, f forecast, x the history of n values):
//   sMAPE  mean over the H steps of 200 |y - f| / (|y| + |f|)   (0..200; 0 where both are 0,
//          R's 0/0 is NaN there, which M4's positive data never meet)
//   MASE   mean over the H steps of |y - f| / scale, scale = mean_t |x[t] - x[t-m]| (t > m)
//   OWA    (sMAPE / sMAPE_Naive2 + MASE / MASE_Naive2) / 2, on the averages over series
// The averages are M4's: the mean over every (series, step) value, which for equal horizons
// is the mean of the per-series means.
// M4's mase_cal has no fallback for a history of m values or fewer (its loop then runs
// backwards and R recycles vectors); GluonTS falls back to m = 1 there, and so does
// mase_scale. M4's shortest series are longer than their m, so the published numbers are
// unaffected.
#include <cstdint>
#include <string>
#include <vector>

#include "attnfc/data/csv.hpp"

namespace attnfc::train::m4 {

// R's mean(): a long-double sum divided by n, then the mean of the residuals added back.
double r_mean(const double* x, size_t n);
inline double r_mean(const std::vector<double>& x) {
  return r_mean(x.data(), x.size());
}

// The MASE denominator: in-sample seasonal-naive MAE at lag m (lag 1 when n <= m).
// 0 for a history that never changes at that lag (MASE is then infinite, as in R).
double mase_scale(const std::vector<double>& history, int m);

// The pointwise errors of one series (H values each).
std::vector<double> smape_terms(const std::vector<double>& actual,
                                const std::vector<double>& forecast);
std::vector<double> mase_terms(const std::vector<double>& actual,
                               const std::vector<double>& forecast, double scale);

// One method's scores over a set of series.
struct MethodScores {
  std::string name;
  std::vector<double> smape, mase;  // per series: the mean over its horizon
  double smape_avg = 0, mase_avg = 0;
  double owa = 0;  // set by set_owa
};

// actuals[i] and forecasts[i] must have the same length; scales[i] from mase_scale.
MethodScores score_method(const std::string& name,
                          const std::vector<std::vector<double>>& forecasts,
                          const std::vector<std::vector<double>>& actuals,
                          const std::vector<double>& scales);
// OWA of each method against the Naive2 scores (Naive2's own OWA is 1).
void set_owa(std::vector<MethodScores>& methods, const MethodScores& naive2);

// --- The benchmarks: H forecasts from a series' full history x (oldest first) ---

// M4's SeasonalityTest: the autocorrelation at lag m (R's acf: demeaned, divided by n)
// exceeds 1.645 sqrt((1 + 2 sum_{k<m} r_k^2) / n). False when n < 3m, m < 2, or when m is
// beyond acf's default lag.max = floor(10 log10 n).
bool seasonality_test(const std::vector<double>& x, int m);

// The series as the benchmarks see it: divided by R's decompose(type = "multiplicative")
// seasonal figure when seasonality_test holds, with the figure continued over the
// horizon to reseasonalise forecasts; unchanged (and factors of 1) otherwise.
struct Deseasonalised {
  bool seasonal = false;
  std::vector<double> adjusted;    // n values
  std::vector<double> season_out;  // H factors
};
Deseasonalised deseasonalise(const std::vector<double>& x, int m, int horizon);
// R's decompose figure (m factors, mean 1): the centred moving average (2 x m for even m),
// x / trend averaged per position in the cycle, counted from the first value.
std::vector<double> multiplicative_figure(const std::vector<double>& x, int m);

// Simple exponential smoothing as forecast::ses() fits it: ets(x, "ANN", opt.crit = "mse"),
// alpha and the initial level l0 found together by R's Nelder-Mead (optim's nmmin, as
// forecast's etsNelderMead calls it: reltol sqrt(eps), 2000 evaluations) from alpha =
// `alpha_start` and l0 = the mean of the first 10 values; alpha kept in [1e-4, 0.9999].
struct SesFit {
  double alpha = 0, level0 = 0, mse = 0;
  double level = 0;            // the last level: every SES forecast
  std::vector<double> fitted;  // one-step forecasts, n values
  int evaluations = 0;
};
// forecast 8.2 starts alpha at lower + 0.5 (upper - lower) / m with m = 1 for a non-seasonal
// model, i.e. 0.5; later versions start at 0.2 (lower + 0.2 (upper - lower) / m).
constexpr double kSesAlphaStart = 0.5;
SesFit fit_ses(const std::vector<double>& x, double alpha_start = kSesAlphaStart);

enum class Method { kNaive1, kSNaive, kNaive2, kSes, kTheta };
const char* method_name(Method method);  // "Naive1", "sNaive", "Naive2", "SES", "Theta"

std::vector<double> naive1(const std::vector<double>& x, int horizon);
// The last m values repeated (Naive1 when m <= 1).
std::vector<double> snaive(const std::vector<double>& x, int horizon, int m);
// The forecasts of every method but Naive1 and sNaive start from one deseasonalise().
std::vector<double> forecast(Method method, const std::vector<double>& x, int horizon, int m);
// Theta.classic of the M4 code on a deseasonalised series: the OLS line (theta = 0) and
// SES on the theta = 2 line, averaged with equal weights; negative forecasts become 0.
std::vector<double> theta_classic(const std::vector<double>& adjusted, int horizon,
                                  double alpha_start = kSesAlphaStart);

// forecast() for many series, in parallel over series (each result is the same as
// forecast() alone, at any thread count).
std::vector<std::vector<double>> forecast_all(Method method,
                                              const std::vector<std::vector<double>>& series,
                                              int horizon, int m);

// --- Reading series ---

struct Series {
  std::string id;
  std::vector<double> values;
  uint64_t line = 0;  // 1-based line of the series' first row (for messages)
};

// An M4 file (Hourly-train.csv, Hourly-test.csv): a header, then one row per series, its
// id first and its values after it, right-padded with empty fields. A value that is not a
// number, or a gap before the padding, is an InputError naming file, line and column.
std::vector<Series> read_m4_wide(const std::string& path);

// A long-format file: one row per (series, time), rows of a series kept in file order.
// value_column empty = the first column that is neither id_column nor a time column
// (time_column, or else the first of time, date, ds, timestamp). Series appear in the
// order their ids first appear. Missing or non-numeric values are an InputError naming
// file, line, column and id. Fields split at `delimiter`, values read in `number`
// (decimal comma, thousands separators).
std::vector<Series> read_long(const std::string& path, const std::string& id_column,
                              const std::string& value_column = "",
                              const std::string& time_column = "", char delimiter = ',',
                              const data::NumberFormat& number = {});

// read_long() of several named value columns of one file, read once: out[k] holds the
// series of columns[k], each in the order their ids first appear.
std::vector<std::vector<Series>> read_long_columns(const std::string& path,
                                                   const std::string& id_column,
                                                   const std::vector<std::string>& columns,
                                                   char delimiter = ',',
                                                   const data::NumberFormat& number = {});

// A long file's header and the name of the column read_long() reads as values (the
// value_column rule above); for finding a forecast file's interval columns.
struct LongHeader {
  std::string value;
  std::vector<std::string> columns;
};
LongHeader read_long_header(const std::string& path, const std::string& id_column,
                            const std::string& value_column = "",
                            const std::string& time_column = "", char delimiter = ',');

}  // namespace attnfc::train::m4
