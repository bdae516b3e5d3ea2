// A seed ensemble: K member runs in members/<k>/, then one model file and one score.
#include "attnfc/train/ensemble.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"
#include "attnfc/data/panel_scaler.hpp"
#include "attnfc/model/checkpoint.hpp"
#include "attnfc/model/config.hpp"
#include "attnfc/train/calibration.hpp"
#include "attnfc/train/kept_model.hpp"
#include "attnfc/train/loaded_model.hpp"
#include "phases.hpp"

namespace attnfc::train {

namespace fs = std::filesystem;

uint64_t member_seed(uint64_t seed, int k) {
  return seed + static_cast<uint64_t>(k - 1) * kEnsembleSeedStride;
}

namespace {

// The scalers of series `ids` in `scalers` (its whole JSON when one is missing, which then
// differs from the expected).
nlohmann::json scalers_of(const data::PanelScaler& scalers, const std::vector<std::string>& ids) {
  std::vector<data::Scaler> found;
  for (const std::string& id : ids) {
    const data::Scaler* s = scalers.find(id);
    if (!s) return scalers.to_json();
    found.push_back(*s);
  }
  return data::PanelScaler(ids, std::move(found)).to_json();
}

// Reads the finished members' models as one ensemble with the ensemble's own run config;
// `meta` gets the metadata of its model file (save_ensemble).
// `file` picks each member's model file: model() (the refit one under train.refit_epochs)
// or selected() (as validation chose it); `meta` may be null (no file will be written).
LoadedModel combine_members(const RunPaths& paths, const RunConfig& config,
                            const nlohmann::json& resolved,
                            std::map<std::string, std::string>* meta,
                            std::string (RunPaths::*file)() const = &RunPaths::model) {
  LoadedModel all;
  all.path = paths.model();
  all.run = config;
  for (int k = 1; k <= config.train.ensemble; ++k) {
    LoadedModel m = LoadedModel::load((paths.member(k).*file)());
    if (k == 1) {
      all.scaler = m.scaler, all.columns = m.columns, all.frequency = m.frequency;
      all.series_scalers = m.series_scalers, all.known = m.known;
    } else {
      // Members of one config on one data set agree on these; a folder edited by hand may not.
      // (A member of a shorter context may also hold series too short for member 1's: it
      // must agree on member 1's, whose scalers come from the same training rows.)
      const std::pair<const char*, std::pair<nlohmann::json, nlohmann::json>> same[] = {
          {"series_scalers",
           {scalers_of(m.series_scalers, all.series_scalers.ids()), all.series_scalers.to_json()}},
          {"columns", {m.columns, all.columns}},
          {"frequency", {m.frequency, all.frequency}},
          {"model_config",
           {model::to_json(m.config()),
            model::to_json(
                model::with_context(all.config(), member_model(config, k).context_length))}},
          {"known",
           {m.known ? m.known->to_json() : nlohmann::json(),
            all.known ? all.known->to_json() : nlohmann::json()}}};
      for (const auto& [key, found_expected] : same)
        if (found_expected.first != found_expected.second)
          throw InputError(m.path + ": metadata '" + key + "' is " + found_expected.first.dump() +
                           ", expected member 1's " + found_expected.second.dump() +
                           (std::string(key) == "model_config" ? " at the member's context" : ""));
    }
    all.params.push_back(std::move(m.params.front()));
    all.networks.push_back(std::move(m.networks.front()));
  }
  if (!meta) return all;
  *meta = {{"config", resolved.dump()},
           {"scaler", all.scaler.to_json().dump()},
           {"columns", nlohmann::json(all.columns).dump()},
           {"frequency", all.frequency}};
  if (!config.data.csv.id_column.empty()) {  // a panel, as phases.cpp writes it
    (*meta)["id_column"] = config.data.csv.id_column;
    (*meta)["series_scalers"] = all.series_scalers.to_json().dump();
  }
  // What the cross-attention decoder reads beside the values: without it the file loads
  // as a model that cannot be fed.
  if (all.known) (*meta)["known"] = all.known->to_json().dump();
  return all;
}

// What the ensemble takes from a finished member's metrics.json.
struct MemberRecord {
  nlohmann::json entry;  // the member's line in the ensemble's metrics.json "members"
  int epochs_run = 0, best_epoch = 0;
  int64_t steps = 0, parameters = 0;
  double seconds = 0;
  nlohmann::json linear_start;
};

// InputError naming the file and the key when a member's metrics.json is damaged.
MemberRecord read_member_record(const std::string& path, int k, uint64_t seed) {
  const nlohmann::json m = load_json_file(path);
  try {
    MemberRecord r;
    r.epochs_run = m.at("epochs_run").get<int>();
    r.best_epoch = m.at("best_epoch").get<int>();
    r.steps = m.at("steps").get<int64_t>();
    r.parameters = m.at("parameters").get<int64_t>();
    r.seconds = m.at("train_seconds").get<double>();
    r.linear_start = m.value("linear_start", nlohmann::json());
    r.entry = {{"member", k},
               {"seed", seed},
               {"best_epoch", r.best_epoch},
               {"best_val_loss", m.at("best_val_loss").get<double>()},
               {"epochs_run", r.epochs_run},
               {"train_seconds", r.seconds}};
    if (m.contains("refit")) r.entry["refit"] = m.at("refit");
    for (const char* part : {"val", "test"})
      if (m.contains(part))
        r.entry[std::string(part) + "_mse"] =
            m.at(part).at("models").at("attnfc").at("scaled").at("mse").get<double>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": not the metrics.json of a finished run (" + e.what() +
                     "); delete that member's folder and resume the ensemble to train it again");
  }
}

// Member k's training call: its folder, whether it resumes, what is left of the budget.
TrainOptions member_options(const TrainOptions& opt, const RunPaths& member, int k, int K,
                            int64_t steps_done) {
  TrainOptions mo = opt;
  mo.out_dir = member.dir;
  mo.progress.member = k, mo.progress.members = K;
  mo.interrupt_before_scoring = false;  // the ensemble's own scoring, not the members'
  mo.ensemble_member = true;

  // A member folder without a checkpoint has no progress to keep (it was stopped
  // before its first save): start it again.
  mo.resume = fs::exists(member.checkpoint()) || fs::exists(member.metrics());
  if (!mo.resume) fs::remove_all(mo.out_dir);
  if (opt.interrupt_after_steps > 0)  // what is left of this call's budget
    mo.interrupt_after_steps = opt.interrupt_after_steps - steps_done;
  return mo;
}

// What the ensemble's metrics.json adds from its members.
struct MemberTotals {
  nlohmann::json members = nlohmann::json::array();
  double seconds = 0;
  int64_t parameters = 0;
  // Member 1's: the least-squares start has no seed, so it is every member's of member 1's
  // context (members of other lengths, train.ensemble_contexts, have their own).
  nlohmann::json linear_start;
  bool untrained = true;  // every member kept its epoch 0
};

// Trains (or resumes, or skips when finished) members 1..K into members/<k>/. Returns
// false when interrupted (result says where).
bool train_members(const RunConfig& config, const RunPaths& paths, const TrainOptions& opt,
                   TrainResult& result, MemberTotals& totals) {
  const int K = config.train.ensemble;
  for (int k = 1; k <= K; ++k) {
    // Ctrl-C during a member's final scoring lands between members: stop here, keep the
    // finished members, and let --resume start the next one. (A step budget always ends
    // inside a member: the loop stops right after the step that spends it.)
    if (k > 1 && opt.interrupt && opt.interrupt->load()) {
      spdlog::warn("interrupted before ensemble member {}; the finished members are kept", k);
      result.status = TrainResult::Status::kInterrupted;
      return false;
    }
    RunConfig mc = config;
    mc.train.ensemble = 1;
    mc.train.calibrate = "none";  // the ensemble's levels are calibrated, not each member's
    mc.train.seed = member_seed(config.train.seed, k);
    mc.model = member_model(config, k);
    mc.train.ensemble_contexts.clear();  // a member is one network
    mc.auto_sizes = {};  // prepare_data resolved them: a member must not choose its own
    const RunPaths member = paths.member(k);
    const TrainOptions mo = member_options(opt, member, k, K, result.steps_this_call);
    if (!(mo.resume && fs::exists(member.metrics())))
      spdlog::info("ensemble member {} of {} (seed {}) -> {}", k, K, mc.train.seed, mo.out_dir);
    const TrainResult r = train(mc, mo);
    result.steps_this_call += r.steps_this_call;
    if (r.status == TrainResult::Status::kInterrupted) {
      result.status = TrainResult::Status::kInterrupted;
      result.steps += r.steps;
      return false;
    }
    MemberRecord m = read_member_record(member.metrics(), k, mc.train.seed);
    if (!config.train.ensemble_contexts.empty())
      m.entry["context_length"] = mc.model.context_length;
    totals.members.push_back(m.entry);
    result.epochs_run += m.epochs_run;
    result.steps += m.steps;
    totals.seconds += m.seconds;
    totals.parameters += m.parameters;
    totals.untrained = totals.untrained && m.best_epoch == 0;
    if (k == 1) {
      result.best_epoch = m.best_epoch;
      totals.linear_start = m.linear_start;
    }
  }
  return true;
}

// The least-squares start does not depend on the seed: member 1's is every member's of its
// context (the model's own linear start; members of other lengths have their own). `final`
// is the one beside the ensemble's model file (copied there for evaluate and predict; the
// refit one under train.refit_epochs), `chosen` the one validation chose (the same without
// a refit). Empty when the run has no least-squares start.
struct EnsembleStarts {
  LoadedModel final;
  std::optional<LoadedModel> selected;  // with a refit only
  const LoadedModel& chosen() const { return selected ? *selected : final; }
};
EnsembleStarts ensemble_starts(const RunPaths& paths, bool refit) {
  const auto load = [](const std::string& path) {
    return fs::exists(path) ? LoadedModel::load(path) : LoadedModel{};
  };
  const std::string member_start = paths.member(1).linear_start();
  EnsembleStarts s{load(member_start), std::nullopt};
  if (!s.final.networks.empty())
    write_file_atomic(paths.linear_start(),
                      read_input_file(member_start, uint64_t{1} << 36, "model file"));
  if (refit) s.selected = load(paths.member(1).selected_linear_start());
  return s;
}

}  // namespace

TrainResult train_ensemble(const RunConfig& config_in, const TrainOptions& opt) {
  RunConfig config = config_in;
  const int K = config.train.ensemble;
  const RunFolder folder(opt.out_dir);
  const RunPaths& paths = folder.paths();
  const RunStart start = folder.decide_start(opt.resume, config);
  TrainResult result;
  result.members = K;
  if (start == RunStart::kAlreadyFinished) {
    result.status = TrainResult::Status::kAlreadyFinished;
    return result;
  }
  // The data decides model.channels of a mixed model, as in a single run, so the
  // config.json written here is the one every member resolves to (seed aside). The
  // scorer is built now so that a run that could not be scored never trains.
  const std::unique_ptr<detail::RunData> data = detail::prepare_data(config);
  const nlohmann::json resolved =
      detail::write_resolved_config(folder, config, start == RunStart::kResume);
  MemberTotals totals;
  if (!train_members(config, paths, opt, result, totals)) return result;

  std::map<std::string, std::string> meta;
  LoadedModel lm = combine_members(paths, config, resolved, &meta);
  // With a refit the members' model files are their refits: validation (and the intervals'
  // calibration) reads the members as validation chose them.
  const bool refit = config.train.refit_epochs > 0;
  const LoadedModel selected =
      refit ? combine_members(paths, config, resolved, nullptr, &RunPaths::selected)
            : LoadedModel{};
  const LoadedModel& chosen = refit ? selected : lm;
  // The members trained uncalibrated: the ensemble's own levels (their mean) are calibrated.
  const std::optional<Calibration> cal =
      detail::calibrate_on_validation(config, *data->scorer, chosen.members(), meta);
  if (cal) lm.calibration = std::make_shared<const Calibration>(*cal);
  const nlohmann::json refit_entry = {{"epochs", config.train.refit_epochs},
                                      {"lr", config.train.refit_lr}};
  if (refit) meta["refit"] = refit_entry.dump();  // loaded as LoadedModel::refit
  model::save_ensemble_checkpoint(lm.path, lm.members(), meta);
  const EnsembleStarts starts = ensemble_starts(paths, refit);
  std::string table;
  nlohmann::json metrics;
  try {
    if (detail::scoring_interrupted(opt)) throw ScoringInterrupted();
    const Calibration* c = cal ? &*cal : nullptr;
    detail::evaluate_part(*data->scorer, "val", chosen.members(), starts.chosen().members(), &table,
                          opt.interrupt, c, metrics);
    detail::evaluate_part(*data->scorer, "test", lm.members(), starts.final.members(), &table,
                          opt.interrupt, c, metrics);
  } catch (const ScoringInterrupted&) {
    spdlog::warn("interrupted during the ensemble's final scoring; resuming scores it");
    result.status = TrainResult::Status::kInterrupted;
    return result;
  }
  result.best_val_loss = metrics["val"]["models"]["attnfc"]["scaled"]["mse"].get<double>();
  spdlog::info("ensemble of {} members:\n{}", K, table);
  metrics.update({{"best_epoch", result.best_epoch},
                  {"best_val_loss", result.best_val_loss},
                  {"epochs_run", result.epochs_run},
                  {"steps", result.steps},
                  {"parameters", totals.parameters},
                  {"train_seconds", totals.seconds},
                  {"members", totals.members}});
  if (!totals.linear_start.is_null()) metrics["linear_start"] = totals.linear_start;
  if (refit)  // each member's steps and time are in its "members" entry
    metrics["refit"] = refit_entry;
  const KeptModel kept{result.best_epoch, totals.untrained, !totals.linear_start.is_null(), false};
  metrics["kept"] = kept_entry(kept);
  metrics["warnings"] = kept_model_warnings(metrics, kept);
  write_file_atomic(paths.metrics(), metrics.dump(2) + "\n");
  result.metrics = metrics;
  return result;
}

}  // namespace attnfc::train
