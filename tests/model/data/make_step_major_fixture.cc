// Writes the fixture of test_checkpoint's "a step-major quantile head" case: two quantile
// models saved by attnfc before the level-major head (commit 53d3aee), and the forecasts that
// attnfc made with them, as hex floats. Not part of the build: it was compiled once against
// that commit's attnfc_model (tests/model/data/README.md says how) and its output committed.
// It is .cc, not .cpp: tests/model/*.cpp are globbed into test_model, and this has a main.
#include <cstdio>
#include <string>
#include <vector>

#include "../model_test_util.hpp"
#include "attnfc/model/checkpoint.hpp"

using namespace attnfc;

namespace {

void write(const char* name, const model::ModelConfig& c, uint64_t seed, int horizon,
           std::FILE* out) {
  ag::ParameterSet params;
  model::PatchTransformer m(c, params, seed);
  model_test::randomize(params, seed + 1);
  std::vector<ag::StateTensor> extra;
  for (const auto& p : params.all()) {
    if (p.name != "head.weight" && p.name != "head.bias") continue;
    std::vector<float> v(static_cast<size_t>(p.tensor.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);  // the index: rows show
    extra.push_back({"adamw.m." + p.name, v});
  }
  model::save_checkpoint(std::string(name) + ".safetensors", m, {}, extra);
  const int64_t C = c.token_channels(), B = 3;
  const std::vector<float> s = model_test::make_series(B * c.context_length, C, seed + 2);
  std::vector<float> levels;
  const std::vector<float> point =
      m.forecast(s.data(), nullptr, B, c.context_length, horizon, {}, &levels);
  std::fprintf(out, "%s point %zu", name, point.size());
  for (float v : point) std::fprintf(out, " %a", v);
  std::fprintf(out, "\n%s levels %zu", name, levels.size());
  for (float v : levels) std::fprintf(out, " %a", v);
  std::fprintf(out, "\n");
}

}  // namespace

int main() {
  std::FILE* out = std::fopen("step_major_forecasts.txt", "w");
  model::ModelConfig a = model_test::micro_config();  // one channel, the linear shortcut
  a.quantiles = {0.1f, 0.25f, 0.5f, 0.9f};
  a.linear_lookback = 4;
  write("step_major_shortcut", a, 31, 5, out);        // horizon 5 > H = 3: a rollout
  model::ModelConfig b = model_test::micro_config();  // two channels in one token
  b.channel_mode = ChannelMode::kMixed;
  b.channels = 2;
  b.quantiles = {0.025f, 0.5f, 0.975f};
  write("step_major_mixed", b, 41, 3, out);
  return std::fclose(out) == 0 ? 0 : 1;
}
