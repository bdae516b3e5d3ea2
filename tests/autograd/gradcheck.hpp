#pragma once
// Central-difference gradient checker for the autograd ops.
//
// Method. For an op y = f(leaves) we check the analytic gradient of the scalar
//   L = sum_j w_j * y_j     (w_j fixed pseudo-random in [-1, 1])
// against finite differences. The analytic side runs the op's backward through
// sum_all(mul(y, w)). The numeric side runs only forwards (NoGradScope) and
// accumulates L in double from the float outputs, using Richardson-extrapolated
// central differences:
//   D(h) = (L(x+h) - L(x-h)) / 2h,   D = (4 D(h) - D(2h)) / 3   (error O(h^4)).
// h = 2^-6 is a power of two, so x +- h and x +- 2h are exact in float for |x| < 2^17.
//
// Tolerance. Each float output carries a rounding error of at most c*u*|y_j|
// (u = 2^-24, c a small op-dependent constant); it reaches D amplified by at most
// 1.5 / h. So the numeric side is exact up to
//   atol = noise * u * S / h,    S = sum_j |w_j * y_j|,  noise = 16 (covers c),
// plus O(h^4) truncation, which for smooth ops on O(1) inputs is below 1e-7.
// The analytic side is a float computation, accurate to ~1e-6 relative. We accept
//   |analytic - numeric| <= atol + rtol * |numeric|,  rtol = 1e-3,
// and test_gradcheck_catches.cpp shows a backward that is off by 1% is rejected.
//
// The checker runs at one thread: gradients do not depend on the thread count
// (test_determinism.cpp checks that bit for bit), and thousands of tiny forwards
// at 2 threads on a loaded 2-core machine would only measure OpenMP wake-ups.
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/parameters.hpp"
#include "attnfc/kernels/random.hpp"

namespace attnfc::test {

struct GradCheckReport {
  bool ok = true;
  double worst_ratio = 0.0;  // max |analytic - numeric| / tolerance
  std::string worst;         // description of the worst element
  int checked = 0;
};

struct GradCheckOptions {
  double h = 1.0 / 64.0;
  double rtol = 1e-3;
  double noise = 16.0;
  uint64_t seed = 12345;
};

// Iterates the logical elements of t (any strides), calling f(offset).
template <class F>
inline void for_each_offset(const ag::Tensor& t, F&& f) {
  int64_t idx[4] = {0, 0, 0, 0}, dims[4] = {1, 1, 1, 1}, st[4] = {0, 0, 0, 0};
  const int nd = t.ndim();
  for (int i = 0; i < nd; ++i) {
    dims[4 - nd + i] = t.size(i);
    st[4 - nd + i] = t.stride(i);
  }
  for (idx[0] = 0; idx[0] < dims[0]; ++idx[0])
    for (idx[1] = 0; idx[1] < dims[1]; ++idx[1])
      for (idx[2] = 0; idx[2] < dims[2]; ++idx[2])
        for (idx[3] = 0; idx[3] < dims[3]; ++idx[3])
          f(idx[0] * st[0] + idx[1] * st[1] + idx[2] * st[2] + idx[3] * st[3]);
}

inline std::vector<float> weights_for(int64_t n, uint64_t seed) {
  std::vector<float> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    w[i] = 2.0f * kernels::random_uniform(seed, static_cast<uint64_t>(i)) - 1.0f;
  }
  return w;
}

// leaves: contiguous tensors with gradients (ParameterSet parameters).
inline GradCheckReport grad_check(const std::vector<ag::Tensor>& leaves,
                                  const std::function<ag::Tensor()>& fn,
                                  const GradCheckOptions& opt = {}) {
  GradCheckReport rep;
  struct OneThread {
    int saved = omp_get_max_threads();
    OneThread() { omp_set_num_threads(1); }
    ~OneThread() { omp_set_num_threads(saved); }
  } one_thread;
  ag::Graph g;
  ag::GraphScope scope(g);
  // Analytic gradients.
  for (const ag::Tensor& t : leaves) {
    for (int64_t i = 0; i < t.numel(); ++i) t.grad()[i] = 0.0f;
  }
  std::vector<float> w;
  {
    const ag::Tensor y = fn();
    w = weights_for(y.numel(), opt.seed);
    const ag::Tensor wt = ag::from_data(y.shape(), w.data());
    g.backward(ag::sum_all(ag::mul(y, wt)));
  }
  std::vector<std::vector<float>> analytic;
  for (const ag::Tensor& t : leaves) analytic.emplace_back(t.grad(), t.grad() + t.numel());
  // Numeric: forwards only, L accumulated in double; also S = sum |w y| at x.
  auto loss = [&](double* S) {
    g.reset();
    ag::NoGradScope no_grad;
    const ag::Tensor y = fn();
    double L = 0.0, s = 0.0;
    size_t j = 0;
    for_each_offset(y, [&](int64_t o) {
      L += static_cast<double>(w[j]) * y.data()[o];
      s += std::fabs(static_cast<double>(w[j]) * y.data()[o]);
      ++j;
    });
    if (S) *S = s;
    return L;
  };
  double S = 0.0;
  loss(&S);
  const double u = std::ldexp(1.0, -24);
  const double atol = opt.noise * u * S / opt.h + 1e-7;
  for (size_t k = 0; k < leaves.size(); ++k) {
    const ag::Tensor& t = leaves[k];
    for (int64_t i = 0; i < t.numel(); ++i) {
      float& x = t.data()[i];
      const float x0 = x;
      const float h = static_cast<float>(opt.h);
      x = x0 + h;
      const double lp1 = loss(nullptr);
      x = x0 - h;
      const double lm1 = loss(nullptr);
      x = x0 + 2 * h;
      const double lp2 = loss(nullptr);
      x = x0 - 2 * h;
      const double lm2 = loss(nullptr);
      x = x0;
      const double d1 = (lp1 - lm1) / (2 * opt.h), d2 = (lp2 - lm2) / (4 * opt.h);
      const double numeric = (4 * d1 - d2) / 3;
      const double a = analytic[k][i];
      const double tol = atol + opt.rtol * std::fabs(numeric);
      const double ratio = std::fabs(a - numeric) / tol;
      ++rep.checked;
      if (!(ratio <= 1.0)) rep.ok = false;
      if (!(ratio <= rep.worst_ratio)) {
        rep.worst_ratio = ratio;
        char buf[160];
        std::snprintf(buf, sizeof buf, "leaf %zu element %lld: analytic %.8g numeric %.8g tol %.3g",
                      k, static_cast<long long>(i), a, numeric, tol);
        rep.worst = buf;
      }
    }
  }
  if (std::getenv("ATTNFC_GRADCHECK_VERBOSE")) {
    std::fprintf(stderr, "gradcheck: %d elements, worst ratio %.3f (%s)\n", rep.checked,
                 rep.worst_ratio, rep.worst.c_str());
  }
  return rep;
}

// Leaf factory: a parameter filled uniformly in [lo, hi] (deterministic per seed).
inline ag::Tensor leaf(ag::ParameterSet& ps, const ag::Shape& s, float lo, float hi,
                       uint64_t seed) {
  const ag::Tensor t = ps.create("leaf" + std::to_string(ps.all().size()), s);
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.data()[i] = lo + (hi - lo) * kernels::random_uniform(seed, static_cast<uint64_t>(i));
  }
  return t;
}

// Moves elements within `margin` of `kink` out to kink +- margin (for kinked ops).
inline void keep_away(const ag::Tensor& t, float kink, float margin) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    float& x = t.data()[i];
    if (std::fabs(x - kink) < margin) x = x >= kink ? kink + margin : kink - margin;
  }
}

}  // namespace attnfc::test

// Gradient-checks `leaves` against the loss built by the callable, with the worst
// element in the failure message. Expects `using attnfc::test::grad_check;`.
#define CHECK_GRADS(leaves, ...)                                        \
  do {                                                                  \
    const test::GradCheckReport rep_ = grad_check(leaves, __VA_ARGS__); \
    INFO(rep_.worst, " (worst ratio ", rep_.worst_ratio, ")");          \
    CHECK(rep_.checked > 0);                                            \
    CHECK(rep_.ok);                                                     \
  } while (0)
