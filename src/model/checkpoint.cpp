// Checkpoints: saving, and loading the weights into built models (reading and the
// checks before any model is built are in checkpoint_read.cpp).
#include "attnfc/model/checkpoint.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"

namespace attnfc::model {

namespace {

const std::set<std::string> kReserved = {"format",          "format_version", "attnfc_version",
                                         "model_config",    "members",        kHeadLayoutKey,
                                         kMemberContextsKey};

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
  file.metadata[kHeadLayoutKey] = kHeadLayout;
  // Members differ at most in the context they read (train.ensemble_contexts).
  const ModelConfig& first = members[0]->config();
  std::vector<int> contexts;
  for (size_t k = 0; k < members.size(); ++k) {
    const ModelConfig& c = members[k]->config();
    if (c.context_length > first.context_length ||
        to_json(c).dump() != to_json(with_context(first, c.context_length)).dump())
      throw std::logic_error("save_members: member " + std::to_string(k + 1) +
                             " has a different model config");
    contexts.push_back(c.context_length);
  }
  if (std::any_of(contexts.begin(), contexts.end(),
                  [&](int L) { return L != first.context_length; }))
    file.metadata[kMemberContextsKey] = nlohmann::json(contexts).dump();
  for (size_t k = 0; k < members.size(); ++k) {
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
      // Checkpoint::read already checked these against the model_config; a model
      // built from another config still gets the same messages.
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
        throw InputError(path_ + ": tensor '" + name + "' has shape " +
                         safetensors::shape_str(t->shape) + ", expected " +
                         safetensors::shape_str(want) + " for the model_config");
      }
    }
  }
  for (const auto& t : file_.tensors) {
    if (!expected.count(t.name) && t.name.rfind(kOptimPrefix, 0) != 0) {
      throw InputError(path_ + ": unexpected tensor '" + printable_excerpt(t.name) +
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

}  // namespace attnfc::model
