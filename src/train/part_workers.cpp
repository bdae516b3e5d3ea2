// A step's micro-batches side by side, one per thread (part_workers.hpp).
#include "attnfc/train/part_workers.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>

#include "attnfc/kernels/threading.hpp"

namespace attnfc::train {

struct PartWorkers::Slot {
  explicit Slot(const SampleBuffers& s, size_t floats) : samples(s), grads(floats) {}
  SampleBuffers samples;
  ag::Graph graph;
  std::vector<float> grads;  // packed in parameter order (ag::GradientRedirect)
  double loss = 0;
  bool filled = false;  // the part was not empty
  std::exception_ptr error;
};

PartWorkers::PartWorkers(const ag::ParameterSet& params, const SampleBuffers& samples, int workers)
    : redirect_(params) {
  if (workers < 1) throw std::invalid_argument("PartWorkers: at least one worker");
  for (int w = 0; w < workers; ++w)
    slots_.push_back(std::make_unique<Slot>(samples, redirect_.floats()));
}

PartWorkers::~PartWorkers() = default;

size_t PartWorkers::bytes_reserved() const {
  size_t bytes = 0;
  for (const auto& slot : slots_)
    bytes += slot->graph.bytes_reserved() + slot->grads.size() * sizeof(float);
  return bytes;
}

// Forward and backward of one part on the calling thread, into the slot's own graph and
// gradient buffer.
void PartWorkers::run_part(Slot& slot, int part, const PartLoss& loss) {
  slot.filled = false;
  slot.error = nullptr;
  try {
    kernels::enable_flush_to_zero();  // as every kernel region does: the same bits
    slot.graph.reset();
    ag::GraphScope scope(slot.graph);
    ag::GradientRedirectScope to_slot(redirect_, slot.grads.data());
    const ag::Tensor l = loss(part, slot.samples);
    if (!l.defined()) return;
    std::memset(slot.grads.data(), 0, slot.grads.size() * sizeof(float));
    slot.loss = l.item();
    slot.graph.backward(l);
    slot.filled = true;
  } catch (...) {
    slot.error = std::current_exception();
  }
}

void PartWorkers::run(int begin, int end, int threads, const PartLoss& loss, GradientSum& sum) {
  const int wave = side_by_side(end - begin, threads);
  const int width = wave <= workers() ? wave : 1;
  for (int first = begin; first < end; first += width) {
    const int count = std::min(width, end - first);
    if (count == 1) {
      run_part(*slots_[0], first, loss);
    } else {
#pragma omp parallel for num_threads(count) schedule(static, 1)
      for (int w = 0; w < count; ++w) run_part(*slots_[static_cast<size_t>(w)], first + w, loss);
    }
    // In part order, after the whole wave: the sum the one-thread loop forms.
    for (int w = 0; w < count; ++w) {
      Slot& slot = *slots_[static_cast<size_t>(w)];
      if (slot.error) std::rethrow_exception(slot.error);
      if (slot.filled) sum.add(slot.grads.data(), slot.loss);
    }
  }
}

}  // namespace attnfc::train
