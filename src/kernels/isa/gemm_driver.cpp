// The packed GEMM loop nest, with OpenMP over output tiles. Two orders:
//
// K inner (the model's shapes: skinny N, or few rows with a long K). Work items are
// an MC row block x a group of NR panels, taken dynamically; each item runs through
// every K block, so its C block stays in L2 and no barrier is ever needed. op(B) is
// packed whole once per thread when it fits the buffer, otherwise per item and K
// block. Row-major A is read in place, not packed; row-major op(B), when packed per K
// block, is packed by the first row pass's kernels as they read it (AVX-512); transposed
// A is packed per K block by a separate pass (see a_mode). (Prefetching the next block
// into L2 from the driver between kernel calls measured 3% slower, not faster.)
//
// K outer (large square products, where re-packing op(B) per row block would cost
// more): BLIS order, row blocks dealt out statically with no barrier (gemm_k_outer);
// op(A) is read as in K inner.
//
// Determinism: an element's value depends only on the K-block split and the
// micro-kernel's k order, never on which thread computes its tile or on the order
// chosen, so results are bit-identical for any thread count.
#include "isa.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include "gemm_internal.hpp"

namespace attnfc::kernels::ATTNFC_ISA::gemm_detail {
namespace {

// Floats in a thread's op(B) buffer: a kKc x kNc block, or the whole of op(B) for K
// inner when it fits.
constexpr long kBFloats = static_cast<long>(kKc) * kNc;

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
  static constexpr size_t kABytes = sizeof(float) * kMaxMc * kKc;
  static constexpr size_t kBBytes = sizeof(float) * kBFloats;
  float* a_ = nullptr;
  float* b_ = nullptr;
};

PackBuffers& thread_buffers() {
  thread_local PackBuffers buffers;
  return buffers;
}

inline int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

// Near-equal split of `units` into `parts` ranges: part i is [lo(i), lo(i + 1)).
inline int split_point(int units, int parts, int i) {
  return static_cast<int>(static_cast<long>(units) * i / parts);
}

// Runs `body(i)` for i in [0, n): shared among the team with a dynamic schedule and no
// barrier when called by every thread of a parallel region, serially otherwise.
template <class Body>
void team_for(bool team, int n, Body&& body) {
  if (!team) {
    for (int i = 0; i < n; ++i) body(i);
  } else {
#pragma omp for schedule(dynamic, 1) nowait
    for (int i = 0; i < n; ++i) body(i);
  }
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

// An item's share of the output: rows [ic, ic + mc) and columns [jc + jr0, jc + jr1).
struct Block {
  int ic, mc, jr0, jr1;
};

struct Grid {
  int m_panels, n_mblocks, n_panels, n_groups;
  Block block(int item, const KernelSpec& ks, int M, int nc) const {
    const int mb = item / n_groups, g = item % n_groups;
    const int ic = split_point(m_panels, n_mblocks, mb) * ks.mr;
    return {ic, std::min(split_point(m_panels, n_mblocks, mb + 1) * ks.mr, M) - ic,
            split_point(n_panels, n_groups, g) * ks.nr,
            std::min(split_point(n_panels, n_groups, g + 1) * ks.nr, nc)};
  }
};

// How an item reads op(A): packed per K block, or for whole panels of mr rows of
// row-major A, in place (a last partial panel is always packed). Transposed A is always
// packed beforehand: an AVX-512 form that packed it while the first column pass read it
// (the mr values of k lda apart, each k a new row) was 8-60% slower on every TN shape of
// bench_gemm than this separate pass (AMD EPYC Zen 5 class, 1 and 2 threads, 2026-12-06).
enum class AMode { Packed, RowMajor };

AMode a_mode(const KernelSpec& ks, const Problem& p) {
  return !p.transA && ks.direct_a ? AMode::RowMajor : AMode::Packed;
}

// One item's share of one K block: every NR panel x every MR panel of the block, with
// op(B)'s packed panel of column jr (relative to jc) at b_origin + jr * kc. With fuse_b,
// the full panels after the first are not packed yet: the kernel of row panel 0 packs
// each one there as it reads it.
struct BlockJob {
  Block blk;
  int jc, nc, k0, kc;
  bool first, last;  // first / last K block
  float* b_origin;
  bool fuse_b;
};

void run_block(const KernelSpec& ks, const Problem& p, AMode amode, const BlockJob& j,
               float* a_buf) {
  const Block& blk = j.blk;
  const int kc = j.kc;
  // A wide item packs even row-major A: its panels are reused by many column panels, and
  // six rows read in place lda apart share cache sets when lda is a large power of two.
  if (amode == AMode::RowMajor && blk.jr1 - blk.jr0 >= ks.direct_a_max_cols) {
    amode = AMode::Packed;
  }
  // Panels of rows [0, full_rows) are read in place; the rest is packed.
  const int full_rows = amode == AMode::Packed ? 0 : blk.mc / ks.mr * ks.mr;
  if (full_rows < blk.mc) {
    pack_a(p.transA, p.A, p.lda, blk.ic + full_rows, blk.mc - full_rows, j.k0, kc, ks.mr,
           a_buf + static_cast<long>(full_rows) * kc);
  }
  const float* a_rows = p.A + static_cast<long>(blk.ic) * p.lda + j.k0;  // RowMajor
  for (int jr = blk.jr0; jr < blk.jr1; jr += ks.nr) {
    float* pb = j.b_origin + static_cast<long>(jr) * kc;
    const float* bias = p.ep.bias ? p.ep.bias + j.jc + jr : nullptr;
    const bool first_pass = jr == blk.jr0;
    const bool pack_b_here = j.fuse_b && !first_pass && jr + ks.nr <= blk.jr1;
    for (int ir = 0; ir < blk.mc; ir += ks.mr) {
      const TileStore st{p.C + static_cast<long>(blk.ic + ir) * p.ldc + j.jc + jr,
                         p.ldc,
                         std::min(ks.mr, blk.mc - ir),
                         std::min(ks.nr, j.nc - jr),
                         p.alpha,
                         p.beta,
                         j.first,
                         j.last,
                         bias,
                         p.ep.act};
      float* pa = a_buf + static_cast<long>(ir) * kc;
      if (ir == 0 && pack_b_here) {
        const float* b = p.B + static_cast<long>(j.k0) * p.ldb + j.jc + jr;
        if (full_rows > 0 && amode == AMode::RowMajor) {
          ks.direct_a_packing_b(kc, a_rows, p.lda, b, p.ldb, pb, st);
        } else {
          ks.packing_b(kc, pa, 0, b, p.ldb, pb, st);
        }
      } else if (ir < full_rows) {
        ks.direct_a(kc, a_rows + static_cast<long>(ir) * p.lda, p.lda, pb, st);
      } else {
        ks.kernel(kc, pa, pb, st);
      }
    }
  }
}

void gemm_k_inner(const KernelSpec& ks, const Problem& p, bool team, int threads, Grid grid) {
  PackBuffers& buf = thread_buffers();
  const int nkb = ceil_div(p.K, kKc);
  const AMode amode = a_mode(ks, p);
  for (int jc = 0; jc < p.N; jc += kNc) {
    const int nc = std::min(kNc, p.N - jc);
    grid.n_panels = ceil_div(nc, ks.nr);
    grid.n_groups = column_groups(grid.n_mblocks, grid.n_panels, threads);
    const long nc_pad = static_cast<long>(grid.n_panels) * ks.nr;
    const bool whole_b = nc_pad * p.K <= kBFloats;
    // Row-major op(B) packed per K block is packed by the kernels as they read it.
    const bool fuse_b = !whole_b && !p.transB && ks.packing_b &&
                        (amode != AMode::RowMajor || ks.direct_a_packing_b);
    bool have_b = false;
    team_for(team, grid.n_mblocks * grid.n_groups, [&](int item) {
      const Block blk = grid.block(item, ks, p.M, nc);
      if (whole_b && !have_b) {
        for (int kb = 0; kb < nkb; ++kb) {
          const int k0 = split_point(p.K, nkb, kb), k1 = split_point(p.K, nkb, kb + 1);
          pack_b(p.transB, p.B, p.ldb, k0, k1 - k0, jc, nc, ks.nr, buf.b() + k0 * nc_pad);
        }
        have_b = true;
      }
      for (int kb = 0; kb < nkb; ++kb) {
        const int k0 = split_point(p.K, nkb, kb);
        const int kc = split_point(p.K, nkb, kb + 1) - k0;
        BlockJob job{blk, jc, nc, k0, kc, kb == 0, kb == nkb - 1, buf.b() + k0 * nc_pad, false};
        if (!whole_b) {
          job.b_origin = buf.b() - static_cast<long>(blk.jr0) * kc;
          job.fuse_b = fuse_b;
          if (!fuse_b) {
            pack_b(p.transB, p.B, p.ldb, k0, kc, jc + blk.jr0, blk.jr1 - blk.jr0, ks.nr, buf.b());
          } else {
            // The kernels pack the full panels after the first; the first panel and a
            // partial last one are packed here.
            pack_b(false, p.B, p.ldb, k0, kc, jc + blk.jr0, std::min(ks.nr, blk.jr1 - blk.jr0),
                   ks.nr, buf.b());
            const int jl = blk.jr0 + (blk.jr1 - blk.jr0 - 1) / ks.nr * ks.nr;
            if (jl != blk.jr0 && blk.jr1 - jl < ks.nr) {
              pack_b(false, p.B, p.ldb, k0, kc, jc + jl, blk.jr1 - jl, ks.nr,
                     buf.b() + static_cast<long>(jl - blk.jr0) * kc);
            }
          }
        }
        run_block(ks, p, amode, job, buf.a());
      }
    });
  }
}

// BLIS order, each thread packing the B panels it needs into its own buffer. Items
// are dealt out statically, the same ones to a thread in every K block, so a C tile's
// K blocks run in order on one thread and no barrier is needed between K blocks (on a
// shared machine a barrier waits for the slowest, possibly descheduled, thread).
void gemm_k_outer(const KernelSpec& ks, const Problem& p, bool team, int threads, Grid grid) {
  PackBuffers& buf = thread_buffers();
  const int nkb = ceil_div(p.K, kKc);
  const AMode amode = a_mode(ks, p);
  const int tid = team ? omp_get_thread_num() : 0;
  for (int jc = 0; jc < p.N; jc += kNc) {
    const int nc = std::min(kNc, p.N - jc);
    grid.n_panels = ceil_div(nc, ks.nr);
    grid.n_groups = column_groups(grid.n_mblocks, grid.n_panels, threads);
    const int items = grid.n_mblocks * grid.n_groups;
    const int first = split_point(items, threads, tid), last = split_point(items, threads, tid + 1);
    for (int kb = 0; kb < nkb; ++kb) {
      const int k0 = split_point(p.K, nkb, kb);
      const int kc = split_point(p.K, nkb, kb + 1) - k0;
      bool have_full_b = false;  // this thread's B buffer holds all nc columns of this block
      for (int item = first; item < last; ++item) {
        const Block blk = grid.block(item, ks, p.M, nc);
        BlockJob job{blk, jc, nc, k0, kc, kb == 0, kb == nkb - 1, buf.b(), false};
        if (grid.n_groups == 1) {
          if (!have_full_b) pack_b(p.transB, p.B, p.ldb, k0, kc, jc, nc, ks.nr, buf.b());
          have_full_b = true;
        } else {
          pack_b(p.transB, p.B, p.ldb, k0, kc, jc + blk.jr0, blk.jr1 - blk.jr0, ks.nr, buf.b());
          job.b_origin = buf.b() - static_cast<long>(blk.jr0) * kc;
        }
        run_block(ks, p, amode, job, buf.a());
      }
    }
  }
}

}  // namespace

void gemm_packed(const KernelSpec& ks, const Problem& p, bool team, int threads) {
  Grid grid{};
  grid.m_panels = ceil_div(p.M, ks.mr);
  grid.n_mblocks = ceil_div(grid.m_panels, kMc / ks.mr);
  const int n_panels = ceil_div(std::min(p.N, kNc), ks.nr);
  const long nc_pad = static_cast<long>(n_panels) * ks.nr;
  const bool whole_b = nc_pad * p.K <= kBFloats;
  // Few rows: one row block per thread (up to kMaxMc rows), so that op(B), re-read for
  // every row block when it does not fit whole, is read as few times as possible.
  const bool few_rows = p.M <= kMaxMc * threads;
  if (few_rows) grid.n_mblocks = std::min(threads, grid.m_panels);
  // K inner re-packs a too-large op(B) once per row block; with several row blocks per
  // thread, sharing each packed B block (K outer) is cheaper.
  if (whole_b || few_rows) {
    gemm_k_inner(ks, p, team, threads, grid);
  } else {
    // K outer deals row blocks out statically: a multiple of the thread count of them.
    grid.n_mblocks = std::min(grid.m_panels, ceil_div(grid.n_mblocks, threads) * threads);
    gemm_k_outer(ks, p, team, threads, grid);
  }
}

}  // namespace attnfc::kernels::ATTNFC_ISA::gemm_detail
