#pragma once
// A 16-lane float vector for the elementwise / row kernels (softmax, layernorm,
// GELU, AdamW, attention): one zmm on AVX-512, two ymm on AVX2 + FMA, four q registers
// on aarch64's neon set, otherwise plain 16-element loops that the compiler vectorises
// for the baseline ISA.
// Every path evaluates every lane with the same formulas (the same FMAs, the same
// NaN rules for max/min); horizontal reductions use one fixed order, so a row's
// result never depends on which thread or which instruction set ran it. (A NaN
// result is NaN everywhere, but its sign and payload are not pinned: they follow
// the operand order each compiler picked.)
#include "isa.hpp"

#include <cmath>
#include <cstdint>

// One branch per instruction set; each defines VF, Mask, tail_mask, load/store, the
// arithmetic, less/select, reduce_add/reduce_max, keep_mask, exp and log_split.
#include "simd_avx2.hpp"
#include "simd_avx512.hpp"
#include "simd_neon.hpp"
#include "simd_portable.hpp"

namespace attnfc::kernels::ATTNFC_ISA::simd {

// Natural log of finite positive normal lanes (see kLn2 in simd_constants.hpp); other lanes are
// unspecified. One formula on every path: only the exponent/mantissa split differs.
inline VF log(VF x) {
  VF m, e;
  log_split(x, &m, &e);
  const VF one = set1(1.0f);
  const VF t = div(sub(m, one), add(m, one));
  const VF t2 = mul(t, t);
  VF q = set1(1.0f / 9);
  q = fmadd(q, t2, set1(1.0f / 7));
  q = fmadd(q, t2, set1(1.0f / 5));
  q = fmadd(q, t2, set1(1.0f / 3));
  q = fmadd(q, t2, one);
  return fmadd(e, set1(kLn2), mul(add(t, t), q));
}

// Horizontal helpers over a whole contiguous array, fixed order.
inline float sum(const float* x, int n) {
  VF a0 = zero(), a1 = zero();
  int j = 0;
  for (; j + 2 * kLanes <= n; j += 2 * kLanes) {
    a0 = add(a0, load(x + j));
    a1 = add(a1, load(x + j + kLanes));
  }
  for (; j < n; j += kLanes) a0 = add(a0, load(x + j, tail_mask(n - j)));
  return reduce_add(add(a0, a1));
}

}  // namespace attnfc::kernels::ATTNFC_ISA::simd
