// The quantile head's ops (monotone_levels, pinball_over_levels) run over blocks of rows, in
// parallel, each level's C values contiguous; here they are compared bit for bit with plain
// loops of the formulas in model_ops.hpp over (r, c), forward and backward, at 1 and 2
// threads, on shapes with several blocks, a partial last block, widths C from 1 to 679, the
// median at either end and inside, and masked values.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../../src/model/model_ops.hpp"
#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/parameters.hpp"
#include "attnfc/kernels/random.hpp"

using namespace attnfc;

namespace {

double gap(double x) {
  return 0.5 * (x + std::sqrt(x * x + 1.0));
}
double gap_slope(double x) {
  return 0.5 * (1.0 + x / std::sqrt(x * x + 1.0));
}

struct Case {
  int64_t R, Q, C, m;
};

struct Result {
  float loss = 0;
  std::vector<float> levels, dx;
};

// The formulas, one row (r, c) at a time.
Result reference(const Case& k, const std::vector<float>& x, const std::vector<float>& y,
                 const std::vector<float>& w, const std::vector<float>& q) {
  const int64_t R = k.R, Q = k.Q, C = k.C, m = k.m;
  const auto at = [&](int64_t r, int64_t j, int64_t c) { return (r * Q + j) * C + c; };
  Result out;
  out.levels.assign(x.size(), 0.0f);
  out.dx.assign(x.size(), 0.0f);
  std::vector<float> dp(x.size(), 0.0f);
  std::vector<float>& p = out.levels;
  double total = 0, weight = 0;
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) {
      p[at(r, m, c)] = x[at(r, m, c)];
      for (int64_t j = m + 1; j < Q; ++j)
        p[at(r, j, c)] = static_cast<float>(p[at(r, j - 1, c)] + gap(x[at(r, j, c)]));
      for (int64_t j = m - 1; j >= 0; --j)
        p[at(r, j, c)] = static_cast<float>(p[at(r, j + 1, c)] - gap(x[at(r, j, c)]));
      if (w[r * C + c] == 0.0f) continue;
      double sum = 0;
      for (int64_t j = 0; j < Q; ++j) {
        const double u = static_cast<double>(y[r * C + c]) - p[at(r, j, c)];
        sum += std::max(q[j] * u, (q[j] - 1.0) * u);
      }
      total += w[r * C + c] * sum;
      weight += w[r * C + c];
    }
  const double inv = 1.0 / (weight * static_cast<double>(Q));
  out.loss = static_cast<float>(total * inv);
  const double g = static_cast<double>(static_cast<float>(inv));  // upstream grad 1 * farg
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) {
      if (w[r * C + c] == 0.0f) continue;
      for (int64_t j = 0; j < Q; ++j) {
        const double u = static_cast<double>(y[r * C + c]) - p[at(r, j, c)];
        const double slope = (u < 0 ? 1.0 : 0.0) - (u != 0 ? static_cast<double>(q[j]) : 0.0);
        dp[at(r, j, c)] += static_cast<float>(g * w[r * C + c] * slope);
      }
    }
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) {
      double above = 0, below = 0;
      for (int64_t j = Q - 1; j > m; --j) {
        above += dp[at(r, j, c)];
        out.dx[at(r, j, c)] += static_cast<float>(gap_slope(x[at(r, j, c)]) * above);
      }
      for (int64_t j = 0; j < m; ++j) {
        below += dp[at(r, j, c)];
        out.dx[at(r, j, c)] -= static_cast<float>(gap_slope(x[at(r, j, c)]) * below);
      }
      out.dx[at(r, m, c)] += static_cast<float>(above + below + dp[at(r, m, c)]);
    }
  return out;
}

Result run_ops(const Case& k, const std::vector<float>& x, const std::vector<float>& y,
               const std::vector<float>& w, const std::vector<float>& q, int threads) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  ag::ParameterSet params;  // x as a leaf with a gradient
  const ag::Tensor xt = params.create("x", {k.R, k.Q, k.C});
  std::copy(x.begin(), x.end(), xt.data());
  params.zero_grad();
  ag::Graph graph;
  Result out;
  {
    ag::GraphScope scope(graph);
    const ag::Tensor yt = ag::from_data({k.R, k.C}, y.data());
    const ag::Tensor wt = ag::from_data({k.R, k.C}, w.data());
    const ag::Tensor levels = model::detail::monotone_levels(xt, static_cast<int>(k.m));
    const ag::Tensor loss = model::detail::pinball_over_levels(levels, yt, wt, q);
    graph.backward(loss);
    out.loss = loss.data()[0];
    out.levels.assign(levels.data(), levels.data() + levels.numel());
    out.dx.assign(xt.grad(), xt.grad() + xt.numel());
  }
  omp_set_num_threads(saved);
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("quantile ops: the blocked, parallel loops give the row-by-row formulas' bits") {
  // The model's rows are (window, position) pairs of Q levels of H C values: {672, 5, 96, 2}
  // is the S benchmark shape; 33 and 7 x 97 are awkward widths.
  const Case cases[] = {{1300, 5, 1, 2}, {1100, 4, 3, 0}, {700, 3, 1, 2}, {9, 5, 1, 1},
                        {672, 5, 96, 2}, {129, 4, 33, 3}, {7, 5, 679, 2}, {1, 2, 7, 0}};
  for (const Case& k : cases) {
    const int64_t n = k.R * k.Q * k.C;
    std::vector<float> x(n), y(k.R * k.C), w(k.R * k.C, 1.0f), q(k.Q);
    for (int64_t i = 0; i < n; ++i) x[i] = 3.0f * kernels::random_normal(21, i);
    for (size_t i = 0; i < y.size(); ++i) y[i] = 2.0f * kernels::random_normal(22, i);
    for (size_t i = 0; i < w.size(); i += 7) w[i] = 0.0f;  // masked rows
    for (int64_t j = 0; j < k.Q; ++j) q[j] = (static_cast<float>(j) + 0.5f) / k.Q;
    x[k.m * k.C] = y[0] = 0.5f;  // the median exactly at the target: the kink, slope 0
    const Result want = reference(k, x, y, w, q);
    for (int threads : {1, 2}) {
      CAPTURE(k.R);
      CAPTURE(k.C);
      CAPTURE(threads);
      const Result got = run_ops(k, x, y, w, q, threads);
      CHECK(got.loss == want.loss);
      CHECK(same_bits(got.levels, want.levels));
      CHECK(same_bits(got.dx, want.dx));
    }
  }
}
