// train(): the phases of one run in order (phases.hpp), and the run-folder checks that
// --resume relies on.
#include "attnfc/train/trainer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "attnfc/base/error.hpp"
#include "attnfc/base/json_config.hpp"
#include "attnfc/dist/comm.hpp"
#include "attnfc/train/ensemble.hpp"
#include "phases.hpp"

namespace attnfc::train {

void check_resume_config(const std::string& out_dir, const nlohmann::json& resolved) {
  const std::string path = RunPaths{out_dir}.config();
  nlohmann::json saved;
  try {
    nlohmann::json file = load_json_file(path);
    fill_saved_defaults(file);
    saved = to_json(parse_run_config(file));
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  }
  if (saved == resolved) return;
  // Name the first key that differs (a JSON patch path, "/train/lr" -> "train.lr").
  const nlohmann::json patch = nlohmann::json::diff(saved, resolved);
  const nlohmann::json::json_pointer at(patch.at(0).at("path").get<std::string>());
  std::string key = at.to_string().substr(1);
  std::replace(key.begin(), key.end(), '/', '.');
  const auto value = [&](const nlohmann::json& j) {
    return j.contains(at) ? j.at(at).dump() : std::string("absent");
  };
  throw RunFolderError(path + " differs from the config given: " + key + " is " + value(saved) +
                           " there and " + value(resolved) + " in the config given",
                       RunFolderError::Remedy::kSameConfig);
}

namespace {

// What a run of several processes (mpirun, docs/SCALING.md) cannot do, named by key.
void check_processes(const RunConfig& config, const dist::Comm& comm) {
  if (comm.size() == 1) return;
  const std::string n = std::to_string(comm.size());
  if (config.train.ensemble > 1)
    throw InputError("train.ensemble: found " + std::to_string(config.train.ensemble) +
                     ", expected 1 in a run of " + n +
                     " processes (train the members as separate runs, e.g. with scripts/sweep)");
  if (config.train.refit_epochs > 0)
    throw InputError("train.refit_epochs: found " + fmt::format("{:g}", config.train.refit_epochs) +
                     ", expected 0 in a run of " + n +
                     " processes (the refit runs after the final choice, on rank 0)");
  if (config.train.micro_batches < comm.size())
    throw InputError("train.micro_batches: found " + std::to_string(config.train.micro_batches) +
                     ", expected at least the number of processes (" + n +
                     "): each process computes whole micro-batches of every step");
}

// Rank 0 opens (and locks) the run folder and decides how the run starts; the other
// processes of an mpirun run follow its decision and never write the folder.
RunStart open_folder(std::optional<RunFolder>& folder, const TrainOptions& opt,
                     const RunConfig& config, const dist::Comm& comm) {
  int64_t start = -1;
  if (comm.root()) {
    try {
      folder.emplace(opt.out_dir);
      start = static_cast<int64_t>(folder->decide_start(opt.resume, config));
    } catch (...) {
      comm.broadcast(&start, 1, 0);  // the others stop too
      throw;
    }
  }
  comm.broadcast(&start, 1, 0);
  if (start < 0)
    throw std::runtime_error("rank 0 could not start the run in " + opt.out_dir +
                             " (its message says why)");
  return static_cast<RunStart>(start);
}

}  // namespace

TrainResult train(const RunConfig& config_in, const TrainOptions& opt_in) {
  const dist::Comm& comm = dist::Comm::world();
  check_processes(config_in, comm);
  if (config_in.train.ensemble > 1) {
    if (!opt_in.warm_start.empty())
      throw InputError("train.ensemble: found " + std::to_string(config_in.train.ensemble) +
                       ", expected 1 for a warm start (one network takes " + opt_in.warm_start +
                       "'s parameters); start each fold afresh instead");
    return train_ensemble(config_in, opt_in);
  }
  RunConfig config = config_in;
  TrainOptions opt = opt_in;
  if (!comm.root()) opt.progress.style = ProgressStyle::kOff;  // rank 0 reports
  std::optional<RunFolder> folder;
  const RunStart start = open_folder(folder, opt, config, comm);
  if (start == RunStart::kAlreadyFinished) {
    TrainResult done;
    done.status = TrainResult::Status::kAlreadyFinished;
    return done;
  }

  const std::unique_ptr<detail::RunData> data = detail::prepare_data(config);
  const bool resume = start == RunStart::kResume;
  const RunPaths paths{opt.out_dir};
  const nlohmann::json resolved =
      folder ? detail::write_resolved_config(*folder, config, resume) : to_json(config);
  detail::Training t(config, *data, resolved);
  spdlog::info("{}: {}; {} training windows, {} validation windows, {} parameters",
               data->series.source, data->series.describe(), t.train_windows.num_windows(),
               data->scorer->validation_windows(), t.net.num_parameters());
  if (resume)
    detail::resume(t, paths);
  else if (!opt.warm_start.empty())
    detail::start_warm(t, paths, opt.warm_start);
  else
    detail::start_fresh(t, paths);

  const TrainConfig& tc = config.train;
  Progress progress(opt.progress,
                    {tc.epochs, t.steps_per_epoch, tc.batch_size,
                     tc.patience > 0 ? tc.patience - t.state.stopper.bad_epochs() : -1});
  int64_t steps_this_call = 0;
  while (t.state.epoch < tc.epochs && !t.state.stopper.should_stop()) {
    if (!detail::run_epoch(t, paths, opt, progress, steps_this_call))
      return {TrainResult::Status::kInterrupted,
              t.state.epoch,
              t.state.stopper.best_epoch(),
              t.state.stopper.best(),
              t.state.global_step,
              nullptr,
              steps_this_call};
  }
  const detail::LoopState& st = t.state;
  progress.done({st.epoch, st.global_step, st.stopper.best_epoch(), st.stopper.best(),
                 st.records.empty() ? NAN : st.records.back().train_loss,
                 st.stopper.should_stop() && st.epoch < tc.epochs});
  return detail::score_kept_model(t, paths, opt, steps_this_call);
}

}  // namespace attnfc::train
