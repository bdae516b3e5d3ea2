// Checkpoints: parameters + optional state + metadata in one safetensors file.
#include "attnfc/model/checkpoint.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "attnfc/base/error.hpp"

namespace attnfc::model {

namespace {

constexpr const char* kOptimPrefix = "optim.";
const std::set<std::string> kReserved = {"format", "format_version", "attnfc_version",
                                         "model_config", "members"};

// Tensor-name prefix of member k (0-based) of an ensemble of `count`.
std::string member_prefix(size_t k, size_t count) {
  return count == 1 ? std::string() : "member" + std::to_string(k + 1) + ".";
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::vector<int64_t> dims_of(const ag::Tensor& t) {
  std::vector<int64_t> d;
  for (int i = 0; i < t.ndim(); ++i) d.push_back(t.size(i));
  return d;
}

void save_members(const std::string& path, const std::vector<const PatchTransformer*>& members,
                  const std::map<std::string, std::string>& metadata,
                  const std::vector<ag::StateTensor>& extra) {
  if (members.empty()) throw std::logic_error("save_members: no members");
  const std::string config = to_json(members[0]->config()).dump();
  safetensors::File file;
  for (const auto& [k, v] : metadata) {
    if (kReserved.count(k)) {
      throw InputError("checkpoint metadata key '" + k + "' is reserved (written by attnfc)");
    }
    file.metadata[k] = v;
  }
  const bool ensemble = members.size() > 1;
  file.metadata["format"] = kCheckpointFormat;
  file.metadata["format_version"] =
      std::to_string(ensemble ? kEnsembleCheckpointFormatVersion : kCheckpointFormatVersion);
  file.metadata["attnfc_version"] = ATTNFC_VERSION;
  file.metadata["model_config"] = config;
  file.metadata["members"] = std::to_string(members.size());
  for (size_t k = 0; k < members.size(); ++k) {
    if (to_json(members[k]->config()).dump() != config)
      throw std::logic_error("save_members: member " + std::to_string(k + 1) +
                             " has a different model config");
    const std::string prefix = member_prefix(k, members.size());
    for (const auto& p : members[k]->parameters().all()) {
      const ag::Tensor t = p.tensor;
      if (!t.is_contiguous()) throw std::logic_error("parameter " + p.name + " is not contiguous");
      file.tensors.push_back(
          {prefix + p.name, dims_of(t), std::vector<float>(t.data(), t.data() + t.numel())});
    }
  }
  for (const auto& s : extra) {
    file.tensors.push_back(
        {kOptimPrefix + s.name, {static_cast<int64_t>(s.values.size())}, s.values});
  }
  try {
    safetensors::write(path, file);
  } catch (const std::invalid_argument& e) {
    throw InputError(path + ": cannot save checkpoint: " + e.what());
  }
}

}  // namespace

void save_checkpoint(const std::string& path, const PatchTransformer& model,
                     const std::map<std::string, std::string>& metadata,
                     const std::vector<ag::StateTensor>& extra) {
  save_members(path, {&model}, metadata, extra);
}

void save_ensemble_checkpoint(const std::string& path,
                              const std::vector<const PatchTransformer*>& members,
                              const std::map<std::string, std::string>& metadata) {
  save_members(path, members, metadata, {});
}

Checkpoint Checkpoint::read(const std::string& path) {
  Checkpoint ck;
  ck.path_ = path;
  ck.file_ = safetensors::read(path);
  const auto& meta = ck.file_.metadata;
  auto need = [&](const char* key) -> const std::string& {
    const auto it = meta.find(key);
    if (it == meta.end()) {
      throw InputError(path + ": not an attnfc checkpoint: metadata key '" + key +
                       "' is missing (expected format \"" + kCheckpointFormat + "\")");
    }
    return it->second;
  };
  if (need("format") != kCheckpointFormat) {
    throw InputError(path + ": metadata 'format' is \"" + meta.at("format") + "\", expected \"" +
                     kCheckpointFormat + "\"");
  }
  ck.attnfc_version_ = need("attnfc_version");
  const std::string& fv = need("format_version");
  const bool v1 = fv == std::to_string(kCheckpointFormatVersion);
  if (!v1 && fv != std::to_string(kEnsembleCheckpointFormatVersion)) {
    throw InputError(path + ": checkpoint format_version is " + fv + " (written by attnfc " +
                     ck.attnfc_version_ +
                     "), but this attnfc (" ATTNFC_VERSION ") reads versions " +
                     std::to_string(kCheckpointFormatVersion) + " and " +
                     std::to_string(kEnsembleCheckpointFormatVersion));
  }
  // Version 1 predates the key and always holds one network.
  const std::string members = ck.meta("members", v1 ? "1" : "");
  const bool digits = !members.empty() && members.size() <= 4 &&
                      members.find_first_not_of("0123456789") == std::string::npos;
  const int count = digits ? std::stoi(members) : 0;
  if (count < 1 || count > kMaxEnsembleMembers || (count == 1) != v1)
    throw InputError(path + ": metadata 'members' is \"" + members + "\", expected " +
                     (v1 ? std::string("\"1\" for format_version 1")
                         : "a whole number from 2 to " + std::to_string(kMaxEnsembleMembers) +
                               " for format_version 2"));
  ck.members_ = count;
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(need("model_config"));
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": metadata 'model_config' is not valid JSON: " + e.what());
  }
  try {
    ck.config_ = parse_model_config(config, "model");
  } catch (const InputError& e) {
    throw InputError(path + ": metadata 'model_config': " + e.what());
  }
  return ck;
}

std::string Checkpoint::meta(const std::string& key, const std::string& fallback) const {
  const auto it = file_.metadata.find(key);
  return it == file_.metadata.end() ? fallback : it->second;
}

void Checkpoint::load_into(const PatchTransformer& model) const {
  if (members_ != 1)
    throw InputError(path_ + ": holds an ensemble of " + std::to_string(members_) +
                     " networks, expected a single one");
  load_members({&model});
}

void Checkpoint::load_members(const std::vector<const PatchTransformer*>& members) const {
  if (members.size() != static_cast<size_t>(members_))
    throw std::logic_error("load_members: " + std::to_string(members.size()) +
                           " models for a file of " + std::to_string(members_));
  std::set<std::string> expected;
  for (size_t k = 0; k < members.size(); ++k) {
    const std::string prefix = member_prefix(k, members.size());
    for (const auto& p : members[k]->parameters().all()) {
      const std::string name = prefix + p.name;
      expected.insert(name);
      const safetensors::TensorData* t = file_.find(name);
      if (!t) {
        throw InputError(path_ + ": tensor '" + name +
                         "' is missing (the model_config needs it; was the file written by a "
                         "different attnfc version?)");
      }
      if (t->dtype != "F32") {
        throw InputError(path_ + ": tensor '" + name + "' has dtype " + t->dtype +
                         ", expected F32");
      }
      const std::vector<int64_t> want = dims_of(p.tensor);
      if (t->shape != want) {
        throw InputError(path_ + ": tensor '" + name + "' has shape " + shape_str(t->shape) +
                         ", expected " + shape_str(want) + " for the model_config");
      }
    }
  }
  for (const auto& t : file_.tensors) {
    if (!expected.count(t.name) && t.name.rfind(kOptimPrefix, 0) != 0) {
      throw InputError(path_ + ": unexpected tensor '" + t.name +
                       "' (not a parameter of this model_config)");
    }
  }
  // Every check passed: only now overwrite the weights (all or nothing).
  for (size_t k = 0; k < members.size(); ++k) {
    const std::string prefix = member_prefix(k, members.size());
    for (const auto& p : members[k]->parameters().all()) {
      const safetensors::TensorData* t = file_.find(prefix + p.name);
      std::copy(t->values.begin(), t->values.end(), p.tensor.data());
    }
  }
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
