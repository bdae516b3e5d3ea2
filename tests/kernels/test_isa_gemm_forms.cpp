// The packed GEMM's special forms against the portable path, bit for bit: row-major op(A)
// read in place, transposed op(A) packed into each kernel's panels (6 and 12 rows), row-major
// op(B) packed per K block by the first row pass, and the transposing packers. Shapes are
// chosen so that the driver takes each form with partial MR/NR panels, several K blocks,
// column groups (jr0 != 0), a second NC column block, K outer and K inner, at 1 and 2
// threads, with padded leading dimensions, alpha/beta and a fused bias + GELU.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "../../src/kernels/isa_table.hpp"
#include "attnfc/kernels/isa.hpp"
#include "kernel_test_util.hpp"

using namespace attnfc::kernels;
using attnfc::test::randn;
using attnfc::test::ThreadCount;

namespace {

struct FormCase {
  bool tA, tB;
  int M, N, K;
  const char* form;  // what the shape is meant to reach (for the failure message)
};

struct FormOperands {
  int lda, ldb, ldc;
  std::vector<float> A, B, C0, bias;
};

FormOperands make_form_operands(const FormCase& c, uint32_t seed) {
  FormOperands o;
  // Padded leading dimensions: a form that reads past its rows would pick up the pad.
  o.lda = (c.tA ? c.M : c.K) + 3;
  o.ldb = (c.tB ? c.K : c.N) + 5;
  o.ldc = c.N + 2;
  o.A = randn(static_cast<size_t>(c.tA ? c.K : c.M) * o.lda, seed);
  o.B = randn(static_cast<size_t>(c.tB ? c.N : c.K) * o.ldb, seed + 1);
  o.C0 = randn(static_cast<size_t>(c.M) * o.ldc, seed + 2);
  o.bias = randn(c.N, seed + 3);
  for (size_t i = 0; i < o.A.size(); i += 11) o.A[i] = i % 2 ? -0.0f : 0.0f;
  return o;
}

std::vector<float> run_form(const FormCase& c, const FormOperands& o, float beta, Activation act) {
  std::vector<float> C = o.C0;
  gemm(c.tA, c.tB, c.M, c.N, c.K, 0.75f, o.A.data(), o.lda, o.B.data(), o.ldb, beta, C.data(),
       o.ldc, {act == Activation::None ? nullptr : o.bias.data(), act});
  return C;
}

size_t first_difference(const std::vector<float>& got, const std::vector<float>& want) {
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) return i;
  return got.size();
}

// Portable at 2 threads is the reference (thread-count independence is tested in
// test_gemm.cpp); every other supported path runs at 1 and 2 threads.
void check_form(const FormCase& c, uint32_t seed, float beta, Activation act) {
  const Isa before = active_isa();
  const FormOperands o = make_form_operands(c, seed);
  std::vector<float> want;
  {
    ThreadCount threads(2);
    set_isa(Isa::Portable);
    want = run_form(c, o, beta, act);
  }
  for (Isa isa : supported_isas()) {
    if (isa == Isa::Portable) continue;
    set_isa(isa);
    for (int t : {1, 2}) {
      ThreadCount threads(t);
      const std::vector<float> got = run_form(c, o, beta, act);
      const size_t first = first_difference(got, want);
      INFO(std::string(c.form) << " " << (c.tA ? "T" : "N") << (c.tB ? "T" : "N") << " " << c.M
                               << "x" << c.N << "x" << c.K << " on " << std::string(isa_name(isa))
                               << " at " << t << " threads: element " << first
                               << " differs from portable");
      CHECK(first == got.size());
    }
  }
  set_isa(before);
}

}  // namespace

TEST_CASE("isa: GEMM forms (direct A, packed TN A, packing B) give portable's bits") {
  // op(B) of 1030 x 300 does not fit the packing buffer whole: packed per K block, by
  // the kernels of the first row pass when B is row-major; 1030 > NC adds a second
  // column block of 6 columns (a partial NR panel); M = 37 is six 6-row panels + 1
  // and three 12-row panels + 1, and at 2 threads few row blocks means column groups.
  const FormCase cases[] = {
      {false, false, 37, 1030, 300, "direct A + packing B"},
      {true, false, 37, 1030, 300, "packed TN A + packing B"},
      {false, true, 37, 1030, 300, "direct A, transposed B packed"},
      {true, true, 37, 130, 300, "packed TN A, transposed B packed"},
      {false, false, 61, 129, 257, "direct A, whole B"},
      {true, false, 61, 129, 257, "packed TN A, whole B"},
      // Transposed A into 6-row panels with a 4-row tail: the AVX2 packer's masked loads.
      {true, false, 40, 129, 100, "packed TN A, 6-row panels + 4"},
      // More rows than one block per thread with a B too large to pack whole: K outer.
      {false, false, 397, 520, 520, "K outer, direct A"},
      {true, false, 397, 520, 520, "K outer, packed TN A"},
      // Batched-attention-like: the transposing packer with K = 32.
      {false, true, 64, 64, 32, "NT 64x64x32"},
  };
  uint32_t seed = 1;
  for (const FormCase& c : cases) {
    check_form(c, seed, 0.0f, Activation::None);
    check_form(c, seed + 10, 0.5f, Activation::GeluTanh);
    seed += 20;
  }
}
