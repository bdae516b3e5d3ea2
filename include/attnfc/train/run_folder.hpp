#pragma once
// A run folder (`attnfc train --out DIR`): the one place that names its files and
// decides how a run may start in it.
//   config.json             the resolved config (every key, defaults filled in)
//   model.safetensors       the kept model (best validation epoch), with the config,
//                           scaler, columns and frequency in its metadata
//   checkpoint.safetensors  the latest state: parameters, AdamW moments, loop position
//   train_log.csv           one row per epoch
//   metrics.json            at the end: the kept model beside its linear start and the
//                           baselines on the validation and test windows
//   members/<k>/            an ensemble's members, each a run folder of its own
//   .lock                   held (flock) by the training that writes the folder
#include <string>

#include "attnfc/base/error.hpp"

namespace attnfc::train {

struct RunConfig;

// File names only: for readers of a finished run (predict, plot) and for messages.
struct RunPaths {
  std::string dir;

  std::string file(const char* name) const;
  std::string config() const { return file("config.json"); }
  std::string model() const { return file("model.safetensors"); }
  // The model before training (epoch 0: the least-squares linear start), scored beside
  // the kept model; it is a model file like model.safetensors (predict can use it).
  std::string linear_start() const { return file("linear_start.safetensors"); }
  // With train.refit_epochs: the kept model and its start as validation chose them, before
  // the refit (model.safetensors and linear_start.safetensors are then the refit ones).
  std::string selected() const { return file("selected.safetensors"); }
  std::string selected_linear_start() const { return file("linear_start_selected.safetensors"); }
  std::string checkpoint() const { return file("checkpoint.safetensors"); }
  std::string train_log() const { return file("train_log.csv"); }
  std::string metrics() const { return file("metrics.json"); }
  std::string members() const { return file("members"); }
  RunPaths member(int k) const;  // members/<k>, 1-based
  std::string lock() const { return file(".lock"); }
};

// A run folder that cannot take this training call. The message says what is wrong and,
// in words, what would help; the CLI names its own flags for the remedy.
class RunFolderError : public InputError {
 public:
  enum class Remedy {
    kResumeOrElsewhere,  // the folder holds a run: resume it or train elsewhere
    kTrainFresh,         // nothing to resume: train without resuming
    kSameConfig,         // resuming needs the config the run started with
    kWait,               // another training holds the folder
  };
  RunFolderError(const std::string& problem, Remedy remedy);
  const std::string& problem() const { return problem_; }
  Remedy remedy() const { return remedy_; }

 private:
  std::string problem_;
  Remedy remedy_;
};

// How a training call starts in its folder.
enum class RunStart {
  kFresh,            // nothing to continue: train from the first step
  kResume,           // continue from checkpoint.safetensors (or the members' folders)
  kAlreadyFinished,  // --resume of a run whose metrics.json exists: nothing to do
};

// An open run folder: created if needed and locked for the object's lifetime, so two
// trainings can never write one folder (the second gets an InputError naming the
// folder). Temporary files left by killed processes are removed on opening.
class RunFolder {
 public:
  explicit RunFolder(const std::string& dir);
  ~RunFolder();
  RunFolder(RunFolder&& other) noexcept;
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;
  RunFolder& operator=(RunFolder&&) = delete;

  const RunPaths& paths() const { return paths_; }
  const std::string& dir() const { return paths_.dir; }

  // The folder's rules for `attnfc train [--resume]`:
  //  - fresh: a folder holding a run (a checkpoint, members, or a model) is refused with
  //    an InputError that says to pass --resume or choose another --out;
  //  - --resume: a finished run (metrics.json) is kAlreadyFinished; a run stopped before
  //    its first checkpoint (killed, disk full) has nothing to keep and starts afresh;
  //    a run started with another train.ensemble is refused (InputError naming the key).
  RunStart decide_start(bool resume, const RunConfig& config) const;

 private:
  RunPaths paths_;
  int lock_fd_ = -1;
};

}  // namespace attnfc::train
