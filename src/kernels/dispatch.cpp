// Run-time kernel dispatch: the public kernel functions call through the table of the
// active instruction set, chosen once from cpuid (or ATTNFC_KERNELS) on first use.
#include <atomic>
#include <cstdlib>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "isa_table.hpp"

namespace attnfc::kernels {

// Defined by src/kernels/isa/table.cpp, once per compiled set.
#if defined(ATTNFC_HAVE_ISA_AVX512)
namespace avx512 {
extern const KernelTable kTable;
}
#endif
#if defined(ATTNFC_HAVE_ISA_AVX2)
namespace avx2 {
extern const KernelTable kTable;
}
#endif
#if defined(ATTNFC_HAVE_ISA_NEON)
namespace neon {
extern const KernelTable kTable;
}
#endif
namespace portable {
extern const KernelTable kTable;
}

namespace {

constexpr Isa kAllIsas[] = {Isa::Avx512, Isa::Avx2, Isa::Neon, Isa::Portable};

bool cpu_has(Isa isa) {
  switch (isa) {
    case Isa::Portable:
      return true;
#if defined(__x86_64__)
    // Each set is compiled with -march=x86-64-v3 / -v4, so it needs the whole level; libgcc's
    // checks include the operating system's support (XCR0) for the ymm/zmm state.
    case Isa::Avx2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("x86-64-v3");
    case Isa::Avx512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("x86-64-v4");
#endif
#if defined(__aarch64__)
    // Advanced SIMD is part of ARMv8-A: every aarch64 CPU runs the neon set.
    case Isa::Neon:
      return true;
#endif
    default:
      return false;
  }
}

std::string names(const std::vector<Isa>& isas) {
  std::string s;
  for (Isa i : isas) s += (s.empty() ? "" : " ") + std::string(isa_name(i));
  return s;
}

// Errors name `who` (ATTNFC_KERNELS, or set_isa), what was found and the choices.
Isa parse_isa(std::string_view name, const char* who) {
  if (const auto isa = isa_from_name(name)) return *isa;
  // The sets this build has (x86: avx512 avx2 portable; aarch64: neon portable).
  throw std::invalid_argument(std::string(who) + ": found '" + std::string(name) +
                              "', expected one of: " + names(compiled_isas()) +
                              " (this machine runs: " + names(supported_isas()) + ")");
}

const KernelTable* checked_table(Isa isa, const char* who) {
  if (!isa_supported(isa)) {
    throw std::invalid_argument(std::string(who) + ": the " + isa_name(isa) + " kernels " +
                                (isa_table(isa) ? "need a CPU with them; this one"
                                                : "are not compiled into this build; it") +
                                " runs: " + names(supported_isas()));
  }
  return isa_table(isa);
}

constexpr const char* kEnv = "ATTNFC_KERNELS";

const KernelTable* choose_from_environment() {
  const char* env = std::getenv(kEnv);
  if (env == nullptr || *env == '\0') return isa_table(supported_isas().front());
  return checked_table(parse_isa(env, kEnv), kEnv);
}

std::atomic<const KernelTable*> g_active{nullptr};

}  // namespace

const char* isa_name(Isa isa) {
  return enum_name(isa);
}

std::optional<Isa> isa_from_name(std::string_view name) {
  return enum_from_name<Isa>(name);
}

const KernelTable* isa_table(Isa isa) {
  switch (isa) {
#if defined(ATTNFC_HAVE_ISA_AVX512)
    case Isa::Avx512:
      return &avx512::kTable;
#endif
#if defined(ATTNFC_HAVE_ISA_AVX2)
    case Isa::Avx2:
      return &avx2::kTable;
#endif
#if defined(ATTNFC_HAVE_ISA_NEON)
    case Isa::Neon:
      return &neon::kTable;
#endif
    case Isa::Portable:
      return &portable::kTable;
    default:
      return nullptr;
  }
}

std::vector<Isa> compiled_isas() {
  std::vector<Isa> out;
  for (Isa i : kAllIsas)
    if (isa_table(i)) out.push_back(i);
  return out;
}

bool isa_supported(Isa isa) {
  return isa_table(isa) != nullptr && cpu_has(isa);
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa i : kAllIsas)
    if (isa_supported(i)) out.push_back(i);
  return out;
}

const KernelTable& active_table() {
  const KernelTable* t = g_active.load(std::memory_order_acquire);
  if (t == nullptr) {
    // First use: the environment's choice (which may throw) or the best this CPU has.
    static const KernelTable* const first = choose_from_environment();
    const KernelTable* expected = nullptr;
    g_active.compare_exchange_strong(expected, first, std::memory_order_acq_rel);
    t = g_active.load(std::memory_order_acquire);
  }
  return *t;
}

Isa active_isa() {
  return active_table().isa;
}

void set_isa(Isa isa) {
  g_active.store(checked_table(isa, "set_isa"), std::memory_order_release);
}

void set_isa(std::string_view name) {
  set_isa(parse_isa(name, "set_isa"));
}

void select_isa_from_environment() {
  const char* env = std::getenv(kEnv);
  if (env != nullptr && *env != '\0')
    g_active.store(checked_table(parse_isa(env, kEnv), kEnv), std::memory_order_release);
}

std::string isa_report() {
  const char* env = std::getenv("ATTNFC_KERNELS");
  const bool forced = env != nullptr && *env != '\0';
  return std::string("kernels: ") + isa_name(active_isa()) +
         (forced ? " (set by ATTNFC_KERNELS)" : " (the best this cpu runs)") +
         "; compiled: " + names(compiled_isas()) + "; this cpu runs: " + names(supported_isas());
}

void check_attention_params(const AttnParams& p, const char* who) {
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument(std::string(who) + ": " + what);
  };
  if (p.batch < 0 || p.heads < 0 || p.Lq < 0 || p.Lk < 0)
    fail("batch, heads, Lq and Lk must be >= 0");
  if (p.head_dim < 1 || p.head_dim > 256)
    fail("head_dim is " + std::to_string(p.head_dim) + ", expected 1..256");
}

// --- The public kernels: one indirect call each ---

void gemm(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
          const float* B, int ldb, float beta, float* C, int ldc, const Epilogue& ep) {
  active_table().gemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ep);
}
void gemm_strided_batched(bool transA, bool transB, int M, int N, int K, float alpha,
                          const float* A, int lda, int64_t strideA, const float* B, int ldb,
                          int64_t strideB, float beta, float* C, int ldc, int64_t strideC,
                          int batch) {
  active_table().gemm_strided_batched(transA, transB, M, N, K, alpha, A, lda, strideA, B, ldb,
                                      strideB, beta, C, ldc, strideC, batch);
}
void softmax_forward(const float* x, float* y, int rows, int cols, const RowMask& mask) {
  active_table().softmax_forward(x, y, rows, cols, mask);
}
void softmax_backward(const float* y, const float* dy, float* dx, int rows, int cols) {
  active_table().softmax_backward(y, dy, dx, rows, cols);
}
void layernorm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                       float* rstd, int rows, int C, float eps) {
  active_table().layernorm_forward(x, gamma, beta, y, mean, rstd, rows, C, eps);
}
void layernorm_backward(const float* dy, const float* x, const float* gamma, const float* mean,
                        const float* rstd, float* dx, float* dgamma, float* dbeta, int rows,
                        int C) {
  active_table().layernorm_backward(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, C);
}
void gelu_forward(const float* x, float* y, int64_t n, bool tanh_approx) {
  active_table().gelu_forward(x, y, n, tanh_approx);
}
void gelu_backward(const float* x, const float* dy, float* dx, int64_t n, bool tanh_approx) {
  active_table().gelu_backward(x, dy, dx, n, tanh_approx);
}
void dropout_forward(const float* x, const float* residual, float* y, int64_t n, uint64_t seed,
                     float p) {
  active_table().dropout_forward(x, residual, y, n, seed, p);
}
void dropout_backward(const float* dy, float* dx, int64_t n, uint64_t seed, float p) {
  active_table().dropout_backward(dy, dx, n, seed, p);
}
void adamw_update(float* param, const float* grad, float* m, float* v, int64_t n,
                  const AdamWStep& s) {
  active_table().adamw_update(param, grad, m, v, n, s);
}
void attention_forward(const AttnParams& p, const float* Q, const float* K, const float* V,
                       float* O, float* lse) {
  active_table().attention_forward(p, Q, K, V, O, lse);
}
void attention_backward(const AttnParams& p, const float* Q, const float* K, const float* V,
                        const float* O, const float* lse, const float* dO, float* dQ, float* dK,
                        float* dV) {
  active_table().attention_backward(p, Q, K, V, O, lse, dO, dQ, dK, dV);
}

}  // namespace attnfc::kernels
