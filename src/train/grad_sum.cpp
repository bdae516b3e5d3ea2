// A step's gradient summed over its micro-batches in part order, across processes
// (grad_sum.hpp).
#include "attnfc/train/grad_sum.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

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

// The parameters' gradients, one after another, into `out`.
void pack(const ag::ParameterSet& params, float* out) {
  for (const ag::NamedTensor& p : params.all()) {
    const auto n = static_cast<size_t>(p.tensor.numel());
    std::memcpy(out, p.tensor.grad(), n * sizeof(float));
    out += n;
  }
}

void unpack(const float* in, ag::ParameterSet& params) {
  for (const ag::NamedTensor& p : params.all()) {
    const auto n = static_cast<size_t>(p.tensor.numel());
    std::memcpy(p.tensor.grad(), in, n * sizeof(float));
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
    std::memcpy(sum_.data(), g, sum_.size() * sizeof(float));
    loss_ = loss;
    has_sum_ = true;
    return;
  }
  float* s = sum_.data();
  for (size_t i = 0; i < sum_.size(); ++i) s[i] += g[i];
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
      const float* g = p.tensor.grad();
      const int64_t n = p.tensor.numel();
      for (int64_t i = 0; i < n; ++i) s[i] += g[i];
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
  std::memcpy(next_pending(), packed, sum_.size() * sizeof(float));
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
