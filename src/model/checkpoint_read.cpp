// Reading a checkpoint: metadata, model_config, and the tensors checked against the
// model_config before anyone builds a model from it (a 19 KB file claiming d_model 4096
// x 64 layers must not allocate 154 GB first). Needs no autograd code, so the fuzz
// target links it alone.
#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"
#include "attnfc/base/json_parse.hpp"
#include "attnfc/model/checkpoint.hpp"

namespace attnfc::model {

namespace {

void add_linear(std::vector<ParameterSpec>& out, const std::string& name, int64_t in, int64_t outs,
                bool bias = true) {
  out.push_back({name + ".weight", {outs, in}});
  if (bias) out.push_back({name + ".bias", {outs}});
}

void add_norm(std::vector<ParameterSpec>& out, const std::string& name, int64_t d) {
  out.push_back({name + ".weight", {d}});
  out.push_back({name + ".bias", {d}});
}

const std::string& need(const safetensors::File& file, const std::string& source, const char* key) {
  const auto it = file.metadata.find(key);
  if (it == file.metadata.end()) {
    throw InputError(source + ": not an attnfc checkpoint: metadata key '" + key +
                     "' is missing (expected format \"" + kCheckpointFormat + "\")");
  }
  return it->second;
}

std::string excerpt(const std::string& s) {
  return printable_excerpt(s, 40);
}

// The cross-attention decoder's tensors (docs/MODEL.md sections 4b and 9).
void add_decoder(std::vector<ParameterSpec>& out, const ModelConfig& c) {
  const int64_t d = c.d_model, ff = int64_t{c.ff_mult} * d;
  out.push_back({"decoder.step_embedding", {c.horizon, d}});
  if (c.known_features > 0) add_linear(out, "decoder.known_proj", c.known_features, d);
  if (c.static_numeric > 0) add_linear(out, "decoder.static_proj", c.static_numeric, d);
  for (size_t g = 0; g < c.static_categories.size(); ++g)
    out.push_back({"decoder.static_embedding." + std::to_string(g), {c.static_categories[g], d}});
  for (int j = 0; j < c.decoder_layers; ++j) {
    const std::string p = "decoder.blocks." + std::to_string(j) + ".";
    add_norm(out, p + "norm1", d);
    out.push_back({p + "cross_attn.in_proj_weight", {3 * d, d}});
    out.push_back({p + "cross_attn.out_proj.weight", {d, d}});
    out.push_back({p + "cross_attn.in_proj_bias", {3 * d}});
    out.push_back({p + "cross_attn.out_proj.bias", {d}});
    add_norm(out, p + "norm2", d);
    add_linear(out, p + "ff_in", d, ff);
    add_linear(out, p + "ff_out", ff, d);
  }
  add_norm(out, "decoder.final_norm", d);
}

// A name of the linear head's weight or bias, alone or under a prefix ("member2.",
// "optim.adamw.m.").
bool is_head_tensor(const std::string& name) {
  for (const std::string leaf : {"head.weight", "head.bias"}) {
    if (name == leaf) return true;
    if (name.size() > leaf.size() &&
        name.compare(name.size() - leaf.size() - 1, leaf.size() + 1, "." + leaf) == 0)
      return true;
  }
  return false;
}

// Files written before the 'head_layout' key (2026-12-05) hold a quantile model's linear head
// step-major, output row (k Q + j) C + c; the model now writes it level-major, (j H + k) C + c
// (docs/MODEL.md 4c), so those rows, and their optimiser state, move on reading. Tested: the
// moved model forecasts the old one's bits. The decoder's head (one step) is the same in both.
void upgrade_head_layout(safetensors::File& file, const ModelConfig& c, const std::string& path) {
  const auto it = file.metadata.find(kHeadLayoutKey);
  if (it != file.metadata.end()) {
    if (it->second != kHeadLayout)
      throw InputError(path + ": metadata '" + kHeadLayoutKey + "' is \"" + excerpt(it->second) +
                       "\", expected \"" + kHeadLayout + "\"");
    return;
  }
  const int64_t Q = c.levels(), H = c.horizon, C = c.token_channels();
  if (Q < 2 || c.cross_attention()) return;
  const auto rows = static_cast<size_t>(H * Q * C);
  for (safetensors::TensorData& t : file.tensors) {
    if (!is_head_tensor(t.name) || t.values.size() % rows != 0) continue;  // shapes: checked later
    const size_t width = t.values.size() / rows;
    std::vector<float> moved(t.values.size());
    for (int64_t k = 0; k < H; ++k)
      for (int64_t j = 0; j < Q; ++j)
        for (int64_t ch = 0; ch < C; ++ch)
          std::copy_n(
              t.values.begin() + static_cast<std::ptrdiff_t>(((k * Q + j) * C + ch) * width), width,
              moved.begin() + static_cast<std::ptrdiff_t>(((j * H + k) * C + ch) * width));
    t.values = std::move(moved);
  }
}

}  // namespace

std::string member_prefix(size_t k, size_t count) {
  return count == 1 ? std::string() : "member" + std::to_string(k + 1) + ".";
}

std::vector<ParameterSpec> parameter_specs(const ModelConfig& c) {
  const int64_t P = c.patch_len, C = c.token_channels(), d = c.d_model;
  const int64_t in = 2 * P * C, ff = int64_t{c.ff_mult} * d, H = c.horizon;
  std::vector<ParameterSpec> out;
  if (c.embedding == PatchEmbedding::kLinear) {
    add_linear(out, "embed", in, d);
  } else {
    add_linear(out, "embed.hidden", in, d);
    add_linear(out, "embed.output", d, d);
    add_linear(out, "embed.skip", in, d);
  }
  if (c.positional == PositionalEncoding::kLearned)
    out.push_back({"pos_embedding", {c.num_patches(), d}});
  for (int i = 0; i < c.n_layers; ++i) {
    const std::string p = "blocks." + std::to_string(i) + ".";
    add_norm(out, p + "norm1", d);
    out.push_back({p + "attn.in_proj_weight", {3 * d, d}});
    out.push_back({p + "attn.out_proj.weight", {d, d}});
    out.push_back({p + "attn.in_proj_bias", {3 * d}});
    out.push_back({p + "attn.out_proj.bias", {d}});
    add_norm(out, p + "norm2", d);
    add_linear(out, p + "ff_in", d, ff);
    add_linear(out, p + "ff_out", ff, d);
  }
  add_norm(out, "final_norm", d);
  add_linear(out, "head", d, (c.cross_attention() ? 1 : H) * c.levels() * C);
  if (c.linear_lookback > 0) {
    add_linear(out, "linear_skip", c.linear_lookback, H, false);
    out.push_back({"linear_skip.bias", {H}});
  }
  if (c.cross_attention()) add_decoder(out, c);
  return out;
}

void check_tensors_against_config(const safetensors::File& file,
                                  const std::vector<ModelConfig>& member_configs,
                                  const std::string& source) {
  std::set<std::string> expected;
  uint64_t tensor_bytes = 0, table = 0;
  const size_t members = member_configs.size();
  for (size_t k = 0; k < members; ++k) {
    const ModelConfig& config = member_configs[k];
    const std::string prefix = member_prefix(k, members);
    for (const auto& spec : parameter_specs(config)) {
      const std::string name = prefix + spec.name;
      expected.insert(name);
      const safetensors::TensorData* t = file.find(name);
      if (!t)
        throw InputError(source + ": tensor '" + name +
                         "' is missing (the model_config needs it; was the file written by a "
                         "different attnfc version?)");
      if (t->dtype != "F32")
        throw InputError(source + ": tensor '" + name + "' has dtype " + t->dtype +
                         ", expected F32");
      if (t->shape != spec.shape)
        throw InputError(source + ": tensor '" + name + "' has shape " +
                         safetensors::shape_str(t->shape) + ", expected " +
                         safetensors::shape_str(spec.shape) + " for the model_config");
      tensor_bytes += 4 * t->values.size();
    }
    // What a model allocates beyond its parameters: the sinusoidal position table, N x d.
    if (config.positional == PositionalEncoding::kSinusoidal)
      table += uint64_t{4} * static_cast<uint64_t>(config.num_patches()) *
               static_cast<uint64_t>(config.d_model);
  }
  for (const auto& t : file.tensors) {
    if (!expected.count(t.name) && t.name.rfind(kOptimPrefix, 0) != 0)
      throw InputError(source + ": unexpected tensor '" + excerpt(t.name) +
                       "' (not a parameter of this model_config)");
  }
  // Every parameter is now backed by bytes of the file; the tables must stay in budget.
  const uint64_t budget = std::max<uint64_t>(uint64_t{256} << 20, 2 * tensor_bytes);
  if (table > budget) {
    const ModelConfig& config = member_configs.front();
    throw InputError(
        source + ": metadata 'model_config': " + std::to_string(config.num_patches()) +
        " patches x d_model " + std::to_string(config.d_model) +
        (members > 1
             ? " (member 1; the table is summed over " + std::to_string(members) + " members)"
             : std::string()) +
        " need a " + std::to_string(table) + "-byte position table, expected at most " +
        std::to_string(budget) + " bytes for a file of this size");
  }
}

namespace {

// Each member's config: model_config, or with_context(model_config, L) for the lengths of
// metadata 'member_contexts' (train.ensemble_contexts).
std::vector<ModelConfig> member_configs_of(const safetensors::File& file, const ModelConfig& config,
                                           int members, const std::string& path) {
  const auto it = file.metadata.find(kMemberContextsKey);
  if (it == file.metadata.end())
    return std::vector<ModelConfig>(static_cast<size_t>(members), config);
  const std::string where = path + ": metadata '" + kMemberContextsKey + "'";
  const nlohmann::json j = parse_json_bounded(it->second, where);
  const int L = config.context_length;
  const std::string expected = ", expected " + std::to_string(members) +
                               " context lengths, the first " + std::to_string(L) +
                               " (model_config's) and each from 1 to " + std::to_string(L);
  if (!j.is_array() || j.size() != static_cast<size_t>(members))
    throw InputError(where + ": found " + excerpt(j.dump()) + expected);
  std::vector<ModelConfig> out;
  for (const auto& v : j) {
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > L ||
        (out.empty() && v.get<int64_t>() != L))
      throw InputError(where + ": found " + excerpt(j.dump()) + expected);
    out.push_back(with_context(config, v.get<int>()));
    try {
      out.back().validate();
    } catch (const InputError& e) {
      throw InputError(where + ": member " + std::to_string(out.size()) + ": " + e.what());
    }
  }
  return out;
}

}  // namespace

Checkpoint Checkpoint::read(const std::string& path) {
  return from_file(safetensors::read(path), path);
}

Checkpoint Checkpoint::from_file(safetensors::File file, const std::string& path) {
  Checkpoint ck;
  ck.path_ = path;
  ck.file_ = std::move(file);
  const auto& meta = ck.file_.metadata;
  if (need(ck.file_, path, "format") != kCheckpointFormat) {
    throw InputError(path + ": metadata 'format' is \"" + excerpt(meta.at("format")) +
                     "\", expected \"" + kCheckpointFormat + "\"");
  }
  ck.attnfc_version_ = excerpt(need(ck.file_, path, "attnfc_version"));
  const std::string fv = excerpt(need(ck.file_, path, "format_version"));
  const bool v1 = fv == std::to_string(kCheckpointFormatVersion);
  if (!v1 && fv != std::to_string(kEnsembleCheckpointFormatVersion)) {
    throw InputError(path + ": checkpoint format_version is " + fv + " (written by attnfc " +
                     ck.attnfc_version_ +
                     "), but this attnfc (" ATTNFC_VERSION ") reads versions " +
                     std::to_string(kCheckpointFormatVersion) + " and " +
                     std::to_string(kEnsembleCheckpointFormatVersion));
  }
  // Version 1 predates the key and always holds one network.
  const std::string members = excerpt(ck.meta("members", v1 ? "1" : ""));
  const bool digits = !members.empty() && members.size() <= 4 &&
                      members.find_first_not_of("0123456789") == std::string::npos;
  const int count = digits ? std::stoi(members) : 0;
  if (count < 1 || count > kMaxEnsembleMembers || (count == 1) != v1)
    throw InputError(path + ": metadata 'members' is \"" + members + "\", expected " +
                     (v1 ? std::string("\"1\" for format_version 1")
                         : "a whole number from 2 to " + std::to_string(kMaxEnsembleMembers) +
                               " for format_version 2"));
  ck.members_ = count;
  const std::string where = path + ": metadata 'model_config'";
  const nlohmann::json config = parse_json_bounded(need(ck.file_, path, "model_config"), where);
  try {
    ck.config_ = parse_model_config(config, "model");
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
  ck.member_configs_ = member_configs_of(ck.file_, ck.config_, ck.members_, path);
  check_tensors_against_config(ck.file_, ck.member_configs_, path);
  upgrade_head_layout(ck.file_, ck.config_, path);
  return ck;
}

std::string Checkpoint::meta(const std::string& key, const std::string& fallback) const {
  const auto it = file_.metadata.find(key);
  return it == file_.metadata.end() ? fallback : it->second;
}

std::vector<ag::StateTensor> Checkpoint::extra() const {
  std::vector<ag::StateTensor> out;
  const std::string prefix = kOptimPrefix;
  for (const auto& t : file_.tensors) {
    if (t.name.rfind(prefix, 0) == 0) out.push_back({t.name.substr(prefix.size()), t.values});
  }
  return out;
}

}  // namespace attnfc::model
