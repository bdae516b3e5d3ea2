#pragma once
// ModelConfig: every architecture choice of the patch Transformer, read from the
// "model" section of a run config (docs/CONFIG.md documents each key; the JSON
// schema is configs/schema.json). Defaults below are the documented defaults.
//
// ConfigSection: the strict JSON reader every config section uses (model here;
// data and train sections may use it too): an unknown key is an InputError with a
// "did you mean" suggestion, and a wrong type or out-of-range value names the
// full key path ("model.d_model"), what was found and the allowed range.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnfc::model {

enum class ChannelMode { kIndependent, kMixed };                 // "independent" | "mixed"
enum class InputNorm { kNone, kInstance, kCausal };              // "none" | "instance" | "causal"
enum class PatchEmbedding { kLinear, kResidualMlp };             // "linear" | "mlp"
enum class PositionalEncoding { kSinusoidal, kLearned, kNone };  // "sinusoidal"|"learned"|"none"
enum class HeadTarget { kValue, kDeltaFromLast };                // "value" | "delta"
enum class LossPositions { kAll, kLast };                        // "all" | "last"
enum class LossKind { kMse, kMae, kHuber };                      // "mse" | "mae" | "huber"

struct ModelConfig {
  // Tokens: non-overlapping patches of patch_len steps; context_length must be a
  // multiple of patch_len. num_patches() = context_length / patch_len.
  int context_length = 336;  // [1, 65536]
  int patch_len = 16;        // [1, 4096]; 1 = one token per time step
  int horizon = 96;          // H: values each position predicts, [1, 65536]
  ChannelMode channel_mode = ChannelMode::kIndependent;
  int channels = 1;  // [1, 4096]; series per token in "mixed" mode (ignored when independent)

  InputNorm norm = InputNorm::kCausal;
  float norm_eps = 1e-5f;  // (0, 1]: sigma = sqrt(var + norm_eps)
  HeadTarget target = HeadTarget::kDeltaFromLast;
  // Linear shortcut (NLinear-style): each position also maps the last
  // linear_lookback normalised values up to its own end straight to its H outputs,
  // added to the Transformer head. 0 disables; [0, 65536]; independent channels only.
  int linear_lookback = 0;

  PatchEmbedding embedding = PatchEmbedding::kLinear;
  PositionalEncoding positional = PositionalEncoding::kSinusoidal;

  int d_model = 64;             // [1, 4096], divisible by n_heads
  int n_heads = 4;              // [1, 256]
  int n_layers = 2;             // [0, 64]
  int ff_mult = 4;              // [1, 16]: feed-forward width ff_mult * d_model
  float dropout = 0.2f;         // [0, 0.9]
  float layernorm_eps = 1e-5f;  // (0, 0.1]

  LossPositions loss_positions = LossPositions::kAll;
  LossKind loss = LossKind::kMse;
  float huber_delta = 1.0f;  // (0, 1e6], used when loss == "huber"

  int num_patches() const { return context_length / patch_len; }
  int token_channels() const { return channel_mode == ChannelMode::kMixed ? channels : 1; }

  // Checks ranges and cross-key rules; throws InputError naming "model.<key>".
  void validate() const;
};

// Reads the "model" object (the value of the "model" key, not the whole file).
// Missing keys take their defaults. `path` prefixes keys in messages ("model").
ModelConfig parse_model_config(const nlohmann::json& section, const std::string& path = "model");
// Every key with its resolved value (round-trips through parse_model_config).
nlohmann::json to_json(const ModelConfig& config);

// Enum <-> config string (throws InputError naming the allowed words).
const char* to_string(ChannelMode v);
const char* to_string(InputNorm v);
const char* to_string(PatchEmbedding v);
const char* to_string(PositionalEncoding v);
const char* to_string(HeadTarget v);
const char* to_string(LossPositions v);
const char* to_string(LossKind v);

// Reads a JSON file; a syntax error is an InputError "<file>:<line>:<col>: ...".
nlohmann::json load_json_file(const std::string& path);

// Levenshtein distance (for "did you mean").
int edit_distance(std::string_view a, std::string_view b);
// The closest candidate within a distance that makes sense for a typo, or "".
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// Strict typed reads from one JSON object. Usage:
//   ConfigSection s(json["model"], "model");
//   cfg.d_model = s.get_int("d_model", cfg.d_model, 1, 4096);
//   ...
//   s.finish();  // throws on any key that was not read, suggesting the closest one
class ConfigSection {
 public:
  // Throws InputError if `object` is neither an object nor null (null = empty section).
  ConfigSection(const nlohmann::json& object, std::string path);

  bool has(const std::string& key) const;
  int64_t get_int(const std::string& key, int64_t fallback, int64_t lo, int64_t hi);
  // lo/hi inclusive unless the *_open flag says otherwise.
  double get_number(const std::string& key, double fallback, double lo, double hi,
                    bool lo_open = false, bool hi_open = false);
  bool get_bool(const std::string& key, bool fallback);
  std::string get_string(const std::string& key, const std::string& fallback);
  // One of `allowed`; otherwise an InputError listing them (with a suggestion).
  std::string get_choice(const std::string& key, const std::string& fallback,
                         const std::vector<std::string>& allowed);
  std::vector<std::string> get_string_list(const std::string& key,
                                           const std::vector<std::string>& fallback);
  // A nested object (null/absent = empty); marks the key as known.
  const nlohmann::json& get_object(const std::string& key);
  // Marks keys as known without reading them (sections parsed elsewhere).
  void allow(const std::string& key);
  // Throws InputError for the first key that was never read or allowed.
  void finish() const;

  std::string key_path(const std::string& key) const;  // "model.d_model"

 private:
  const nlohmann::json* find(const std::string& key);
  const nlohmann::json& object_;
  std::string path_;
  std::set<std::string> known_;
};

}  // namespace attnfc::model
