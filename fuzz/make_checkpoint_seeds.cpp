// Writes seed checkpoints for fuzz_checkpoint (scripts/fuzz.sh): micro models in the
// exact format `attnfc train` writes (metadata, member prefixes, optimiser extras),
// with the parameter list of model::parameter_specs. Usage: make_checkpoint_seeds <dir>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnfc/base/safetensors.hpp"
#include "attnfc/model/checkpoint.hpp"

using namespace attnfc;

namespace {

void write_seed(const std::string& path, const model::ModelConfig& c, int members) {
  safetensors::File f;
  f.metadata["format"] = model::kCheckpointFormat;
  f.metadata["format_version"] = members == 1 ? "1" : "2";
  f.metadata["attnfc_version"] = ATTNFC_VERSION;
  f.metadata["members"] = std::to_string(members);
  f.metadata["model_config"] = model::to_json(c).dump();
  f.metadata["columns"] = R"(["OT"])";
  f.metadata["scaler"] = R"({"type":"zscore","channels":["OT"],"mean":[1.5],"scale":[2.0]})";
  float v = 0.0f;
  for (int k = 0; k < members; ++k)
    for (const auto& spec : model::parameter_specs(c)) {
      size_t n = 1;
      for (int64_t d : spec.shape) n *= static_cast<size_t>(d);
      std::vector<float> values(n);
      for (float& x : values) x = (v += 0.25f);
      f.tensors.push_back({model::member_prefix(k, members) + spec.name, spec.shape, values});
    }
  if (members == 1) f.tensors.push_back({"optim.adamw.step", {1}, {3.0f}});
  safetensors::write(path, f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_checkpoint_seeds <dir>\n");
    return 2;
  }
  const std::string dir = argv[1];
  model::ModelConfig c;
  c.context_length = 8;
  c.patch_len = 2;
  c.horizon = 3;
  c.d_model = 4;
  c.n_heads = 2;
  c.n_layers = 1;
  c.ff_mult = 1;
  write_seed(dir + "/seed-micro.safetensors", c, 1);
  model::ModelConfig m = c;
  m.embedding = model::PatchEmbedding::kResidualMlp;
  m.positional = model::PositionalEncoding::kLearned;
  m.n_layers = 0;
  write_seed(dir + "/seed-mlp-learned.safetensors", m, 1);
  model::ModelConfig l = c;
  l.linear_lookback = 4;
  l.n_layers = 0;
  write_seed(dir + "/seed-linear.safetensors", l, 1);
  model::ModelConfig e = c;
  e.n_layers = 0;
  write_seed(dir + "/seed-ensemble.safetensors", e, 2);
  return 0;
}
