#pragma once
// OpenMP loops for the row / elementwise / attention kernels. Work is split into
// items whose results do not depend on which thread runs them, so every kernel
// is bit-identical at any thread count. Each region first sets FTZ/DAZ, and a
// call made from inside another parallel region runs on the calling thread
// (no nested parallel regions).
#include "isa.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "attnfc/kernels/threading.hpp"

namespace attnfc::kernels::ATTNFC_ISA::detail {

// Threads for `items` work items of about `work_per_item` flops each: small
// problems stay on one thread because waking the team costs a few microseconds.
inline int threads_for(int64_t items, int64_t work_per_item) {
  if (omp_in_parallel() || items <= 1) return 1;
  if (items * std::max<int64_t>(work_per_item, 1) < (int64_t{1} << 15)) return 1;
  return static_cast<int>(std::min<int64_t>(current_threads(), items));
}

// body(i) for i in [0, n), statically scheduled.
template <class Body>
void parallel_for(int64_t n, int64_t work_per_item, Body&& body) {
  const int threads = threads_for(n, work_per_item);
#pragma omp parallel num_threads(threads)
  {
    enable_flush_to_zero();
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; ++i) body(i);
  }
}

// body(i) for i in [0, n), handed out one at a time (uneven items, e.g. causal tiles).
template <class Body>
void parallel_for_dynamic(int64_t n, int64_t work_per_item, Body&& body) {
  const int threads = threads_for(n, work_per_item);
#pragma omp parallel num_threads(threads)
  {
    enable_flush_to_zero();
#pragma omp for schedule(dynamic, 1)
    for (int64_t i = 0; i < n; ++i) body(i);
  }
}

// body(begin, end) over fixed-size chunks of [0, n) (the chunking is independent of
// the thread count, so any per-chunk partial result is too).
template <class Body>
void parallel_chunks(int64_t n, int64_t chunk, int64_t work_per_element, Body&& body) {
  const int64_t chunks = (n + chunk - 1) / chunk;
  parallel_for(chunks, chunk * work_per_element, [&](int64_t c) {
    const int64_t begin = c * chunk;
    body(begin, std::min(n, begin + chunk));
  });
}

}  // namespace attnfc::kernels::ATTNFC_ISA::detail
