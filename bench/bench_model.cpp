// Training throughput and memory of the PatchTransformer on the shapes of issue 7:
//   S    P=16, 21 patches, d=64,  h=4, N=2, H=96, batch 32
//   M    P=16, 21 patches, d=128, h=8, N=3, H=96, batch 32
//   Long P=1,  L=512,      d=64,  h=4, N=2, H=1,  batch 32
//   XL   P=1,  L=2048,     d=64,  h=4, N=1, H=1,  batch 4
//   S-quantiles  S with model.quantiles [0.025, 0.1, 0.5, 0.9, 0.975] (issue 20: at most 15%
//                slower a step than S); its samples/s line carries S's, timed in the same
//                process just before, as ref "S"
//   S-quantiles-last  S-quantiles with model.quantile_positions "last" (the other levels
//                trained at the last position only); ref "S" as above
//   S-parts, M-parts  S and M with train.micro_batches 2: the batch's two halves computed
//                side by side, one a thread (train/part_workers.hpp), and summed; ref is
//                the same shape in one part, timed just before; `attnfc train` cuts a
//                batch in two by default (train.micro_batches 2)
//   Long-parts, XL-parts  the same for Long and XL (their peak memory with two parts)
// A step = forward + loss + backward + AdamW update, dropout 0.1. Metrics per case:
//   samples/s         batch / median step time
//   peak RSS MB       the process's peak resident memory while training minus its
//                     resident memory right after the model was built (weights in place):
//                     what training itself costs, measured exactly as
//                     `scripts/torch_reference.py --bench` measures PyTorch
//   x of 1 thread, interleaved   (at --threads 2 or more) samples/s at that count over
//                     samples/s at 1 thread, timed in turns in this process
//   arena+params MB   our own accounting: the graph's activation arena plus weights,
//                     gradients and the two AdamW moments
// MB = 10^6 bytes. PyTorch is measured side by side by scripts/bench.sh (not in this
// process, so there is no ref_value here).
#include <malloc.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/optim.hpp"
#include "attnfc/dist/comm.hpp"
#include "attnfc/kernels/threading.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "attnfc/train/grad_sum.hpp"
#include "attnfc/train/part_workers.hpp"
#include "bench_util.hpp"

using namespace attnfc;

namespace {

struct Shape {
  const char* name;
  int patch, length, d, heads, layers, horizon, batch;
  bool quantiles = false;
  int parts = 1;                // train.micro_batches
  bool quantiles_last = false;  // model.quantile_positions "last"
};

// A field of /proc/self/status ("VmRSS", "VmHWM") in MB; -1 where there is none.
double status_mb(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  double mb = -1;
  const size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, field, n) == 0 && line[n] == ':') {
      mb = std::atof(line + n + 1) * 1024.0 / 1e6;  // the kernel writes kB
      break;
    }
  }
  std::fclose(f);
  return mb;
}

// Starts a fresh peak: hands freed heap back to the kernel (so the previous case's pages
// cannot be reused unseen) and resets the high-water mark VmHWM to the current RSS.
bool reset_peak_rss() {
  malloc_trim(0);
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

// Samples/s at opt.threads over samples/s at 1 thread, the two timed in turns in this
// process (four rounds each, medians): on a VM whose speed drifts by a third between
// processes, the only scaling figure worth reading.
double thread_scaling(const std::function<void()>& step, const bench::Options& opt) {
  std::vector<double> one, many;
  for (int round = 0; round < 4; ++round) {
    kernels::set_threads(1);
    one.push_back(bench::time_median(step, opt.min_seconds / 4, 3, 50));
    kernels::set_threads(opt.threads);
    many.push_back(bench::time_median(step, opt.min_seconds / 4, 3, 50));
  }
  return bench::median(one) / bench::median(many);
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Options opt = bench::parse_args(argc, argv);
  const Shape shapes[] = {
      {"S", 16, 336, 64, 4, 2, 96, 32},
      {"M", 16, 336, 128, 8, 3, 96, 32},
      {"Long", 1, 512, 64, 4, 2, 1, 32},
      {"XL", 1, 2048, 64, 4, 1, 1, 4},
      {"S-quantiles", 16, 336, 64, 4, 2, 96, 32, true},
      {"S-quantiles-last", 16, 336, 64, 4, 2, 96, 32, true, 1, true},
      {"S-parts", 16, 336, 64, 4, 2, 96, 32, false, 2},
      {"M-parts", 16, 336, 128, 8, 3, 96, 32, false, 2},
      {"Long-parts", 1, 512, 64, 4, 2, 1, 32, false, 2},
      {"XL-parts", 1, 2048, 64, 4, 1, 1, 4, false, 2},
  };
  std::map<std::string, double> samples_of;  // each case's samples/s: the later ones' ref
  for (const Shape& s : shapes) {
    if (!bench::selected(opt, s.name)) continue;
    model::ModelConfig cfg;
    cfg.patch_len = s.patch;
    cfg.context_length = s.length;
    cfg.d_model = s.d;
    cfg.n_heads = s.heads;
    cfg.n_layers = s.layers;
    cfg.horizon = s.horizon;
    cfg.dropout = 0.1f;
    if (s.quantiles) cfg.quantiles = {0.025f, 0.1f, 0.5f, 0.9f, 0.975f};
    if (s.quantiles_last) cfg.quantile_positions = model::LossPositions::kLast;
    ag::ParameterSet params;
    model::PatchTransformer m(cfg, params, 1);
    // Baseline after the model, as for torch: gradients, moments and activations come after.
    const bool rss_ok = reset_peak_rss();
    const double rss_baseline_mb = status_mb("VmRSS");
    ag::AdamW adam(params, 0.9f, 0.999f, 1e-8f, 0.01f, true);
    const int64_t T = s.length + s.horizon;
    std::vector<float> window(static_cast<size_t>(s.batch * T));
    bench::fill_random(window.data(), window.size(), 7);
    // One sample layout (base/sample.hpp), filled once: the step times the model alone.
    SampleBuffers samples(s.batch, s.length, s.horizon, 1);
    for (int64_t b = 0; b < s.batch; ++b) {
      std::copy_n(&window[b * T], s.length, &samples.context_values[b * s.length]);
      std::copy_n(&window[b * T + s.length], s.horizon, &samples.target_values[b * s.horizon]);
    }
    std::fill(samples.context_observed.begin(), samples.context_observed.end(), 1);
    std::fill(samples.target_observed.begin(), samples.target_observed.end(), 1);
    ag::Graph graph;
    uint64_t step = 0;
    std::function<void()> train_step = [&] {
      graph.reset();
      ag::GraphScope scope(graph);
      params.zero_grad();
      const ag::Tensor loss = m.loss(samples.view(s.batch), model::ForwardOptions{true, step++});
      graph.backward(loss);
      adam.step(1e-4f);
    };
    // train.micro_batches `parts`, as the trainer's step runs them (epoch.cpp).
    train::GradientSum sum(params, dist::Comm::world(), s.parts);
    train::PartWorkers workers(
        params, samples, train::PartWorkers::side_by_side(s.parts, kernels::current_threads()));
    auto part_loss = [&](int k, SampleBuffers& buf) -> ag::Tensor {
      const auto [offset, size] = train::micro_batch_range(s.batch, k, s.parts);
      std::copy_n(&samples.context_values[offset * s.length], size * s.length,
                  buf.context_values.begin());
      std::copy_n(&samples.target_values[offset * s.horizon], size * s.horizon,
                  buf.target_values.begin());
      return ag::scale(m.loss(buf.view(size), model::ForwardOptions{true, step * 16 + k}),
                       static_cast<float>(size) / static_cast<float>(s.batch));
    };
    if (s.parts > 1) {
      train_step = [&] {
        sum.begin();
        workers.run(0, s.parts, kernels::current_threads(), part_loss, sum);
        sum.finish(params);
        ++step;
        adam.step(1e-4f);
      };
    }
    const double seconds = bench::time_median(train_step, opt.min_seconds, 3, 50);
    const double scaling = opt.threads > 1 ? thread_scaling(train_step, opt) : NAN;
    const double peak_rss_mb = status_mb("VmHWM");
    const double params_mb = 4.0 * 4.0 * static_cast<double>(params.numel()) / 1e6;
    const size_t part_bytes = s.parts > 1 ? workers.bytes_reserved() : 0;  // else unused
    const double arena_mb =
        static_cast<double>(graph.bytes_reserved() + part_bytes) / 1e6 + params_mb;
    const std::string name = s.name;
    samples_of[name] = s.batch / seconds;
    const std::string ref = s.quantiles ? "S" : s.parts > 1 ? name.substr(0, name.find('-')) : "";
    if (!ref.empty() && samples_of.count(ref))
      bench::emit("model_train", s.name, "samples/s", s.batch / seconds, ref.c_str(),
                  samples_of[ref]);
    else
      bench::emit("model_train", s.name, "samples/s", s.batch / seconds);
    if (std::isfinite(scaling))
      bench::emit("model_train", s.name, "x of 1 thread, interleaved", scaling);
    if (rss_ok && rss_baseline_mb >= 0 && peak_rss_mb >= 0)
      bench::emit("model_train", s.name, "peak RSS MB", peak_rss_mb - rss_baseline_mb);
    bench::emit("model_train", s.name, "arena+params MB", arena_mb);
  }
  return 0;
}
