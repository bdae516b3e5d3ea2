#pragma once
// Independent rows of a model op, split into blocks of a fixed number of rows (from the
// shape, never from the thread count) and the blocks over the team when the work is large:
// every value is the same at any thread count. Each region sets flush-to-zero, as every
// kernel region does.
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "attnfc/kernels/threading.hpp"

namespace attnfc::model::detail {

constexpr int64_t kBlockElements = 8192;            // about 32 KiB of floats
constexpr int64_t kParallelMin = int64_t{1} << 15;  // elements: below this one thread wins

template <class Body>
void for_row_blocks(int64_t R, int64_t per_row, Body&& body) {
  const int64_t rows = std::max<int64_t>(1, kBlockElements / std::max<int64_t>(per_row, 1));
  const int64_t blocks = (R + rows - 1) / rows;
  const auto run = [&](int64_t b) { body(b * rows, std::min(R, (b + 1) * rows)); };
  if (R * per_row < kParallelMin || blocks < 2 || omp_in_parallel()) {
    for (int64_t b = 0; b < blocks; ++b) run(b);
    return;
  }
#pragma omp parallel
  {
    kernels::enable_flush_to_zero();
#pragma omp for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) run(b);
  }
}

}  // namespace attnfc::model::detail
