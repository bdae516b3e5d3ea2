// Simple exponential smoothing fitted as forecast::ses() fits it (forecast 8.2, which the
// M4 benchmark code requires): ets(y, "ANN", opt.crit = "mse") minimises the mean squared
// one-step error over (alpha, l0) with its copy of R's Nelder-Mead (optim's nmmin):
// abstol -Inf, reltol sqrt(DBL_EPSILON), reflection 1, contraction 0.5, expansion 2, at most
// 2000 function evaluations; a point outside alpha in [1e-4, 0.9999] is worth +Inf, which
// nmmin replaces by 1e35. The objective is ets's amse[0], accumulated as a running mean as
// etscalc does. Written from the algorithm's description, not copied.
// Where ours may differ from R: ets answers a series of 6 values or fewer with
// HoltWinters-style smoothing instead (we optimise those too), and a constant series is
// still optimised here (ets only special-cases it when no model is given, and ses gives
// one). Both are far from M4's data.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "attnfc/train/m4.hpp"

namespace attnfc::train::m4 {

namespace {

constexpr double kBig = 1.0e35;  // nmmin's stand-in for a non-finite value
constexpr double kAlphaLower = 1e-4, kAlphaUpper = 0.9999;

using Objective = std::function<double(const std::vector<double>&)>;

// R's nmmin, one simplex of n + 1 vertices. Vertex 0 starts at the initial point.
class NelderMead {
 public:
  NelderMead(Objective fn, const std::vector<double>& start)
      : fn_(std::move(fn)), n_(start.size()) {
    vert_.assign(n_ + 1, start);
    fval_.assign(n_ + 1, 0.0);
    fval_[0] = fn_(start);
    if (!std::isfinite(fval_[0])) {
      throw std::invalid_argument("Nelder-Mead: the objective is not finite at the start");
    }
    evaluations_ = 1;
    convtol_ = reltol_ * (std::fabs(fval_[0]) + reltol_);
    double step = 0;
    for (double b : start) step = std::max(step, 0.1 * std::fabs(b));
    if (step == 0.0) step = 0.1;
    size_ = 0;
    for (size_t j = 1; j <= n_; ++j) {
      double trystep = step;
      // Grows the step until it changes the coordinate (a huge coordinate can swallow it).
      while (vert_[j][j - 1] == start[j - 1]) {
        vert_[j][j - 1] = start[j - 1] + trystep;
        trystep *= 10;
      }
      size_ += trystep;
    }
    oldsize_ = size_;
  }

  void run(int maxit) {
    bool calcvert = true;
    do {
      if (calcvert) {
        for (size_t j = 0; j <= n_; ++j) {
          if (j != low_) fval_[j] = eval(vert_[j]);
        }
      }
      const size_t high = find_extremes();
      if (fval_[high] <= fval_[low_] + convtol_) break;  // abstol is -Inf
      if (!step(high, calcvert)) break;
    } while (evaluations_ <= maxit);
  }

  const std::vector<double>& best() const { return vert_[low_]; }
  double best_value() const { return fval_[low_]; }
  int evaluations() const { return evaluations_; }

 private:
  double eval(const std::vector<double>& b) {
    const double f = fn_(b);
    ++evaluations_;
    return std::isfinite(f) ? f : kBig;
  }

  // Lowest vertex into low_ (earlier index wins a tie, low_ itself first), the highest
  // returned.
  size_t find_extremes() {
    double vl = fval_[low_], vh = vl;
    size_t high = low_;
    for (size_t j = 0; j <= n_; ++j) {
      if (j == low_) continue;
      const double f = fval_[j];
      if (f < vl) {
        low_ = j;
        vl = f;
      }
      if (f > vh) {
        high = j;
        vh = f;
      }
    }
    return high;
  }

  // One reflection with its expansion or contraction, or a shrink; false when a shrink
  // no longer makes the simplex smaller.
  bool step(size_t high, bool& calcvert) {
    calcvert = false;
    std::vector<double> c(n_), b(n_);
    for (size_t i = 0; i < n_; ++i) {
      double temp = -vert_[high][i];  // the centroid of all vertices but the highest
      for (size_t j = 0; j <= n_; ++j) temp += vert_[j][i];
      c[i] = temp / static_cast<double>(n_);
    }
    const double vh = fval_[high];
    for (size_t i = 0; i < n_; ++i) b[i] = (1.0 + kReflect) * c[i] - kReflect * vert_[high][i];
    const double vr = eval(b);
    if (vr < fval_[low_]) {
      std::vector<double> e(n_);
      for (size_t i = 0; i < n_; ++i) e[i] = kExpand * b[i] + (1 - kExpand) * c[i];
      const double fe = eval(e);
      vert_[high] = fe < vr ? e : b;
      fval_[high] = fe < vr ? fe : vr;
      return true;
    }
    if (vr < vh) {
      vert_[high] = b;
      fval_[high] = vr;
    }
    for (size_t i = 0; i < n_; ++i) b[i] = (1 - kContract) * vert_[high][i] + kContract * c[i];
    const double fc = eval(b);
    if (fc < fval_[high]) {
      vert_[high] = b;
      fval_[high] = fc;
      return true;
    }
    if (vr < vh) return true;
    return shrink(calcvert);
  }

  bool shrink(bool& calcvert) {
    calcvert = true;
    size_ = 0;
    for (size_t j = 0; j <= n_; ++j) {
      if (j == low_) continue;
      for (size_t i = 0; i < n_; ++i) {
        vert_[j][i] = kContract * (vert_[j][i] - vert_[low_][i]) + vert_[low_][i];
        size_ += std::fabs(vert_[j][i] - vert_[low_][i]);
      }
    }
    if (size_ < oldsize_) {
      oldsize_ = size_;
      return true;
    }
    return false;
  }

  static constexpr double kReflect = 1.0, kContract = 0.5, kExpand = 2.0;
  const double reltol_ = std::sqrt(DBL_EPSILON);
  Objective fn_;
  size_t n_;
  std::vector<std::vector<double>> vert_;
  std::vector<double> fval_;
  size_t low_ = 0;
  int evaluations_ = 0;
  double convtol_ = 0, size_ = 0, oldsize_ = 0;
};

// etscalc for ETS(A,N,N): the mean squared one-step error (amse[0]), and the last level.
double ses_mse(const std::vector<double>& y, double alpha, double l0, double* last_level,
               std::vector<double>* fitted) {
  double level = l0, amse = 0, denom = 0;
  for (double v : y) {
    if (fitted != nullptr) fitted->push_back(level);
    const double e = v - level;
    denom += 1.0;
    amse = (amse * (denom - 1.0) + (e * e)) / denom;
    level = level + alpha * (v - level);
  }
  if (last_level != nullptr) *last_level = level;
  return amse;
}

}  // namespace

SesFit fit_ses(const std::vector<double>& x, double alpha_start) {
  if (x.empty()) throw std::invalid_argument("fit_ses: empty series");
  const size_t maxn = std::min<size_t>(10, x.size());  // initstate: max(10, 2m), m = 1
  const double l0 = r_mean(x.data(), maxn);
  const Objective mse = [&x](const std::vector<double>& p) {
    if (p[0] < kAlphaLower || p[0] > kAlphaUpper) return std::numeric_limits<double>::infinity();
    return ses_mse(x, p[0], p[1], nullptr, nullptr);
  };
  NelderMead nm(mse, {alpha_start, l0});
  nm.run(2000);
  SesFit fit;
  fit.alpha = nm.best()[0];
  fit.level0 = nm.best()[1];
  fit.evaluations = nm.evaluations();
  fit.fitted.reserve(x.size());
  fit.mse = ses_mse(x, fit.alpha, fit.level0, &fit.level, &fit.fitted);
  return fit;
}

}  // namespace attnfc::train::m4
