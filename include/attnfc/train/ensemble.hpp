#pragma once
// A seed ensemble: train.ensemble = K networks of one config (each reading its own length of
// context with train.ensemble_contexts), trained one after another
// from seeds seed, seed + s, ..., seed + (K - 1) s (s = kEnsembleSeedStride), each with
// its own early stopping on the validation split; the model's forecast is the mean of
// theirs. Why: on small data a single network's test error depends on its seed more
// than on most settings (ETTh1 S/336: .0736 to .0851 over three seeds, with validation
// unable to tell them apart); averaging K members shrinks that seed variance, and it
// is chosen like any other setting, on validation.
//
// The run folder (options.out_dir) holds:
//   config.json           the resolved config, train.ensemble = K
//   members/<k>/          member k's own run folder (trainer.hpp), k = 1..K
//   model.safetensors     every member under "member<k>." (model/checkpoint.hpp), with
//                         the run config, scaler, columns and frequency
//   metrics.json          the ensemble beside the baselines, as for one network, plus
//                         "members": each member's seed, best epoch and own scores
// Interrupting stops inside the current member (or, for a Ctrl-C during a member's final
// scoring, before the next one starts); --resume skips finished members and continues
// from there, so the result is the same, bit for bit.
#include "attnfc/train/trainer.hpp"

namespace attnfc::train {

// Called by train() when config.train.ensemble > 1. Same errors and statuses as train();
// steps and epochs_run count every member, best_val_loss is the ensemble's validation MSE
// and best_epoch is member 1's.
TrainResult train_ensemble(const RunConfig& config, const TrainOptions& options);

// The seed member k (1-based) trains with.
uint64_t member_seed(uint64_t seed, int k);

}  // namespace attnfc::train
