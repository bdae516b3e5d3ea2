#pragma once
// The micro-batches of one step computed side by side, one per thread, instead of one
// after another with every op split across the threads (grad_sum.hpp defines the sum).
//
// Why: a step's ops are small (M: 672 x 128 x 128 products, 21 x 21 attention tiles);
// splitting each one over two threads spends much of the step at the ops' barriers
// (docs/BENCHMARKS.md: 1.5x at 2 threads). A micro-batch per thread synchronises once
// a step, as two processes of `mpirun` do (docs/SCALING.md).
//
// Each worker owns a graph, a copy of the sample buffers and a packed gradient buffer
// (ag::GradientRedirectScope sends its backward's parameter gradients there); the
// parameters are read, never written, while the workers run. Parts run in waves of at
// most `workers` and are added to the GradientSum in part order after each wave, so the
// sum ((g_0 + g_1) + g_2) + ... is the one the one-thread loop forms: the same bits at
// any thread count. Inside a worker every kernel runs on that worker's thread (the
// kernels do not nest parallel regions). All memory is allocated by the constructor.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/parameters.hpp"
#include "attnfc/base/sample.hpp"
#include "attnfc/kernels/thread_governor.hpp"
#include "attnfc/train/grad_sum.hpp"

namespace attnfc::train {

class PartWorkers {
 public:
  // Part k's loss (already weighted by its share of the batch), computed with `samples`
  // (the worker's buffers: fill them first) on the graph the calling thread records
  // into; an undefined tensor for an empty part. A reference to the caller's callable,
  // not a copy (std::function could allocate every step).
  class PartLoss {
   public:
    template <class F>
    PartLoss(F& f)  // NOLINT: implicit, like a function_ref
        : object_(&f),
          call_([](void* o, int k, SampleBuffers& s) { return (*static_cast<F*>(o))(k, s); }) {}
    ag::Tensor operator()(int part, SampleBuffers& samples) const {
      return call_(object_, part, samples);
    }

   private:
    void* object_;
    ag::Tensor (*call_)(void*, int, SampleBuffers&);
  };

  // Up to `workers` parts at once; each worker's buffers are copies of `samples`.
  PartWorkers(const ag::ParameterSet& params, const SampleBuffers& samples, int workers);
  PartWorkers(const PartWorkers&) = delete;
  PartWorkers& operator=(const PartWorkers&) = delete;
  ~PartWorkers();

  int workers() const { return static_cast<int>(slots_.size()); }
  // The workers' graph arenas and gradient buffers, in bytes (for memory accounting).
  size_t bytes_reserved() const;
  // How many parts run at once for `parts` parts on `threads` threads: all the threads
  // when every thread gets a part, else 1 (one part after another, each op on every
  // thread: no thread sits idle). The number of workers to construct, and run()'s rule.
  static int side_by_side(int parts, int threads) {
    return threads >= 2 && threads <= parts ? threads : 1;
  }
  // The workers to construct when the count may move down the thread governor's ladder
  // (max_threads, max_threads / 2, ..., 1; kernels/thread_governor.hpp): the most parts
  // side by side at any of its rungs. 4 threads and 2 parts: 2 (at the rung of 2 threads).
  static int most_side_by_side(int parts, int max_threads) {
    for (int n = max_threads; n >= 2; n = kernels::ThreadGovernor::next_lower(n))
      if (n <= parts) return n;
    return 1;
  }

  // Parts [begin, end), each added to `sum` in part order: in waves of side_by_side()
  // parts (1 when that exceeds workers()). A part's exception is rethrown after its wave.
  void run(int begin, int end, int threads, const PartLoss& loss, GradientSum& sum);

 private:
  struct Slot;
  void run_part(Slot& slot, int part, const PartLoss& loss);

  ag::GradientRedirect redirect_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace attnfc::train
