// GEMM: every micro-kernel path this CPU supports against the double-accumulating
// reference, on awkward shapes, all transposes, alpha/beta, padded leading dimensions,
// fused epilogues, strided batches; plus bit-identical results at 1, 2 and 3 threads.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "../../src/kernels/isa_table.hpp"
#include "attnfc/kernels/gemm.hpp"

using namespace attnfc::kernels;
namespace gd = attnfc::kernels::gemm_detail;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

// Deterministic values in [-1, 1).
struct Lcg {
  uint64_t s;
  float next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(static_cast<int32_t>(s >> 32) * (1.0 / 2147483648.0));
  }
};

// rows x cols matrix with leading dimension ld; the padding holds NaN so that any read
// of it poisons the result.
std::vector<float> make_matrix(int rows, int cols, int ld, uint64_t seed) {
  std::vector<float> m(static_cast<size_t>(std::max(rows, 1)) * ld, kNaN);
  Lcg g{seed};
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) m[static_cast<size_t>(r) * ld + c] = g.next();
  return m;
}

struct GemmCase {
  bool tA, tB;
  int M, N, K;
  float alpha, beta;
  int pad;  // extra elements on every leading dimension
  Activation act = Activation::None;
  bool bias = false;
};

struct GemmOperands {
  int lda, ldb, ldc;
  std::vector<float> A, B, C0, bias;
};

GemmOperands make_gemm_operands(const GemmCase& c, uint64_t seed) {
  GemmOperands o;
  const int a_rows = c.tA ? c.K : c.M, a_cols = c.tA ? c.M : c.K;
  const int b_rows = c.tB ? c.N : c.K, b_cols = c.tB ? c.K : c.N;
  o.lda = a_cols + c.pad;
  o.ldb = b_cols + c.pad;
  o.ldc = c.N + c.pad;
  o.A = make_matrix(a_rows, a_cols, o.lda, seed);
  o.B = make_matrix(b_rows, b_cols, o.ldb, seed + 1);
  o.C0 = make_matrix(c.M, c.N, o.ldc, seed + 2);
  if (c.beta == 0.0f) {
    for (int r = 0; r < c.M; ++r)
      for (int j = 0; j < c.N; ++j) o.C0[static_cast<size_t>(r) * o.ldc + j] = kNaN;
  }
  if (c.bias) {
    Lcg g{seed + 3};
    o.bias.resize(c.N);
    for (float& b : o.bias) b = g.next();
  }
  return o;
}

// |error| <= n u scale, with scale = |alpha| sum_k |a||b| + |beta c| + |bias| (the
// standard bound for a length-K float dot product, n = K + a few for the epilogue).
// Returns the number of elements outside the bound; padding must be untouched.
int count_mismatches(const GemmCase& c, const GemmOperands& o, const std::vector<float>& got,
                     const std::vector<float>& want) {
  int bad = 0;
  const double u = std::ldexp(1.0, -24);
  for (int i = 0; i < c.M; ++i) {
    for (int j = 0; j < c.N; ++j) {
      double s = 0.0;
      for (int k = 0; k < c.K; ++k) {
        const float a = c.tA ? o.A[static_cast<size_t>(k) * o.lda + i]
                             : o.A[static_cast<size_t>(i) * o.lda + k];
        const float b = c.tB ? o.B[static_cast<size_t>(j) * o.ldb + k]
                             : o.B[static_cast<size_t>(k) * o.ldb + j];
        s += std::fabs(static_cast<double>(a) * b);
      }
      const size_t idx = static_cast<size_t>(i) * o.ldc + j;
      double scale = std::fabs(c.alpha) * s + 1e-6;
      if (c.beta != 0.0f) scale += std::fabs(c.beta * o.C0[idx]);
      if (c.bias) scale += std::fabs(o.bias[j]);
      const double tol = (c.K + 8) * u * scale * 2.0;
      const double err = std::fabs(static_cast<double>(got[idx]) - want[idx]);
      if (!(err <= tol)) ++bad;  // also catches NaN
    }
    for (int j = c.N; j < o.ldc; ++j) {
      const size_t idx = static_cast<size_t>(i) * o.ldc + j;
      if (!std::isnan(got[idx])) ++bad;  // padding overwritten
    }
  }
  return bad;
}

std::vector<float> run_gemm(gd::Path path, const GemmCase& c, const GemmOperands& o) {
  std::vector<float> C = o.C0;
  const Epilogue ep{c.bias ? o.bias.data() : nullptr, c.act};
  if (path == gd::Path::Auto) {
    gemm(c.tA, c.tB, c.M, c.N, c.K, c.alpha, o.A.data(), o.lda, o.B.data(), o.ldb, c.beta, C.data(),
         o.ldc, ep);
  } else {
    active_table().gemm_with_path(path, true, c.tA, c.tB, c.M, c.N, c.K, c.alpha, o.A.data(), o.lda,
                                  o.B.data(), o.ldb, c.beta, C.data(), o.ldc, ep);
  }
  return C;
}

std::vector<float> run_reference(const GemmCase& c, const GemmOperands& o) {
  std::vector<float> C = o.C0;
  const Epilogue ep{c.bias ? o.bias.data() : nullptr, c.act};
  gemm_reference(c.tA, c.tB, c.M, c.N, c.K, c.alpha, o.A.data(), o.lda, o.B.data(), o.ldb, c.beta,
                 C.data(), o.ldc, ep);
  return C;
}

const gd::Path kPaths[] = {gd::Path::Auto, gd::Path::Small,  gd::Path::Portable,
                           gd::Path::Avx2, gd::Path::Avx512, gd::Path::Neon};

const char* path_name(gd::Path p) {
  switch (p) {
    case gd::Path::Auto:
      return "auto";
    case gd::Path::Small:
      return "small";
    case gd::Path::Portable:
      return "portable";
    case gd::Path::Avx2:
      return "avx2";
    case gd::Path::Avx512:
      return "avx512";
    case gd::Path::Neon:
      return "neon";
  }
  return "?";
}

void check_all_paths(const GemmCase& c, uint64_t seed) {
  const GemmOperands o = make_gemm_operands(c, seed);
  const std::vector<float> want = run_reference(c, o);
  for (gd::Path p : kPaths) {
    if (!active_table().gemm_path_available(p)) continue;
    const std::string path_label = path_name(p);
    CAPTURE(path_label);
    CAPTURE(c.tA);
    CAPTURE(c.tB);
    CAPTURE(c.M);
    CAPTURE(c.N);
    CAPTURE(c.K);
    CAPTURE(c.alpha);
    CAPTURE(c.beta);
    CAPTURE(static_cast<int>(c.act));
    CHECK(count_mismatches(c, o, run_gemm(p, c, o), want) == 0);
  }
}

struct Shape {
  int M, N, K;
};

// Every size in {1, 7, 33, 129, 257} appears in every dimension, next to small and
// large partners; 257 crosses the MC (192) row block and the K-block split (256).
const Shape kShapes[] = {{1, 1, 1},     {1, 33, 7},     {7, 1, 33},     {33, 7, 1},
                         {7, 7, 7},     {33, 33, 33},   {129, 7, 33},   {7, 129, 257},
                         {257, 33, 7},  {33, 257, 129}, {129, 129, 1},  {1, 257, 257},
                         {257, 1, 129}, {257, 257, 33}, {129, 33, 257}, {257, 129, 257}};

struct AlphaBeta {
  float alpha, beta;
};
const AlphaBeta kAlphaBeta[] = {{1.0f, 0.0f}, {0.5f, 1.0f}, {-1.5f, 0.25f}, {2.0f, 0.0f}};

}  // namespace

TEST_CASE("gemm matches the reference on awkward shapes, all transposes and paths") {
  uint64_t seed = 1;
  int variant = 0;
  for (const Shape& s : kShapes) {
    for (int t = 0; t < 4; ++t) {
      const AlphaBeta ab = kAlphaBeta[variant++ % 4];
      const GemmCase c{(t & 1) != 0, (t & 2) != 0, s.M, s.N, s.K, ab.alpha, ab.beta, (t * 3) % 5};
      check_all_paths(c, seed += 10);
    }
  }
}

TEST_CASE("gemm alpha/beta variants, beta = 0 ignores NaN in C, padded leading dims") {
  uint64_t seed = 500;
  for (const AlphaBeta& ab : kAlphaBeta) {
    for (int t = 0; t < 4; ++t) {
      check_all_paths({(t & 1) != 0, (t & 2) != 0, 45, 70, 300, ab.alpha, ab.beta, 13}, seed++);
    }
  }
}

TEST_CASE("gemm fuses bias and every activation into the store") {
  const Activation acts[] = {Activation::None, Activation::Relu, Activation::GeluTanh,
                             Activation::GeluErf};
  uint64_t seed = 900;
  for (Activation act : acts) {
    for (int with_bias = 0; with_bias < 2; ++with_bias) {
      for (int t = 0; t < 4; ++t) {
        // K = 600 gives three K blocks: the epilogue must run_gemm once, on the last.
        GemmCase c{(t & 1) != 0, (t & 2) != 0,         37, 50,  t < 2 ? 600 : 19,
                   1.0f,         t == 3 ? 0.5f : 0.0f, 3,  act, with_bias != 0};
        check_all_paths(c, seed++);
      }
    }
  }
}

TEST_CASE("gemm edge cases: empty products, K = 0, more than one NC column block") {
  // K = 0: C = act(beta C + bias) for every path.
  check_all_paths({false, false, 9, 40, 0, 1.0f, 0.5f, 2, Activation::Relu, true}, 7);
  check_all_paths({true, true, 5, 3, 0, 1.0f, 0.0f, 0, Activation::None, true}, 8);
  // N beyond one NC block (1024) with a thin M.
  check_all_paths({false, true, 7, 1100, 33, 1.0f, 0.0f, 1}, 9);
  check_all_paths({true, false, 3, 1030, 70, 1.0f, 1.0f, 0}, 10);
  // op(B) too large to pack whole (1024 x 257 panels): with few rows it is packed per
  // item and K block (K inner); with more rows than one block per thread, once per K
  // block and shared (K outer, the BLIS order).
  check_all_paths({true, false, 40, 1025, 257, 1.0f, 0.5f, 0, Activation::None, true}, 11);
  check_all_paths({false, false, 390, 1025, 257, -1.0f, 0.0f, 3}, 12);
  check_all_paths({true, false, 390, 1025, 257, 1.0f, 0.0f, 0, Activation::Relu, true}, 13);
  // M = 0 or N = 0: nothing is touched.
  float c = 42.0f;
  const float a = 1.0f;
  gemm(false, false, 0, 1, 1, 1.0f, &a, 1, &a, 1, 0.0f, &c, 1);
  gemm(false, false, 1, 0, 1, 1.0f, &a, 1, &a, 1, 0.0f, &c, 1);
  CHECK(c == 42.0f);
}

TEST_CASE("the mismatch check catches a wrong product") {
  // Guards against a comparison that passes everything: a transposed B must fail.
  const GemmCase c{false, false, 33, 33, 33, 1.0f, 0.0f, 0};
  const GemmOperands o = make_gemm_operands(c, 77);
  std::vector<float> wrong = o.C0;
  gemm(false, true, c.M, c.N, c.K, c.alpha, o.A.data(), o.lda, o.B.data(), o.ldb, c.beta,
       wrong.data(), o.ldc);
  CHECK(count_mismatches(c, o, wrong, run_reference(c, o)) > 100);
}

TEST_CASE("gemm results are bit-identical at 1, 2 and 3 threads") {
  const int saved = omp_get_max_threads();
  const GemmCase cases[] = {
      {false, false, 257, 129, 257, 1.0f, 0.0f, 0, Activation::GeluTanh, true},  // M split
      {false, true, 300, 96, 128, 1.0f, 0.5f, 5},                                // NT
      {true, false, 129, 257, 600, 0.5f, 1.0f, 0},                               // TN, 3 K blocks
      {true, true, 7, 1100, 300, 1.0f, 0.0f, 2, Activation::Relu, false},        // N split
      {false, false, 40, 45, 200, 1.0f, 0.0f, 0},     // just above the parallel threshold
      {false, false, 390, 1025, 257, 1.0f, 0.0f, 0},  // K outer at 1 thread, K inner at 2, 3
      {true, false, 390, 1025, 257, 1.0f, 0.0f, 0},   // the same with TN
      {true, false, 770, 200, 300, 1.0f, 0.0f, 0},    // TN packed by the first column pass
      // K outer at every thread count (row blocks dealt out statically), 4 K blocks.
      {false, false, 1160, 280, 950, 1.0f, 0.5f, 0},
      {true, false, 1160, 280, 950, 1.0f, 0.0f, 0}};
  uint64_t seed = 1234;
  for (const GemmCase& c : cases) {
    const GemmOperands o = make_gemm_operands(c, seed++);
    for (gd::Path p : kPaths) {
      if (!active_table().gemm_path_available(p)) continue;
      const std::string path_label = path_name(p);
      CAPTURE(path_label);
      CAPTURE(c.M);
      omp_set_num_threads(1);
      const std::vector<float> one = run_gemm(p, c, o);
      for (int nt : {2, 3}) {
        omp_set_num_threads(nt);
        const std::vector<float> many = run_gemm(p, c, o);
        CHECK(std::memcmp(one.data(), many.data(), sizeof(float) * one.size()) == 0);
      }
    }
  }
  omp_set_num_threads(saved);
}

// A forecast must not depend on how many windows share its batch, and M picks the path
// (tiny products are unpacked). So the unpacked path gives the packed path's bits, and a
// row of C is the same whatever M: with the old 16-partial-sum unpacked path, a validation
// score moved in its last digits whenever the last batch held one window.
TEST_CASE("gemm: the unpacked path gives the packed bits, and a row does not depend on M") {
  const GemmCase cases[] = {
      {false, true, 1, 96, 336, 1.0f, 0.0f, 0, Activation::None, true},  // the linear shortcut
      {false, false, 3, 70, 600, 0.75f, 0.3f, 3, Activation::GeluTanh, true},  // 3 K blocks
      {true, false, 4, 17, 257, 1.0f, 0.0f, 1, Activation::Relu, false},       // 2 K blocks
      {true, true, 2, 129, 33, 0.5f, 0.3f, 0, Activation::GeluErf, true},
      {false, true, 1, 7, 1, 1.0f, 0.0f, 0}};
  uint64_t seed = 77;
  for (const GemmCase& c : cases) {
    CAPTURE(c.tA);
    CAPTURE(c.tB);
    CAPTURE(c.K);
    const GemmOperands o = make_gemm_operands(c, seed++);
    const std::vector<float> small = run_gemm(gd::Path::Small, c, o);
    for (gd::Path p : kPaths) {
      if (p == gd::Path::Small || !active_table().gemm_path_available(p)) continue;
      const std::string path_label = path_name(p);
      CAPTURE(path_label);
      CHECK(std::memcmp(small.data(), run_gemm(p, c, o).data(), sizeof(float) * small.size()) == 0);
    }
  }
  // Row 0 of an NT product of M rows (the shortcut's shape: M windows x 336 -> 96) for M
  // from 1 up, against M = 1: both sides of the unpacked/packed threshold.
  const int K = 336, N = 96;
  const std::vector<float> A = make_matrix(40, K, K, 5), B = make_matrix(N, K, K, 6);
  std::vector<float> first(N), C(static_cast<size_t>(40) * N);
  gemm(false, true, 1, N, K, 1.0f, A.data(), K, B.data(), K, 0.0f, first.data(), N);
  for (int M : {2, 3, 4, 5, 7, 33, 40}) {
    CAPTURE(M);
    gemm(false, true, M, N, K, 1.0f, A.data(), K, B.data(), K, 0.0f, C.data(), N);
    CHECK(std::memcmp(first.data(), C.data(), sizeof(float) * N) == 0);
    gemm(false, false, M, N, N, 1.0f, A.data(), K, B.data(), N, 0.0f, C.data(), N);
    std::vector<float> one(N);
    gemm(false, false, 1, N, N, 1.0f, A.data(), K, B.data(), N, 0.0f, one.data(), N);
    CHECK(std::memcmp(one.data(), C.data(), sizeof(float) * N) == 0);
  }
}

TEST_CASE("gemm_strided_batched matches per-matrix reference, serial or parallel batch") {
  const int saved = omp_get_max_threads();
  struct Batched {
    bool tA, tB;
    int M, N, K, batch;
  };
  const Batched cases[] = {{false, true, 33, 17, 65, 5},  // batch >= threads
                           {true, false, 64, 64, 32, 9},
                           {false, false, 129, 70, 40, 1},  // batch < threads: threaded product
                           {true, true, 7, 33, 129, 3}};
  uint64_t seed = 4321;
  for (const Batched& bc : cases) {
    const int a_rows = bc.tA ? bc.K : bc.M, a_cols = bc.tA ? bc.M : bc.K;
    const int b_rows = bc.tB ? bc.N : bc.K, b_cols = bc.tB ? bc.K : bc.N;
    const int lda = a_cols + 3, ldb = b_cols + 1, ldc = bc.N + 2;
    const int64_t sA = static_cast<int64_t>(a_rows) * lda + 5;
    const int64_t sB = static_cast<int64_t>(b_rows) * ldb + 7;
    const int64_t sC = static_cast<int64_t>(bc.M) * ldc + 11;
    const std::vector<float> A = make_matrix(static_cast<int>(sA * bc.batch), 1, 1, seed++);
    const std::vector<float> B = make_matrix(static_cast<int>(sB * bc.batch), 1, 1, seed++);
    const std::vector<float> C0 = make_matrix(static_cast<int>(sC * bc.batch), 1, 1, seed++);
    std::vector<float> want = C0;
    for (int b = 0; b < bc.batch; ++b) {
      gemm_reference(bc.tA, bc.tB, bc.M, bc.N, bc.K, 0.75f, A.data() + b * sA, lda,
                     B.data() + b * sB, ldb, 0.5f, want.data() + b * sC, ldc);
    }
    std::vector<float> first;
    for (int nt : {1, 2, 3}) {
      omp_set_num_threads(nt);
      std::vector<float> got = C0;
      gemm_strided_batched(bc.tA, bc.tB, bc.M, bc.N, bc.K, 0.75f, A.data(), lda, sA, B.data(), ldb,
                           sB, 0.5f, got.data(), ldc, sC, bc.batch);
      CAPTURE(nt);
      CAPTURE(bc.M);
      int bad = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        // Loose bound here (values are O(1), K <= 129); the exact bound is tested above.
        if (!(std::fabs(got[i] - want[i]) <= 1e-4f * (1.0f + std::fabs(want[i])))) ++bad;
      }
      CHECK(bad == 0);
      if (first.empty()) first = got;
      CHECK(std::memcmp(first.data(), got.data(), sizeof(float) * got.size()) == 0);
    }
  }
  omp_set_num_threads(saved);
}

TEST_CASE("fused activations match apply_activation element by element") {
  // K = 1 and alpha = 1 make the pre-activation value exactly a*b + bias on every path,
  // so this isolates the vectorised GELU/ReLU approximations: x spans [-12, 12].
  const int M = 25, N = 97;
  std::vector<float> A(M), B(N), bias(N);
  for (int i = 0; i < M; ++i) A[i] = -12.0f + 24.0f * i / (M - 1);
  Lcg g{99};
  for (int j = 0; j < N; ++j) {
    B[j] = 0.05f + 0.95f * std::fabs(g.next());
    bias[j] = 0.25f * g.next();
  }
  const Activation acts[] = {Activation::Relu, Activation::GeluTanh, Activation::GeluErf};
  for (Activation act : acts) {
    for (gd::Path p :
         {gd::Path::Small, gd::Path::Portable, gd::Path::Avx2, gd::Path::Avx512, gd::Path::Neon}) {
      if (!active_table().gemm_path_available(p)) continue;
      std::vector<float> C(static_cast<size_t>(M) * N, kNaN);
      active_table().gemm_with_path(p, true, false, false, M, N, 1, 1.0f, A.data(), 1, B.data(), N,
                                    0.0f, C.data(), N, {bias.data(), act});
      double worst = 0.0;
      for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
          // The rounded product, as the kernels form it (immune to FMA contraction here).
          const float x = std::fma(A[i], B[j], 0.0f) + bias[j];
          const double want = apply_activation(act, x);
          const double err = std::fabs(C[static_cast<size_t>(i) * N + j] - want) /
                             std::max(1.0, std::fabs(static_cast<double>(x)));
          worst = std::isnan(err) ? 1e30 : std::max(worst, err);
        }
      }
      const std::string path_label = path_name(p);
      CAPTURE(path_label);
      CAPTURE(static_cast<int>(act));
      // Exact for the scalar epilogues; the AVX-512 GELUs measure ~1.5e-7 and ~1.9e-7.
      CHECK(worst <= 3e-7);
    }
  }
}
