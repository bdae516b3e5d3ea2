#pragma once
// Model checkpoints: one .safetensors file holding every parameter under its
// documented name (docs/MODEL.md), optional extra state tensors (e.g. optimiser
// moments; stored 1-D as "optim.<name>"), and string metadata:
//   format          "attnfc.patch_transformer"          (written by save_checkpoint)
//   format_version  "1", or "2" for an ensemble          (written by save_checkpoint)
//   members         number of ensemble members, "1" for one network
//                   (written by save_checkpoint; a version-1 file holds one)
//   attnfc_version  the writing binary's version         (written by save_checkpoint)
//   model_config    to_json(ModelConfig), compact JSON   (written by save_checkpoint)
//   head_layout     "level_major"                        (written by save_checkpoint; absent
//                   in older files, whose quantile head rows are moved on reading)
//   member_contexts JSON array of each member's context_length, only when they differ
//                   (train.ensemble_contexts; member k's config is
//                   with_context(model_config, its length); the first is model_config's)
// and, by convention, keys the caller passes in `metadata`:
//   config     the whole resolved run config (JSON)     scaler   scaler statistics (JSON)
//   columns    JSON array of channel names              frequency e.g. "1h"
// Reserved keys cannot be overridden by the caller.
//
// An ensemble (members that share one model_config up to their context length, trained
// from different seeds)
// stores member k's parameters as "member<k>.<name>", k = 1..K, and is format
// version 2, so a reader that predates ensembles refuses it with a clear message
// instead of loading one member. One network keeps the plain names and version 1.
#include <map>
#include <string>
#include <vector>

#include "attnfc/autograd/optim.hpp"
#include "attnfc/base/safetensors.hpp"
#include "attnfc/model/config.hpp"
#include "attnfc/model/patch_transformer.hpp"

namespace attnfc::model {

inline constexpr const char* kCheckpointFormat = "attnfc.patch_transformer";
inline constexpr int kCheckpointFormatVersion = 1;          // one network
inline constexpr int kEnsembleCheckpointFormatVersion = 2;  // K > 1 members
inline constexpr int kMaxEnsembleMembers = 64;

// Writes atomically (temporary file, fsync, rename). Throws InputError if a
// metadata key is reserved or an extra tensor name clashes with a parameter.
void save_checkpoint(const std::string& path, const PatchTransformer& model,
                     const std::map<std::string, std::string>& metadata = {},
                     const std::vector<ag::StateTensor>& extra = {});
// An ensemble: every member's config must be with_context(member 1's, its own
// context_length) with a length at most member 1's; one member writes what
// save_checkpoint writes. Throws std::logic_error for no members or other configs, and
// InputError for a reserved metadata key.
void save_ensemble_checkpoint(const std::string& path,
                              const std::vector<const PatchTransformer*>& members,
                              const std::map<std::string, std::string>& metadata = {});

inline constexpr const char* kOptimPrefix = "optim.";
// Metadata naming the order of a quantile head's outputs (docs/MODEL.md 4c). A file without
// it predates the level-major head; reading moves its head rows (checkpoint_read.cpp).
inline constexpr const char* kHeadLayoutKey = "head_layout";
inline constexpr const char* kHeadLayout = "level_major";
inline constexpr const char* kMemberContextsKey = "member_contexts";

// One parameter a PatchTransformer registers: its documented name and shape.
struct ParameterSpec {
  std::string name;
  std::vector<int64_t> shape;
};
// The parameters a model built from `config` has (docs/MODEL.md's table), in
// registration order, computed from the config alone: nothing is allocated.
std::vector<ParameterSpec> parameter_specs(const ModelConfig& config);
// "member<k>." for member k (0-based) of an ensemble of count > 1, else "".
std::string member_prefix(size_t k, size_t count);
// The cheap check before any model is built: every member's parameters are in `file`
// with the shape its config (member_configs[k]) gives them, and every other tensor is an "optim."
// extra; and the model's own allocations beyond its parameters (the sinusoidal table) stay within a
// budget of max(256 MiB, 2 x the file's tensor bytes). Errors are InputError
// "<source>: tensor '<name>' ...", the same text load_members uses.
void check_tensors_against_config(const safetensors::File& file,
                                  const std::vector<ModelConfig>& member_configs,
                                  const std::string& source);

class Checkpoint {
 public:
  // Reads (safetensors::read: bounded, validated) and checks format, format_version,
  // members and model_config (parsed with parse_json_bounded), then the tensors against
  // the model_config (check_tensors_against_config): a file that passes can be loaded
  // into models built from config() without further surprises. Errors name the file
  // and the offending key or tensor, the value found and the value expected.
  static Checkpoint read(const std::string& path);
  // The same checks on a file already in memory (fuzzing, tests).
  static Checkpoint from_file(safetensors::File file, const std::string& source);

  const std::string& path() const { return path_; }
  // Member 1's config (the ensemble's: its context_length is the longest).
  const ModelConfig& config() const { return config_; }
  // Member k's (0-based): config() unless the members read contexts of other lengths.
  const ModelConfig& member_config(int k) const { return member_configs_.at(k); }
  const std::string& attnfc_version() const { return attnfc_version_; }
  // Ensemble size: 1 for one network.
  int members() const { return members_; }
  // Every metadata entry, reserved ones included.
  const std::map<std::string, std::string>& metadata() const { return file_.metadata; }
  // Value of a metadata key, or `fallback` when absent.
  std::string meta(const std::string& key, const std::string& fallback = "") const;

  // Copies the weights into a model built from config(): every parameter must be
  // present with dtype F32 and the parameter's shape, and every tensor in the file
  // must be a parameter or an "optim." extra. Errors name the tensor and
  // what differs (missing, unexpected, shape found vs expected, dtype).
  // A one-network checkpoint only; an ensemble is an InputError saying so.
  void load_into(const PatchTransformer& model) const;
  // Loads every member (members.size() must equal members(), member k built from
  // member_config(k)); the same checks as load_into, for each member's tensor names.
  void load_members(const std::vector<const PatchTransformer*>& members) const;
  // Tensors saved as `extra` (in file order, "optim." prefix removed).
  std::vector<ag::StateTensor> extra() const;

 private:
  std::string path_;
  safetensors::File file_;
  ModelConfig config_;
  std::vector<ModelConfig> member_configs_;
  std::string attnfc_version_;
  int members_ = 1;
};

}  // namespace attnfc::model
