// Packed, register-blocked SGEMM (BLIS-style loop nest) with OpenMP over output tiles.
//
//   for each NC column block
//     for each K block (near-equal blocks of <= kKc, fixed by K alone)
//       work items = MC row block x group of NR panels, taken dynamically:
//         pack op(B) panels (thread's buffer, once per K block) and op(A) block
//         for each NR panel, for each MR panel: micro-kernel + fused store
//
// Determinism: an element's value depends only on the K-block split and the
// micro-kernel's k order, never on which thread computes its tile, so results are
// bit-identical for any thread count.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include "attnfc/kernels/threading.hpp"
#include "gemm_internal.hpp"

namespace attnfc::kernels {
namespace gemm_detail {
namespace {

// Products below this many multiply-adds may take the unpacked path (see prefer_small).
constexpr double kSmallMacs = 32768.0;
// Products below this many multiply-adds are not worth a parallel region.
constexpr double kParallelMacs = 262144.0;

// Per-thread packing buffers, cache-line aligned, sized for the largest block and
// allocated on first use: steady-state calls make no heap allocation.
class PackBuffers {
 public:
  PackBuffers() {
    a_ = static_cast<float*>(std::aligned_alloc(64, kABytes));
    b_ = static_cast<float*>(std::aligned_alloc(64, kBBytes));
    if (!a_ || !b_) {
      std::free(a_);
      std::free(b_);
      throw std::bad_alloc();
    }
  }
  ~PackBuffers() {
    std::free(a_);
    std::free(b_);
  }
  PackBuffers(const PackBuffers&) = delete;
  PackBuffers& operator=(const PackBuffers&) = delete;
  float* a() const { return a_; }
  float* b() const { return b_; }

 private:
  static constexpr size_t kABytes = sizeof(float) * kMc * kKc;
  static constexpr size_t kBBytes = sizeof(float) * kKc * kNc;
  float* a_ = nullptr;
  float* b_ = nullptr;
};

PackBuffers& thread_buffers() {
  thread_local PackBuffers buffers;
  return buffers;
}

struct Problem {
  bool transA, transB;
  int M, N, K;
  float alpha;
  const float* A;
  int lda;
  const float* B;
  int ldb;
  float beta;
  float* C;
  int ldc;
  Epilogue ep;
};

// Runs `body(i)` for i in [0, n): shared among the team with a dynamic schedule when
// called by every thread of a parallel region, serially otherwise. With `barrier` the
// team waits for every item before returning.
template <class Body>
void team_for(bool team, int n, bool barrier, Body&& body) {
  if (!team) {
    for (int i = 0; i < n; ++i) body(i);
  } else if (barrier) {
#pragma omp for schedule(dynamic, 1)
    for (int i = 0; i < n; ++i) body(i);
  } else {
#pragma omp for schedule(dynamic, 1) nowait
    for (int i = 0; i < n; ++i) body(i);
  }
}

// Near-equal split of `units` into `parts` ranges: part i is [lo(i), lo(i + 1)).
inline int split_point(int units, int parts, int i) {
  return static_cast<int>(static_cast<long>(units) * i / parts);
}

// How many groups of NR panels each row block is split into. Row blocks alone are
// enough when there are about three per thread (dynamic balancing). Otherwise the
// columns are split too, but every group repacks its row block's A, which costs about
// 8 / (group width in columns) of the group's compute on AVX-512, so groups keep at
// least kMinGroupPanels panels unless that would leave threads idle. The group count
// is rounded to a multiple of the thread count so that shares come out equal.
int column_groups(int n_mblocks, int n_panels, int threads) {
  constexpr int kMinGroupPanels = 4;
  if (threads <= 1 || n_mblocks >= 3 * threads) return 1;
  const int for_balance = (3 * threads + n_mblocks - 1) / n_mblocks;
  const int for_cheap_packing = std::max(1, n_panels / kMinGroupPanels);
  const int for_no_idle = (threads + n_mblocks - 1) / n_mblocks;
  int groups = std::min(for_balance, std::max(for_cheap_packing, for_no_idle));
  groups = std::min(groups, n_panels);
  if (groups >= threads) groups -= groups % threads;
  return std::max(groups, 1);
}

// The whole product, executed by every thread of a team (team = true) or by one
// thread. Work items (an MC row block x a group of NR panels) are taken dynamically;
// each thread packs the A block of its item and the B panels it needs into its own
// buffers. Private B costs a little duplicated packing but needs no barrier, which
// matters on a shared machine: a barrier waits for the slowest, possibly descheduled,
// thread. The only barriers are between K blocks (the next K block of a C tile must
// see the previous one's stores). How items are formed and who runs them never
// changes an element's arithmetic.
void gemm_team(const KernelSpec& ks, const Problem& p, bool team, int threads) {
  PackBuffers& buf = thread_buffers();
  const int nkb = (p.K + kKc - 1) / kKc;
  const int m_panels = (p.M + ks.mr - 1) / ks.mr;
  const int n_mblocks = (m_panels + kMc / ks.mr - 1) / (kMc / ks.mr);
  for (int jc = 0; jc < p.N; jc += kNc) {
    const int nc = std::min(kNc, p.N - jc);
    const int n_panels = (nc + ks.nr - 1) / ks.nr;
    const int n_groups = column_groups(n_mblocks, n_panels, threads);
    for (int kb = 0; kb < nkb; ++kb) {
      const int k0 = split_point(p.K, nkb, kb);
      const int kc = split_point(p.K, nkb, kb + 1) - k0;
      bool have_full_b = false;  // this thread's B buffer holds all nc columns of this block
      team_for(team, n_mblocks * n_groups, kb + 1 < nkb, [&](int item) {
        const int mb = item / n_groups, g = item % n_groups;
        const int ic = split_point(m_panels, n_mblocks, mb) * ks.mr;
        const int mc = std::min(split_point(m_panels, n_mblocks, mb + 1) * ks.mr, p.M) - ic;
        const int jr0 = split_point(n_panels, n_groups, g) * ks.nr;
        const int jr1 = std::min(split_point(n_panels, n_groups, g + 1) * ks.nr, nc);
        // b_origin + jr * kc is the packed panel of column jr (relative to jc).
        const float* b_origin = buf.b();
        if (n_groups == 1) {
          if (!have_full_b) pack_b(p.transB, p.B, p.ldb, k0, kc, jc, nc, ks.nr, buf.b());
          have_full_b = true;
        } else {
          pack_b(p.transB, p.B, p.ldb, k0, kc, jc + jr0, jr1 - jr0, ks.nr, buf.b());
          b_origin = buf.b() - static_cast<long>(jr0) * kc;
        }
        pack_a(p.transA, p.A, p.lda, ic, mc, k0, kc, ks.mr, buf.a());
        for (int jr = jr0; jr < jr1; jr += ks.nr) {
          const float* pb = b_origin + static_cast<long>(jr) * kc;
          const float* bias = p.ep.bias ? p.ep.bias + jc + jr : nullptr;
          for (int ir = 0; ir < mc; ir += ks.mr) {
            const TileStore st{p.C + static_cast<long>(ic + ir) * p.ldc + jc + jr,
                               p.ldc,
                               std::min(ks.mr, mc - ir),
                               std::min(ks.nr, nc - jr),
                               p.alpha,
                               p.beta,
                               kb == 0,
                               kb == nkb - 1,
                               bias,
                               p.ep.act};
            ks.kernel(kc, buf.a() + static_cast<long>(ir) * kc, pb, st);
          }
        }
      });
    }
  }
}

// Tiny products where packing costs more than it saves (measured on Ice Lake): with B
// stored N x K the unpacked path computes long contiguous dot products (good from
// K >= 64); with B row-major it sweeps rows of B once per row of A (good for M <= 4).
bool prefer_small(bool transB, int M, int K, double macs) {
  if (macs >= kSmallMacs) return false;
  return transB ? K >= 64 : M <= 4;
}

Path best_packed_path() {
#if defined(__AVX512F__)
  return Path::Avx512;
#elif defined(__AVX2__) && defined(__FMA__)
  return Path::Avx2;
#else
  return Path::Portable;
#endif
}

}  // namespace

bool path_available(Path p) {
  switch (p) {
    case Path::Auto:
    case Path::Small:
    case Path::Portable:
      return true;
    case Path::Avx2:
#if defined(__AVX2__) && defined(__FMA__)
      return true;
#else
      return false;
#endif
    case Path::Avx512:
#if defined(__AVX512F__)
      return true;
#else
      return false;
#endif
  }
  return false;
}

KernelSpec kernel_spec(Path p) {
  switch (p) {
#if defined(__AVX512F__)
    case Path::Avx512:
      return avx512_spec();
#endif
#if defined(__AVX2__) && defined(__FMA__)
    case Path::Avx2:
      return avx2_spec();
#endif
    default:
      return portable_spec();
  }
}

void gemm_with_path(Path path, bool threaded, bool transA, bool transB, int M, int N, int K,
                    float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                    float* C, int ldc, const Epilogue& ep) {
  if (M <= 0 || N <= 0) return;
  const double macs = static_cast<double>(M) * N * K;
  if (path == Path::Auto)
    path = prefer_small(transB, M, K, macs) ? Path::Small : best_packed_path();
  if (!path_available(path)) path = best_packed_path();
  // Serial paths set FTZ/DAZ too, so denormals behave the same at any thread count.
  enable_flush_to_zero();
  if (path == Path::Small || K <= 0) {
    gemm_small(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ep);
    return;
  }
  const KernelSpec ks = kernel_spec(path);
  const Problem p{transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ep};
  const int max_threads = omp_get_max_threads();
  if (!threaded || max_threads <= 1 || omp_in_parallel() || macs < kParallelMacs) {
    gemm_team(ks, p, false, 1);
    return;
  }
#pragma omp parallel num_threads(max_threads)
  {
    enable_flush_to_zero();
    gemm_team(ks, p, omp_get_num_threads() > 1, omp_get_num_threads());
  }
}

}  // namespace gemm_detail

void gemm(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
          const float* B, int ldb, float beta, float* C, int ldc, const Epilogue& ep) {
  gemm_detail::gemm_with_path(gemm_detail::Path::Auto, true, transA, transB, M, N, K, alpha, A, lda,
                              B, ldb, beta, C, ldc, ep);
}

// Many small products (attention heads): one product per thread, single-threaded
// inside, measured 2.3x faster than threading each product. Each product's result
// does not depend on which thread computes it, so the schedule can be dynamic.
void gemm_strided_batched(bool transA, bool transB, int M, int N, int K, float alpha,
                          const float* A, int lda, int64_t strideA, const float* B, int ldb,
                          int64_t strideB, float beta, float* C, int ldc, int64_t strideC,
                          int batch) {
  if (batch <= 0 || M <= 0 || N <= 0) return;
  const int nt = omp_get_max_threads();
  if (nt > 1 && batch >= nt && !omp_in_parallel()) {
    const int chunk = std::max(1, batch / (nt * 8));
#pragma omp parallel num_threads(nt)
    {
      enable_flush_to_zero();
#pragma omp for schedule(dynamic, chunk)
      for (int b = 0; b < batch; ++b) {
        gemm_detail::gemm_with_path(gemm_detail::Path::Auto, false, transA, transB, M, N, K, alpha,
                                    A + b * strideA, lda, B + b * strideB, ldb, beta,
                                    C + b * strideC, ldc, {});
      }
    }
    return;
  }
  for (int b = 0; b < batch; ++b) {
    gemm(transA, transB, M, N, K, alpha, A + b * strideA, lda, B + b * strideB, ldb, beta,
         C + b * strideC, ldc);
  }
}

}  // namespace attnfc::kernels
