// Every kernel path this CPU runs (avx512, avx2, neon, portable) against the portable path,
// bit for bit, on awkward shapes and hostile values: the kernels promise the same bits
// on every instruction set (docs/ARCHITECTURE.md, "Kernel paths"). The comparisons with
// the plain references, within tolerances, are in the other kernel tests, which ctest
// runs once per path. Also the dispatch API itself: names, errors, the default choice.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../src/kernels/isa_table.hpp"
#include "attnfc/kernels/isa.hpp"
#include "kernel_test_util.hpp"

using namespace attnfc::kernels;
using attnfc::test::randn;

namespace {

// Restores the path that was active when the test began.
struct IsaGuard {
  Isa before = active_isa();
  ~IsaGuard() { set_isa(before); }
};

// Sprinkles values that take special branches: zeros of both signs, large magnitudes,
// denormals (flushed by FTZ/DAZ on every path), and a few exact ties.
std::vector<float> hostile(size_t n, uint32_t seed, float scale = 1.0f) {
  std::vector<float> v = randn(n, seed, scale);
  const float specials[] = {0.0f, -0.0f, 1e-40f, -1e-40f, 30.0f, -30.0f, 88.5f, -100.0f, 1.0f};
  for (size_t i = 0; i < n; i += 7) v[i] = specials[(i / 7) % 9];
  return v;
}

// Runs `compute` (which fills the outputs it returns) on the portable path, then on
// every other path this CPU runs, and requires the same bytes.
void same_bits_on_every_path(const std::string& what,
                             const std::function<std::vector<float>()>& compute) {
  IsaGuard guard;
  set_isa(Isa::Portable);
  const std::vector<float> want = compute();
  for (Isa isa : supported_isas()) {
    if (isa == Isa::Portable) continue;
    set_isa(isa);
    const std::vector<float> got = compute();
    REQUIRE(got.size() == want.size());
    size_t first = got.size();
    for (size_t i = 0; i < got.size() && first == got.size(); ++i)
      if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) first = i;
    INFO(what << " on " << std::string(isa_name(isa)) << ": element " << first
              << " differs from portable");
    CHECK(first == got.size());
  }
}

// Row lengths: every tail of a 16-lane vector from 1 to 15 lanes (the neon path keeps a
// vector in four 4-lane quarters, so partial quarters at each position), whole vectors,
// and longer rows.
const int kAwkward[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 20, 33, 129};

}  // namespace

TEST_CASE("isa: names round-trip; compiled, supported and active paths are consistent") {
  for (Isa i : {Isa::Avx512, Isa::Avx2, Isa::Neon, Isa::Portable}) {
    REQUIRE(isa_from_name(isa_name(i)).has_value());
    CHECK(*isa_from_name(isa_name(i)) == i);
  }
  CHECK_FALSE(isa_from_name("sse9").has_value());
  const std::vector<Isa> compiled = compiled_isas(), supported = supported_isas();
  REQUIRE_FALSE(supported.empty());
  CHECK(supported.back() == Isa::Portable);
  for (Isa i : supported) CHECK(isa_table(i) != nullptr);
  CHECK(supported.size() <= compiled.size());
  // Without ATTNFC_KERNELS the first use picks the best path; with it, the named one.
  const char* env = std::getenv("ATTNFC_KERNELS");
  if (env == nullptr || *env == '\0')
    CHECK(active_isa() == supported.front());
  else
    CHECK(std::string(isa_name(active_isa())) == env);
  CHECK(isa_report().find(std::string("kernels: ") + isa_name(active_isa())) == 0);
}

TEST_CASE("isa: forcing an unknown or unsupported path is an error naming the choices") {
  IsaGuard guard;
  std::string compiled;  // the sets this build has, best first
  for (Isa i : compiled_isas())
    compiled += (compiled.empty() ? "" : " ") + std::string(isa_name(i));
  CHECK_THROWS_WITH_AS(
      set_isa("sse9"),
      doctest::Contains(("found 'sse9', expected one of: " + compiled + " (").c_str()),
      std::invalid_argument);
  for (Isa i : compiled_isas()) {
    if (isa_supported(i)) continue;
    CHECK_THROWS_WITH_AS(set_isa(i), doctest::Contains("need a CPU with them"),
                         std::invalid_argument);
  }
  const Isa was = active_isa();
  CHECK_THROWS(set_isa("sse9"));
  CHECK(active_isa() == was);  // a failed call changes nothing
}

TEST_CASE("isa: GEMM gives the same bits on every path, micro-kernel and transpose") {
  const Activation acts[] = {Activation::None, Activation::Relu, Activation::GeluTanh,
                             Activation::GeluErf};
  const gemm_detail::Path paths[] = {gemm_detail::Path::Auto, gemm_detail::Path::Small,
                                     gemm_detail::Path::Portable};
  int seed = 1;
  for (int M : {1, 7, 33, 129}) {
    for (int N : {1, 17, 64, 129}) {
      for (int K : {1, 16, 33, 300}) {
        const bool tA = (M + K) % 2 == 0, tB = (N + K) % 3 != 0;
        const Activation act = acts[seed % 4];
        // 0.3: beta * C rounds, so a path that rounds beta * C + acc twice differs.
        const float beta = seed % 3 == 0 ? 0.3f : 0.0f;
        const gemm_detail::Path path = paths[seed % 3];
        const std::vector<float> A = hostile(static_cast<size_t>(M) * K, seed),
                                 B = hostile(static_cast<size_t>(K) * N, seed + 100),
                                 C0 = randn(static_cast<size_t>(M) * N, seed + 200),
                                 bias = randn(N, seed + 300);
        ++seed;
        CAPTURE(M);
        CAPTURE(N);
        CAPTURE(K);
        CAPTURE(tA);
        CAPTURE(tB);
        same_bits_on_every_path("gemm", [&] {
          std::vector<float> C = C0;
          active_table().gemm_with_path(path, true, tA, tB, M, N, K, 0.75f, A.data(), tA ? M : K,
                                        B.data(), tB ? K : N, beta, C.data(), N,
                                        {bias.data(), act});
          return C;
        });
      }
    }
  }
  same_bits_on_every_path("gemm_strided_batched", [&] {
    const int M = 33, N = 17, K = 7, batch = 9;
    const std::vector<float> A = hostile(static_cast<size_t>(M) * K * batch, 5),
                             B = hostile(static_cast<size_t>(K) * N * batch, 6);
    std::vector<float> C(static_cast<size_t>(M) * N * batch);
    gemm_strided_batched(false, true, M, N, K, 1.0f, A.data(), K, M * K, B.data(), K, K * N, 0.0f,
                         C.data(), N, M * N, batch);
    return C;
  });
}

TEST_CASE("isa: softmax and layernorm give the same bits on every path") {
  for (int cols : kAwkward) {
    const int rows = 13;
    const size_t n = static_cast<size_t>(rows) * cols;
    const std::vector<float> x = hostile(n, cols, 3.0f), dy = randn(n, cols + 1);
    std::vector<uint8_t> pad(static_cast<size_t>(rows) * cols);
    for (size_t i = 0; i < pad.size(); ++i) pad[i] = (i % 5 == 3) ? 1 : 0;
    CAPTURE(cols);
    same_bits_on_every_path("softmax", [&] {
      std::vector<float> y(n), dx(n, 0.25f);
      RowMask mask;
      mask.causal = cols > 1;
      mask.rows_per_matrix = rows;
      mask.key_padding = pad.data();
      mask.rows_per_group = 1;
      softmax_forward(x.data(), y.data(), rows, cols, mask);
      softmax_backward(y.data(), dy.data(), dx.data(), rows, cols);
      y.insert(y.end(), dx.begin(), dx.end());
      return y;
    });
    same_bits_on_every_path("layernorm", [&] {
      const std::vector<float> gamma = randn(cols, 7), beta = randn(cols, 8);
      std::vector<float> y(n), mean(rows), rstd(rows), dx(n, 0.5f), dg(cols, 1.0f), db(cols);
      layernorm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(),
                        rows, cols, 1e-5f);
      layernorm_backward(dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx.data(),
                         dg.data(), db.data(), rows, cols);
      for (const auto* v : {&mean, &rstd, &dx, &dg, &db}) y.insert(y.end(), v->begin(), v->end());
      return y;
    });
  }
}

TEST_CASE("isa: GELU, dropout and AdamW give the same bits on every path") {
  for (int n : {1, 3, 4, 5, 7, 12, 13, 17, 129, 40000}) {
    const std::vector<float> x = hostile(n, n, 4.0f), dy = randn(n, n + 1);
    CAPTURE(n);
    for (bool tanh_form : {true, false}) {
      same_bits_on_every_path("gelu", [&] {
        std::vector<float> y(n), dx(n, 0.125f);
        gelu_forward(x.data(), y.data(), n, tanh_form);
        gelu_backward(x.data(), dy.data(), dx.data(), n, tanh_form);
        y.insert(y.end(), dx.begin(), dx.end());
        return y;
      });
    }
    same_bits_on_every_path("dropout", [&] {
      std::vector<float> y(n), dx(n, 1.0f);
      dropout_forward(x.data(), dy.data(), y.data(), n, 99, 0.3f);
      dropout_backward(dy.data(), dx.data(), n, 99, 0.3f);
      y.insert(y.end(), dx.begin(), dx.end());
      return y;
    });
    same_bits_on_every_path("adamw", [&] {
      std::vector<float> p = x, m(n, 0.01f), v(n, 0.02f);
      AdamWStep s;
      s.weight_decay = 0.1f;
      for (int step = 1; step <= 3; ++step) {
        s.step = step;
        adamw_update(p.data(), dy.data(), m.data(), v.data(), n, s);
      }
      p.insert(p.end(), m.begin(), m.end());
      p.insert(p.end(), v.begin(), v.end());
      return p;
    });
  }
}

TEST_CASE("isa: fused attention forward and backward give the same bits on every path") {
  struct Shape {
    int Lq, Lk, D;
    bool causal, padded;
  };
  const Shape shapes[] = {{1, 1, 1, true, false},     {7, 7, 7, true, true},
                          {33, 33, 16, true, false},  {17, 129, 33, false, true},
                          {129, 129, 64, true, true}, {70, 65, 8, false, false}};
  for (const Shape& s : shapes) {
    AttnParams p;
    p.batch = 2;
    p.heads = 2;
    p.Lq = s.Lq;
    p.Lk = s.Lk;
    p.head_dim = s.D;
    p.scale = 1.0f / std::sqrt(static_cast<float>(s.D));
    p.causal = s.causal;
    p.q = p.o = contiguous_layout(p.heads, s.Lq, s.D);
    p.k = p.v = contiguous_layout(p.heads, s.Lk, s.D);
    std::vector<uint8_t> pad(static_cast<size_t>(p.batch) * s.Lk, 0);
    for (size_t i = 0; i < pad.size(); ++i) pad[i] = i % 4 == 1;
    if (s.padded) p.key_padding = pad.data();
    const size_t nq = static_cast<size_t>(p.batch) * p.heads * s.Lq * s.D;
    const size_t nk = static_cast<size_t>(p.batch) * p.heads * s.Lk * s.D;
    const std::vector<float> Q = hostile(nq, 1), K = hostile(nk, 2), V = randn(nk, 3),
                             dO = randn(nq, 4);
    CAPTURE(s.Lq);
    CAPTURE(s.Lk);
    CAPTURE(s.D);
    same_bits_on_every_path("attention", [&] {
      std::vector<float> O(nq), lse(static_cast<size_t>(p.batch) * p.heads * s.Lq);
      std::vector<float> dQ(nq, 0.0f), dK(nk, 0.0f), dV(nk, 0.0f);
      attention_forward(p, Q.data(), K.data(), V.data(), O.data(), lse.data());
      attention_backward(p, Q.data(), K.data(), V.data(), O.data(), lse.data(), dO.data(),
                         dQ.data(), dK.data(), dV.data());
      for (const auto* v : {&lse, &dQ, &dK, &dV}) O.insert(O.end(), v->begin(), v->end());
      return O;
    });
  }
}
