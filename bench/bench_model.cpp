// Training throughput and memory of the PatchTransformer on the shapes of issue 7:
//   S    P=16, 21 patches, d=64,  h=4, N=2, H=96, batch 32
//   M    P=16, 21 patches, d=128, h=8, N=3, H=96, batch 32
//   Long P=1,  L=512,      d=64,  h=4, N=2, H=1,  batch 32
//   XL   P=1,  L=2048,     d=64,  h=4, N=1, H=1,  batch 4
// A step = forward + loss + backward + AdamW update. Metrics per case: training
// samples/s, and peak training memory in MB (activation arena + weights, gradients
// and the two AdamW moments). PyTorch's numbers for the same shapes come from
// `scripts/torch_reference.py --bench` (the issue quotes S 2049, M 848, Long 22.5,
// XL 3.3 samples/s and about 1.1 GB on Long and XL); they are the `ref_value`s here
// so the table shows the ratio (quoted, not measured in this process).
#include <string>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/optim.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "bench_util.hpp"

using namespace attnfc;

namespace {

// Quoted from issue 7 (measured on this machine), not measured in this process.
constexpr const char* kTorchRef = "torch-1.13 (issue 7)";

struct Shape {
  const char* name;
  int patch, length, d, heads, layers, horizon, batch;
  double torch_samples_per_s, torch_peak_mb;
};

}  // namespace

int main(int argc, char** argv) {
  const bench::Options opt = bench::parse_args(argc, argv);
  const Shape shapes[] = {
      {"S", 16, 336, 64, 4, 2, 96, 32, 2049, NAN},
      {"M", 16, 336, 128, 8, 3, 96, 32, 848, NAN},
      {"Long", 1, 512, 64, 4, 2, 1, 32, 22.5, 1100},
      {"XL", 1, 2048, 64, 4, 1, 1, 4, 3.3, 1100},
  };
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
    ag::ParameterSet params;
    model::PatchTransformer m(cfg, params, 1);
    ag::AdamW adam(params, 0.9f, 0.999f, 1e-8f, 0.01f, true);
    const int64_t T = s.length + s.horizon;
    std::vector<float> window(static_cast<size_t>(s.batch * T));
    bench::fill_random(window.data(), window.size(), 7);
    ag::Graph graph;
    uint64_t step = 0;
    auto train_step = [&] {
      graph.reset();
      ag::GraphScope scope(graph);
      params.zero_grad();
      const ag::Tensor loss = m.loss(ag::from_data({s.batch, T}, window.data()), {},
                                     model::ForwardOptions{true, step++});
      graph.backward(loss);
      adam.step(1e-4f);
    };
    const double seconds = bench::time_median(train_step, opt.min_seconds, 3, 50);
    const double weights_mb = 4.0 * 4.0 * static_cast<double>(params.numel()) / 1e6;
    const double peak_mb = static_cast<double>(graph.bytes_reserved()) / 1e6 + weights_mb;
    bench::emit("model_train", s.name, "samples/s", s.batch / seconds, kTorchRef,
                s.torch_samples_per_s);
    bench::emit("model_train", s.name, "peak MB", peak_mb, kTorchRef, s.torch_peak_mb);
  }
  return 0;
}
