// attnfc against the independent PyTorch rebuild of docs/MODEL.md
// (scripts/torch_reference.py). The reference's numbers are committed in
// tests/model/data/torch_reference.json, so this test needs no Python:
//   - forward predictions of several architectures (random weights, missing values)
//     must match torch to 1e-4;
//   - a fixed-seed 10-step AdamW loss trajectory must match torch's;
//   - the cross-attention decoder (docs/MODEL.md 4b), with known and static inputs:
//     forward, training loss and every parameter's gradient must match torch's
//     float64 rebuild to 1e-5 relative.
// With ATTNFC_TORCH_EXPORT=<dir> the test also writes the checkpoints and inputs
// torch_reference.py reads (scripts/test-torch.sh regenerates and re-checks all).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/optim.hpp"
#include "attnfc/model/checkpoint.hpp"
#include "model_test_util.hpp"

using namespace attnfc;
using model::ModelConfig;
using model::PatchTransformer;
namespace st = attnfc::safetensors;

namespace {

struct TorchCase {
  std::string name;
  ModelConfig config;
};

std::vector<TorchCase> forward_cases() {
  std::vector<TorchCase> cases;
  ModelConfig c = model_test::micro_config();
  cases.push_back({"default_micro", c});
  ModelConfig v = c;
  v.embedding = model::PatchEmbedding::kResidualMlp;
  v.positional = model::PositionalEncoding::kLearned;
  v.norm = model::InputNorm::kInstance;
  v.loss_positions = model::LossPositions::kLast;
  v.target = model::HeadTarget::kValue;
  cases.push_back({"mlp_learned_instance", v});
  ModelConfig m = c;
  m.channel_mode = ChannelMode::kMixed;
  m.channels = 2;
  m.patch_len = 1;
  m.context_length = 6;
  m.norm = model::InputNorm::kNone;
  m.positional = model::PositionalEncoding::kNone;
  cases.push_back({"mixed_point_tokens", m});
  ModelConfig k = c;  // linear shortcut across patch boundaries, padded at the start
  k.linear_lookback = 5;
  cases.push_back({"linear_shortcut", k});
  ModelConfig kv = c;  // longer than the context, offset mu instead of the last value
  kv.linear_lookback = 12;
  kv.target = model::HeadTarget::kValue;
  cases.push_back({"linear_shortcut_value", kv});
  ModelConfig ov = c;  // overlapping patches (PatchTST's stride P / 2), shortcut across them
  ov.patch_len = 4;
  ov.patch_stride = 2;
  ov.context_length = 12;
  ov.linear_lookback = 6;
  cases.push_back({"overlapping_patches", ov});
  ModelConfig oi = ov;  // stride 3 of 4, whole-context statistics, value target, last position
  oi.patch_stride = 3;
  oi.context_length = 13;
  oi.linear_lookback = 0;
  oi.norm = model::InputNorm::kInstance;
  oi.loss_positions = model::LossPositions::kLast;
  oi.target = model::HeadTarget::kValue;
  cases.push_back({"overlapping_instance_value", oi});
  return cases;
}

// The cross-attention decoder (docs/MODEL.md 4b) with each kind of input it reads.
std::vector<TorchCase> decoder_cases() {
  std::vector<TorchCase> cases;
  // K = 3 known features, 2 numeric statics, categoricals of 4 and 3 rows (unseen slot
  // included), two decoder layers and the linear shortcut beside them.
  ModelConfig a = model_test::micro_cross_config();
  a.decoder_layers = 2;
  a.linear_lookback = 5;
  cases.push_back({"cross_known_static", a});
  // Mixed point tokens, channel 1 a past covariate (forecast, never a target).
  ModelConfig b = model_test::micro_cross_config();
  b.channel_mode = ChannelMode::kMixed;
  b.channels = 2;
  b.target_channels = 1;
  b.patch_len = 1;
  b.context_length = 6;
  b.known_features = 2;
  b.static_numeric = 0;
  b.static_categories.clear();
  cases.push_back({"cross_mixed_covariate", b});
  // Nothing known: the queries are the step embedding alone.
  ModelConfig c = model_test::micro_config();
  c.decoder = model::Decoder::kCrossAttention;
  c.loss_positions = model::LossPositions::kLast;
  c.norm = model::InputNorm::kInstance;
  cases.push_back({"cross_step_only", c});
  return cases;
}

ModelConfig trajectory_config() {
  ModelConfig c;
  c.context_length = 32;
  c.patch_len = 4;
  c.horizon = 8;
  c.d_model = 16;
  c.n_heads = 2;
  c.n_layers = 2;
  c.ff_mult = 2;
  c.dropout = 0.0f;
  return c;
}
constexpr int kSteps = 10, kBatch = 8, kRows = 200;
constexpr float kLr = 1e-3f;

std::vector<float> trajectory_batch(const std::vector<float>& series, int step, int64_t T) {
  std::vector<float> out;
  for (int j = 0; j < kBatch; ++j) {
    const int64_t start = (step * 37 + j * 13) % (kRows - T + 1);
    out.insert(out.end(), series.begin() + start, series.begin() + start + T);
  }
  return out;
}

nlohmann::json load_reference() {
  const std::string path =
      std::string(ATTNFC_SOURCE_DIR) + "/tests/model/data/torch_reference.json";
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "missing " << path << " (run scripts/test-torch.sh)");
  return nlohmann::json::parse(in);
}

const char* export_dir() {
  return std::getenv("ATTNFC_TORCH_EXPORT");
}

}  // namespace

TEST_CASE("torch reference: forward predictions match to 1e-4") {
  for (const TorchCase& cs : forward_cases()) {
    CAPTURE(cs.name);
    ag::ParameterSet params;
    PatchTransformer model(cs.config, params, 31);
    model_test::randomize(params, 32);
    const int64_t B = 2, L = cs.config.context_length, C = cs.config.token_channels();
    const std::vector<float> ctx = model_test::make_series(B * L, C, 33);
    std::vector<float> obs(ctx.size(), 1.0f);
    obs[2] = 0.0f;
    obs[obs.size() - 3] = 0.0f;
    std::vector<float> out;
    {
      ag::NoGradScope ng;
      ag::Graph g;
      ag::GraphScope scope(g);
      const ag::Tensor y =
          model.forward(model_test::samples_from_windows(ctx, B, L, 0, C, &obs).view(B));
      out.assign(y.data(), y.data() + y.numel());
    }
    if (const char* dir = export_dir()) {
      model::save_checkpoint(std::string(dir) + "/case_" + cs.name + ".safetensors", model);
      st::File data;
      data.tensors.push_back({"context", {B, L, C}, ctx});
      data.tensors.push_back({"observed", {B, L, C}, obs});
      data.tensors.push_back({"forward", {static_cast<int64_t>(out.size())}, out});
      st::write(std::string(dir) + "/case_" + cs.name + "_data.safetensors", data);
      continue;  // exporting for torch_reference.py: the reference is being regenerated
    }
    const nlohmann::json ref = load_reference();
    REQUIRE(ref["cases"].contains(cs.name));
    const std::vector<float> expect = ref["cases"][cs.name]["forward"].get<std::vector<float>>();
    REQUIRE(expect.size() == out.size());
    double worst = 0;
    for (size_t i = 0; i < out.size(); ++i)
      worst = std::max(worst, std::fabs(double(out[i]) - expect[i]));
    CHECK(worst <= 1e-4);
  }
}

namespace {

// What attnfc computes for one decoder case: the forward [B, 1, H*C] on the contexts, the
// training loss on the whole windows (dropout off) and its gradient per parameter.
struct DecoderRun {
  std::vector<float> forward;
  float loss = 0;
  std::vector<std::vector<float>> grads;  // in params.all() order
};

// B = 3 windows [L + H, C], with a missing context value (window 0), a missing last
// context step (window 1: its base is an earlier value) and a missing target (window 2).
SampleBuffers decoder_samples(const ModelConfig& cfg, int64_t B) {
  const int64_t L = cfg.context_length, H = cfg.horizon, C = cfg.token_channels(), T = L + H;
  const std::vector<float> windows = model_test::make_series(B * T, C, 33);
  std::vector<float> obs(windows.size(), 1.0f);
  obs[static_cast<size_t>(1 * C)] = 0.0f;
  obs[static_cast<size_t>((T + L - 1) * C + C - 1)] = 0.0f;
  obs[static_cast<size_t>((2 * T + L + 1) * C)] = 0.0f;
  SampleBuffers s = model_test::samples_from_windows(windows, B, L, H, C, &obs);
  model_test::add_known(s, cfg, 34);
  return s;
}

DecoderRun run_decoder(const PatchTransformer& model, ag::ParameterSet& params,
                       const SampleBatch& batch) {
  DecoderRun run;
  {
    ag::NoGradScope ng;
    ag::Graph g;
    ag::GraphScope scope(g);
    const ag::Tensor y = model.forward(batch);
    run.forward.assign(y.data(), y.data() + y.numel());
  }
  ag::Graph g;
  ag::GraphScope scope(g);
  params.zero_grad();
  const ag::Tensor loss = model.loss(batch);
  g.backward(loss);
  run.loss = loss.item();
  for (const auto& p : params.all())
    run.grads.emplace_back(p.tensor.grad(), p.tensor.grad() + p.tensor.numel());
  return run;
}

// The _data file torch_reference.py reads: inputs (codes as exact small floats) and
// attnfc's results.
void export_decoder(const std::string& dir, const std::string& name, const SampleBuffers& s,
                    const ag::ParameterSet& params, const DecoderRun& run) {
  const int64_t B = s.capacity, L = s.context, H = s.horizon, C = s.width;
  auto floats = [](const auto& v) { return std::vector<float>(v.begin(), v.end()); };
  st::File data;
  data.tensors.push_back({"context", {B, L, C}, s.context_values});
  data.tensors.push_back({"observed", {B, L, C}, floats(s.context_observed)});
  data.tensors.push_back({"target", {B, H, C}, s.target_values});
  data.tensors.push_back({"target_observed", {B, H, C}, floats(s.target_observed)});
  if (s.known_width > 0) data.tensors.push_back({"known", {B, H, s.known_width}, s.known});
  if (s.numeric_width > 0)
    data.tensors.push_back({"static_numeric", {B, s.numeric_width}, s.static_numeric});
  if (s.category_width > 0)
    data.tensors.push_back({"static_codes", {B, s.category_width}, floats(s.static_codes)});
  data.tensors.push_back({"forward", {static_cast<int64_t>(run.forward.size())}, run.forward});
  data.tensors.push_back({"loss", {1}, {run.loss}});
  for (size_t i = 0; i < params.all().size(); ++i)
    data.tensors.push_back({"grad." + params.all()[i].name,
                            {static_cast<int64_t>(run.grads[i].size())},
                            run.grads[i]});
  st::write(dir + "/case_" + name + "_data.safetensors", data);
}

// max |ours - torch| / max |torch|: relative to the tensor's scale, so a tensor of small
// gradients is held to the same bar as a large one; 0 when both vanish.
double relative_diff(const std::vector<float>& ours, const std::vector<double>& torch) {
  REQUIRE(ours.size() == torch.size());
  double worst = 0, scale = 0;
  for (size_t i = 0; i < ours.size(); ++i) {
    worst = std::max(worst, std::fabs(double(ours[i]) - torch[i]));
    scale = std::max(scale, std::fabs(torch[i]));
  }
  return scale > 0 ? worst / scale : (worst == 0 ? 0.0 : std::numeric_limits<double>::infinity());
}

}  // namespace

TEST_CASE("torch reference: cross-attention decoder forward and gradients match to 1e-5") {
  for (const TorchCase& cs : decoder_cases()) {
    CAPTURE(cs.name);
    ag::ParameterSet params;
    PatchTransformer model(cs.config, params, 31);
    model_test::randomize(params, 32);  // the real init zeroes the head
    const SampleBuffers s = decoder_samples(cs.config, 3);
    const DecoderRun run = run_decoder(model, params, s.view(3));
    if (const char* dir = export_dir()) {
      model::save_checkpoint(std::string(dir) + "/case_" + cs.name + ".safetensors", model);
      export_decoder(dir, cs.name, s, params, run);
      continue;  // exporting for torch_reference.py: the reference is being regenerated
    }
    const nlohmann::json ref = load_reference();
    REQUIRE(ref["cases"].contains(cs.name));
    const nlohmann::json& c = ref["cases"][cs.name];
    CHECK(relative_diff(run.forward, c["forward"].get<std::vector<double>>()) <= 1e-5);
    CHECK(std::fabs(run.loss - c["loss"].get<double>()) <=
          1e-5 * std::fabs(c["loss"].get<double>()));
    for (size_t i = 0; i < params.all().size(); ++i) {
      const std::string& name = params.all()[i].name;
      CAPTURE(name);
      REQUIRE(c["grad"].contains(name));
      CHECK(relative_diff(run.grads[i], c["grad"][name].get<std::vector<double>>()) <= 1e-5);
    }
    CHECK(c["grad"].size() == params.all().size());
  }
}

TEST_CASE("torch reference: fixed-seed 10-step AdamW loss trajectory") {
  const ModelConfig cfg = trajectory_config();
  ag::ParameterSet params;
  PatchTransformer model(cfg, params, 42);
  const int64_t T = cfg.context_length + cfg.horizon;
  const std::vector<float> series = model_test::make_series(kRows, 1, 7);
  if (const char* dir = export_dir()) {
    model::save_checkpoint(std::string(dir) + "/trajectory_init.safetensors", model);
    st::File batches;
    for (int s = 0; s < kSteps; ++s) {
      batches.tensors.push_back(
          {"batch." + std::to_string(s), {kBatch, T}, trajectory_batch(series, s, T)});
    }
    st::write(std::string(dir) + "/trajectory_batches.safetensors", batches);
  }
  ag::AdamW opt(params, 0.9f, 0.999f, 1e-8f, 0.01f, true);
  ag::Graph graph;
  std::vector<double> losses;
  for (int s = 0; s < kSteps; ++s) {
    graph.reset();
    ag::GraphScope scope(graph);
    const std::vector<float> batch = trajectory_batch(series, s, T);
    params.zero_grad();
    const SampleBuffers samples = model_test::samples_from_windows(
        batch, kBatch, model.config().context_length, model.config().horizon, 1);
    const ag::Tensor loss = model.loss(samples.view(kBatch));
    graph.backward(loss);
    losses.push_back(loss.item());
    opt.step(kLr);
  }
  if (export_dir()) return;
  const nlohmann::json ref = load_reference();
  const std::vector<double> expect = ref["trajectory"].get<std::vector<double>>();
  REQUIRE(expect.size() == static_cast<size_t>(kSteps));
  double worst = 0;
  for (int s = 0; s < kSteps; ++s) {
    worst = std::max(worst, std::fabs(losses[s] - expect[s]) / std::fabs(expect[s]));
  }
  // float32 training against torch in float64: measured agreement is ~1e-7
  // relative; 1e-5 leaves room for summation-order differences and still catches
  // any wrong gradient or optimiser term (one step with a 1% gradient error moves
  // the later losses by far more).
  CHECK(worst <= 1e-5);
  // The trajectory must actually train (not a flat line a broken backward could match).
  CHECK(losses.back() < losses.front());
}
