#pragma once
// Internals of the packed GEMM (not part of the public API). Tests reach every
// micro-kernel path through KernelTable::gemm_with_path (isa_table.hpp).
//
// Layout of the packed panels (both zero-padded to whole panels):
//   A: for each MR-row panel, for k in [0,kc): MR values op(A)[i0 + r, k]
//   B: for each NR-col panel, for k in [0,kc): NR values op(B)[k, j0 + c]
// A micro-kernel multiplies one A panel by one B panel and stores the MR x NR tile
// through TileStore, which applies alpha/beta and, on the last K block, the epilogue.
#include "isa.hpp"

#include <cstddef>
#include <cstdint>

#include "attnfc/kernels/gemm.hpp"

namespace attnfc::kernels::ATTNFC_ISA::gemm_detail {

using kernels::gemm_detail::Path;  // isa_table.hpp

// Where and how a micro-kernel writes its tile.
struct TileStore {
  float* C;
  int ldc;
  int rows;  // valid rows of the tile (<= MR)
  int cols;  // valid columns of the tile (<= NR)
  float alpha;
  float beta;         // used only when first is set; 0 means C is not read
  bool first;         // first K block: C = alpha*acc + beta*C, otherwise C += alpha*acc
  bool last;          // last K block: apply bias and activation
  const float* bias;  // already offset to the tile's first column, or null
  Activation act;
};

using MicroKernel = void (*)(int kc, const float* pa, const float* pb, const TileStore& st);
// Same product with op(A) read in place: row r of the panel is a + r * lda, k contiguous
// (row-major A, no transpose); all mr rows must exist.
using DirectAKernel = void (*)(int kc, const float* a, long lda, const float* pb,
                               const TileStore& st);

// Row-major op(B) read in place (row k of the panel is b + k * ldb, all nr columns
// present) and copied to the packed panel pb as it goes; op(A) packed (lda ignored) or,
// for the row-major form, read in place as by DirectAKernel.
using PackingBKernel = void (*)(int kc, const float* a, long lda, const float* b, long ldb,
                                float* pb, const TileStore& st);

struct KernelSpec {
  int mr;
  int nr;
  MicroKernel kernel;
  DirectAKernel direct_a = nullptr;    // null: row-major op(A) is packed
  PackingBKernel packing_b = nullptr;  // null: op(B) is packed beforehand
  PackingBKernel direct_a_packing_b = nullptr;
  int direct_a_max_cols = 1 << 30;  // items this many columns wide or wider pack op(A)
};

// Blocking: K is cut into near-equal blocks of at most kKc (the split depends only
// on K, so the summation order never depends on the thread count); A blocks of
// kMc rows (up to kMaxMc when M is small) live in L2, B blocks of kKc x kNc in L2/L3.
inline constexpr int kKc = 256;
inline constexpr int kMc = 192;     // multiple of every MR (12, 6, 4)
inline constexpr int kMaxMc = 384;  // multiple of every MR
inline constexpr int kNc = 1024;    // multiple of every NR (32, 16, 8)
inline constexpr int kMaxMr = 12;
inline constexpr int kMaxNr = 32;

// Kernels available in this build (Avx512/Avx2 need the matching -march, Neon the neon set).
bool path_available(Path p);
KernelSpec kernel_spec(Path p);  // p must be a packed path (Portable, Avx2, Avx512, Neon)

KernelSpec portable_spec();
#if defined(__AVX2__) && defined(__FMA__)
KernelSpec avx2_spec();
#endif
#if defined(__AVX512F__)
KernelSpec avx512_spec();
#endif
#if ATTNFC_ISA_IS_NEON
KernelSpec neon_spec();
#endif

// Packing (gemm_pack.cpp). Rows/cols beyond mc/nc are zero-filled up to the panel size.
void pack_a(bool transA, const float* A, int lda, int i0, int mc, int k0, int kc, int mr,
            float* dst);
void pack_b(bool transB, const float* B, int ldb, int k0, int kc, int j0, int nc, int nr,
            float* dst);

// Scalar epilogue for a tile held in acc[MR rows x ld] (portable, AVX2 and neon paths).
void store_tile_generic(const float* acc, int ld, const TileStore& st);

// The unpacked path for tiny products (single-threaded).
void gemm_small(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
                const float* B, int ldb, float beta, float* C, int ldc, const Epilogue& ep);

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

// The packed loop nest (gemm_driver.cpp), run by every thread of a team (team = true)
// or by one thread.
void gemm_packed(const KernelSpec& ks, const Problem& p, bool team, int threads);

// Full GEMM with a forced path; threaded says whether it may open a parallel region.
void gemm_with_path(Path path, bool threaded, bool transA, bool transB, int M, int N, int K,
                    float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                    float* C, int ldc, const Epilogue& ep);

}  // namespace attnfc::kernels::ATTNFC_ISA::gemm_detail
