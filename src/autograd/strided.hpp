#pragma once
// Strided loops over up to 4 dimensions, shared by the ops. Shapes are padded on
// the left to 4 dims; a broadcast operand has stride 0 along broadcast dims.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "attnfc/autograd/tensor.hpp"
#include "attnfc/kernels/threading.hpp"

namespace attnfc::ag::detail {

using Dims4 = std::array<int64_t, 4>;

// Below this many elements a parallel region costs more than it saves.
constexpr int64_t kParallelMin = 1 << 15;

inline Dims4 pad_dims(const Shape& s) {
  Dims4 d{1, 1, 1, 1};
  for (int i = 0; i < s.ndim; ++i) d[4 - s.ndim + i] = s.dims[i];
  return d;
}

// Strides of t (shape s) as seen from a broadcast result of shape out: left-padded,
// and 0 wherever t has extent 1.
inline Dims4 pad_strides(const Shape& s, const std::array<int64_t, kMaxDims>& st) {
  Dims4 r{0, 0, 0, 0};
  for (int i = 0; i < s.ndim; ++i) r[4 - s.ndim + i] = s.dims[i] == 1 ? 0 : st[i];
  return r;
}

// f(i0, i1, i2, i3) for every index, i3 fastest. Serial: a fixed order.
template <class F>
inline void loop4(const Dims4& d, F&& f) {
  for (int64_t a = 0; a < d[0]; ++a)
    for (int64_t b = 0; b < d[1]; ++b)
      for (int64_t c = 0; c < d[2]; ++c)
        for (int64_t e = 0; e < d[3]; ++e) f(a, b, c, e);
}

// Same, parallel over the rows (i0, i1, i2). Only for loops where every index writes
// a distinct output element (so the result does not depend on the thread count).
template <class F>
inline void loop4_parallel(const Dims4& d, F&& f) {
  const int64_t rows = d[0] * d[1] * d[2];
  if (rows * d[3] < kParallelMin || rows < 2) {
    loop4(d, f);
    return;
  }
#pragma omp parallel
  {
    kernels::enable_flush_to_zero();
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t c = r % d[2], b = (r / d[2]) % d[1], a = r / (d[2] * d[1]);
      for (int64_t e = 0; e < d[3]; ++e) f(a, b, c, e);
    }
  }
}

inline int64_t offset4(const Dims4& st, int64_t a, int64_t b, int64_t c, int64_t e) {
  return a * st[0] + b * st[1] + c * st[2] + e * st[3];
}

// f(i) for every i in [0, n): split statically over the OpenMP team when `parallel`
// (each index on exactly one thread), else in order on this thread.
template <class F>
inline void index_loop(int64_t n, bool parallel, F&& f) {
  if (!parallel) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
#pragma omp parallel
  {
    kernels::enable_flush_to_zero();
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; ++i) f(i);
  }
}

// Walks the rows of padded dims 0..2 (row(a, b, c) per row), in parallel when
// `parallel` and the work is large; callers guarantee rows write distinct elements.
template <class F>
inline void for_rows(const Dims4& d, bool parallel, F&& row) {
  const int64_t rows = d[0] * d[1] * d[2];
  auto body = [&](int64_t r) {
    const int64_t c = r % d[2], b = (r / d[2]) % d[1], a = r / (d[2] * d[1]);
    row(a, b, c);
  };
  index_loop(rows, parallel && rows >= 2 && rows * d[3] >= kParallelMin, body);
}

// A broadcast loop's dims and the two operands' strides on them (the result is
// contiguous). `coalesce_rows` drops size-1 dims and merges neighbours that every
// operand steps through as one dim, as NumPy's iterators do: [B, n, H, 1] + [H, 1]
// then walks B*n rows of H elements instead of B*n*H rows of one. Taken only when
// each element sees the same terms in the same order, so results keep their bits:
// an operand broadcast along the new inner dim (summed per row by grad_row) must not
// get a longer row than before, and the loop must keep enough rows to split.
struct RowLoop {
  Dims4 d, s0, s1;
};

inline RowLoop coalesce_rows(const RowLoop& in) {
  Dims4 d{1, 1, 1, 1}, s0{0, 0, 0, 0}, s1{0, 0, 0, 0};
  int k = 4;  // d[k..3] filled, innermost last
  for (int i = 3; i >= 0; --i) {
    if (in.d[i] == 1) continue;
    if (k < 4 && in.s0[i] == s0[k] * d[k] && in.s1[i] == s1[k] * d[k]) {
      d[k] *= in.d[i];
      continue;
    }
    --k;
    d[k] = in.d[i];
    s0[k] = in.s0[i];
    s1[k] = in.s1[i];
  }
  const bool regrouped = (s0[3] == 0 || s1[3] == 0) && d[3] != in.d[3];
  const int64_t rows = d[0] * d[1] * d[2], old_rows = in.d[0] * in.d[1] * in.d[2];
  if (regrouped || (rows < 16 && rows < old_rows)) return in;
  return {d, s0, s1};
}

// Row-wise walk for the strided copies: f(dst_row, src_row) per row.
template <class F>
inline void rows_parallel(const Dims4& d, const Dims4& ds, const Dims4& ss, F&& f) {
  for_rows(d, true, [&](int64_t a, int64_t b, int64_t c) {
    f(offset4(ds, a, b, c, 0), offset4(ss, a, b, c, 0));
  });
}

// dst[i] = src[i] over shape s (both strided).
inline void copy_strided(float* dst, const std::array<int64_t, kMaxDims>& dst_st, const float* src,
                         const std::array<int64_t, kMaxDims>& src_st, const Shape& s) {
  const Dims4 d = pad_dims(s), ds = pad_strides(s, dst_st), ss = pad_strides(s, src_st);
  const int64_t n = d[3], dx = ds[3], sx = ss[3];
  rows_parallel(d, ds, ss, [&](int64_t od, int64_t os) {
    float* y = dst + od;
    const float* x = src + os;
    if (dx == 1 && sx == 1) {
      for (int64_t i = 0; i < n; ++i) y[i] = x[i];
    } else {
      for (int64_t i = 0; i < n; ++i) y[i * dx] = x[i * sx];
    }
  });
}

// dst[i] += alpha * src[i] over shape s. dst never aliases itself within a view
// (views cannot overlap), so the parallel loop is race-free.
inline void accumulate_strided(float* dst, const std::array<int64_t, kMaxDims>& dst_st,
                               const float* src, const std::array<int64_t, kMaxDims>& src_st,
                               const Shape& s, float alpha) {
  const Dims4 d = pad_dims(s), ds = pad_strides(s, dst_st), ss = pad_strides(s, src_st);
  const int64_t n = d[3], dx = ds[3], sx = ss[3];
  rows_parallel(d, ds, ss, [&](int64_t od, int64_t os) {
    float* y = dst + od;
    const float* x = src + os;
    if (dx == 1 && sx == 1) {
      for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
    } else {
      for (int64_t i = 0; i < n; ++i) y[i * dx] += alpha * x[i * sx];
    }
  });
}

// dst[0, n) = 0. Large blocks are zeroed by the team in fixed pieces: zeroing the
// gradient slots on one thread was about 2% of a 2-thread training step.
inline void zero_floats(float* dst, int64_t n) {
  constexpr int64_t kPiece = int64_t{1} << 14;
  const int64_t pieces = (n + kPiece - 1) / kPiece;
  if (pieces < 4 || omp_in_parallel()) {
    std::memset(dst, 0, static_cast<size_t>(n) * sizeof(float));
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < pieces; ++p) {
    const int64_t b = p * kPiece, e = std::min(n, b + kPiece);
    std::memset(dst + b, 0, static_cast<size_t>(e - b) * sizeof(float));
  }
}

// Parallel flat loop over [0, n) when n is large enough.
template <class F>
inline void flat_loop(int64_t n, F&& f) {
  index_loop(n, n >= kParallelMin, f);
}

}  // namespace attnfc::ag::detail
