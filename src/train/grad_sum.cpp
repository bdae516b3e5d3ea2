// A step's gradient summed over its micro-batches in part order, across processes
// (grad_sum.hpp).
#include "attnfc/train/grad_sum.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "attnfc/kernels/threading.hpp"

namespace attnfc::train {

std::pair<int64_t, int64_t> micro_batch_range(int64_t n, int k, int K) {
  const int64_t base = n / K, extra = n % K;
  return {k * base + std::min<int64_t>(k, extra), base + (k < extra ? 1 : 0)};
}

std::pair<int, int> parts_of_rank(int rank, int ranks, int K) {
  return {static_cast<int>(int64_t{rank} * K / ranks),
          static_cast<int>(int64_t{rank + 1} * K / ranks)};
}

namespace {

size_t gradient_floats(const ag::ParameterSet& params) {
  size_t n = 0;
  for (const ag::NamedTensor& p : params.all()) n += static_cast<size_t>(p.tensor.numel());
  return n;
}

// f(lo, hi) over [0, n) in blocks of 16384 floats, split over the threads when there are
// several blocks. Why: the sum's passes (a copy, an add, the copy back into the
// parameters) touch a few MB a step and ran on the main thread alone while the others
// waited (2-3% of an M step at 2 threads). Each element is computed as the serial loop
// computes it, so the bits do not depend on the thread count.
template <class F>
void over_blocks(size_t n, const F& f) {
  constexpr size_t kBlock = size_t{1} << 14;
  const auto blocks = static_cast<int64_t>((n + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(static) if (blocks >= 4)
  for (int64_t b = 0; b < blocks; ++b) {
    kernels::enable_flush_to_zero();  // as every kernel region does: the same bits
    const size_t lo = static_cast<size_t>(b) * kBlock;
    f(lo, std::min(n, lo + kBlock));
  }
}

void add_into(float* s, const float* g, size_t n) {
  over_blocks(n, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) s[i] += g[i];
  });
}

void copy_into(float* dst, const float* src, size_t n) {
  over_blocks(
      n, [&](size_t lo, size_t hi) { std::memcpy(dst + lo, src + lo, (hi - lo) * sizeof(float)); });
}

// The parameters' gradients, one after another, into `out`.
void pack(const ag::ParameterSet& params, float* out) {
  for (const ag::NamedTensor& p : params.all()) {
    const auto n = static_cast<size_t>(p.tensor.numel());
    copy_into(out, p.tensor.grad(), n);
    out += n;
  }
}

void unpack(const float* in, ag::ParameterSet& params) {
  for (const ag::NamedTensor& p : params.all()) {
    const auto n = static_cast<size_t>(p.tensor.numel());
    copy_into(p.tensor.grad(), in, n);
    in += n;
  }
}

}  // namespace

GradientSum::GradientSum(const ag::ParameterSet& params, const dist::Comm& comm, int K)
    : comm_(comm), sum_(gradient_floats(params)) {
  if (!comm.root()) {  // this rank holds its parts back until the prefix arrives
    const auto [first, end] = parts_of_rank(comm.rank(), comm.size(), K);
    pending_.resize(static_cast<size_t>(end - first) * sum_.size());
    pending_loss_.resize(static_cast<size_t>(end - first));
  }
}

void GradientSum::begin() {
  has_sum_ = false;
  pending_count_ = 0;
  loss_ = 0;
}

void GradientSum::accumulate(const float* g, double loss) {
  if (!has_sum_) {  // a copy, not 0 + g: the same bits, signed zeros included
    copy_into(sum_.data(), g, sum_.size());
    loss_ = loss;
    has_sum_ = true;
    return;
  }
  add_into(sum_.data(), g, sum_.size());
  loss_ += loss;
}

void GradientSum::add(const ag::ParameterSet& params, double loss) {
  if (comm_.root()) {  // nothing comes before rank 0's parts: sum as they come
    if (!has_sum_) {
      pack(params, sum_.data());
      loss_ = loss;
      has_sum_ = true;
      return;
    }
    float* s = sum_.data();
    for (const ag::NamedTensor& p : params.all()) {
      const auto n = static_cast<size_t>(p.tensor.numel());
      add_into(s, p.tensor.grad(), n);
      s += n;
    }
    loss_ += loss;
    return;
  }
  pack(params, next_pending());
  pending_loss_[static_cast<size_t>(pending_count_++)] = loss;
}

void GradientSum::add(const float* packed, double loss) {
  if (comm_.root()) {
    accumulate(packed, loss);
    return;
  }
  copy_into(next_pending(), packed, sum_.size());
  pending_loss_[static_cast<size_t>(pending_count_++)] = loss;
}

float* GradientSum::next_pending() {
  if (static_cast<size_t>(pending_count_) >= pending_loss_.size())
    throw std::logic_error("GradientSum::add: more parts than this rank computes");
  return pending_.data() + static_cast<size_t>(pending_count_) * sum_.size();
}

double GradientSum::finish(ag::ParameterSet& params) {
  if (!comm_.root()) {
    comm_.receive_from_previous(sum_.data(), sum_.size());
    comm_.receive_from_previous(&loss_, 1);
    has_sum_ = true;
    for (int k = 0; k < pending_count_; ++k)
      accumulate(pending_.data() + static_cast<size_t>(k) * sum_.size(),
                 pending_loss_[static_cast<size_t>(k)]);
  } else if (!has_sum_) {
    throw std::logic_error("GradientSum::finish: rank 0 added no part (part 0 is never empty)");
  }
  if (!comm_.last()) {
    comm_.send_to_next(sum_.data(), sum_.size());
    comm_.send_to_next(&loss_, 1);
  }
  comm_.broadcast(sum_.data(), sum_.size(), comm_.size() - 1);
  comm_.broadcast(&loss_, 1, comm_.size() - 1);
  unpack(sum_.data(), params);
  return loss_;
}

}  // namespace attnfc::train
