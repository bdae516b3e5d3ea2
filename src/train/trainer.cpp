// train(): the phases of one run in order (phases.hpp), and the run-folder checks that
// --resume relies on.
#include "attnfc/train/trainer.hpp"

#include <spdlog/spdlog.h>

#include <cmath>

#include "attnfc/base/error.hpp"
#include "attnfc/base/json_config.hpp"
#include "attnfc/train/ensemble.hpp"
#include "phases.hpp"

namespace attnfc::train {

void check_resume_config(const std::string& out_dir, const nlohmann::json& resolved) {
  const std::string path = RunPaths{out_dir}.config();
  nlohmann::json saved;
  try {
    saved = to_json(parse_run_config(load_json_file(path)));
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  }
  if (saved != resolved)
    throw RunFolderError(path + " differs from the config given",
                         RunFolderError::Remedy::kSameConfig);
}

TrainResult train(const RunConfig& config_in, const TrainOptions& opt) {
  if (config_in.train.ensemble > 1) return train_ensemble(config_in, opt);
  RunConfig config = config_in;
  const RunFolder folder(opt.out_dir);
  const RunStart start = folder.decide_start(opt.resume, config);
  if (start == RunStart::kAlreadyFinished) {
    TrainResult done;
    done.status = TrainResult::Status::kAlreadyFinished;
    return done;
  }

  const std::unique_ptr<detail::RunData> data = detail::prepare_data(config);
  const bool resume = start == RunStart::kResume;
  const nlohmann::json resolved = detail::write_resolved_config(folder, config, resume);
  detail::Training t(config, *data, resolved);
  spdlog::info("{}: {}; {} training windows, {} validation windows, {} parameters",
               data->series.source, data->series.describe(), t.train_windows.num_windows(),
               data->scorer->validation_windows(), t.net.num_parameters());
  if (resume)
    detail::resume(t, folder.paths());
  else
    detail::start_fresh(t, folder.paths());

  const TrainConfig& tc = config.train;
  Progress progress(opt.progress,
                    {tc.epochs, t.steps_per_epoch, tc.batch_size,
                     tc.patience > 0 ? tc.patience - t.state.stopper.bad_epochs() : -1});
  int64_t steps_this_call = 0;
  while (t.state.epoch < tc.epochs && !t.state.stopper.should_stop()) {
    if (!detail::run_epoch(t, folder.paths(), opt, progress, steps_this_call))
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
  return detail::score_kept_model(t, folder.paths(), opt, steps_this_call);
}

}  // namespace attnfc::train
