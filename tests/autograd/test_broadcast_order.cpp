// Broadcasting binary ops walk coalesced rows (strided.hpp, coalesce_rows): size-1 dims
// dropped and dims merged where both operands step through them as one. That must not
// change a single bit: every gradient element must receive the same terms in the same
// order as the plain loop over padded dims gives them. These tests rebuild that order by
// hand (a row's terms summed first when the operand is broadcast along the row) and
// compare bit for bit, at 1 and 2 threads, on shapes large enough to run in parallel.
#include <doctest/doctest.h>
#include <omp.h>

#include <cstring>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/parameters.hpp"

using namespace attnfc;
using ag::Tensor;

namespace {

std::vector<float> pattern(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    // Values of mixed magnitude, so that summing in another order changes the bits.
    x = static_cast<float>(static_cast<int32_t>(s >> 8) % 2001 - 1000) *
        ((s & 3u) == 0 ? 1e-3f : 0.37f);
  }
  return v;
}

bool same_bits(const float* a, const float* b, int64_t n) {
  return std::memcmp(a, b, static_cast<size_t>(n) * sizeof(float)) == 0;
}

struct Result {
  std::vector<float> y, dx, dt;
};

// y = x + t with x of shape xs, t of shape ts (t broadcast); the loss sum(y * w) makes
// dy = w exactly.
Result add_and_backward(const ag::Shape& xs, const ag::Shape& ts, int threads) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  ag::ParameterSet ps;
  const Tensor x = ps.create("x", xs), t = ps.create("t", ts);
  const std::vector<float> xv = pattern(x.numel(), 1), tv = pattern(t.numel(), 2);
  std::memcpy(x.data(), xv.data(), xv.size() * sizeof(float));
  std::memcpy(t.data(), tv.data(), tv.size() * sizeof(float));
  ps.zero_grad();
  Result r;
  {
    ag::Graph g;
    ag::GraphScope scope(g);
    const Tensor y = ag::add(x, t);
    const std::vector<float> w = pattern(y.numel(), 3);
    const Tensor wt = ag::from_data(y.shape(), w.data());
    g.backward(ag::sum_all(ag::mul(y, wt)));
    r.y.assign(y.data(), y.data() + y.numel());
  }
  r.dx.assign(x.grad(), x.grad() + x.numel());
  r.dt.assign(t.grad(), t.grad() + t.numel());
  omp_set_num_threads(saved);
  return r;
}

}  // namespace

TEST_CASE("bias over a trailing size-1 dim: [B, n, H, 1] + [H, 1] keeps every bit") {
  constexpr int64_t B = 32, N = 21, H = 96;  // the head's skip bias on the S shape
  const std::vector<float> dy = pattern(B * N * H, 3);
  const std::vector<float> xv = pattern(B * N * H, 1), tv = pattern(H, 2);
  // The plain order: rows (b, n, h) of one element; each adds (0 + term) to dt[h].
  std::vector<float> y(static_cast<size_t>(B * N * H)), dt(H, 0.0f);
  for (int64_t r = 0; r < B * N; ++r) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t i = r * H + h;
      y[static_cast<size_t>(i)] = xv[static_cast<size_t>(i)] + tv[static_cast<size_t>(h)];
      float acc = 0.0f;
      acc += dy[static_cast<size_t>(i)];
      dt[static_cast<size_t>(h)] += acc;
    }
  }
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    const Result r = add_and_backward({B, N, H, 1}, {H, 1}, threads);
    CHECK(same_bits(r.y.data(), y.data(), B * N * H));
    CHECK(same_bits(r.dx.data(), dy.data(), B * N * H));
    CHECK(same_bits(r.dt.data(), dt.data(), H));
  }
}

TEST_CASE("an operand broadcast along merged dims keeps its per-row sums") {
  // [B, n, W] + [B, 1, 1]: n and W could merge into rows of n*W, which would sum all
  // n*W terms of dt[b] at once; the plain order sums each row of W first, then adds
  // the n row sums in order.
  constexpr int64_t B = 40, N = 21, W = 33;
  const std::vector<float> dy = pattern(B * N * W, 3);
  std::vector<float> dt(B, 0.0f);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t j = 0; j < W; ++j) acc += dy[static_cast<size_t>((b * N + n) * W + j)];
      dt[static_cast<size_t>(b)] += acc;
    }
  }
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    const Result r = add_and_backward({B, N, W}, {B, 1, 1}, threads);
    CHECK(same_bits(r.dx.data(), dy.data(), B * N * W));
    CHECK(same_bits(r.dt.data(), dt.data(), B));
  }
}

TEST_CASE("a per-row operand [B, n, 1] over [B, n, H] sums its rows as before") {
  constexpr int64_t B = 16, N = 21, H = 97;
  const std::vector<float> dy = pattern(B * N * H, 3);
  std::vector<float> dt(B * N, 0.0f);
  for (int64_t r = 0; r < B * N; ++r) {
    float acc = 0.0f;
    for (int64_t h = 0; h < H; ++h) acc += dy[static_cast<size_t>(r * H + h)];
    dt[static_cast<size_t>(r)] += acc;
  }
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    const Result r = add_and_backward({B, N, H}, {B, N, 1}, threads);
    CHECK(same_bits(r.dt.data(), dt.data(), B * N));
  }
}
