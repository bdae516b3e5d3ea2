#pragma once
// Least-squares start for the model's linear shortcut (model.linear_lookback > 0,
// train.linear_init = "least_squares").
//
// Why: the shortcut is NLinear (x_t - last) -> (y - last), and NLinear's optimum on
// the training windows has a closed form. Gradient descent from zero needs many
// epochs to get there, while the Transformer beside it starts to overfit after one
// or two; starting the shortcut at its optimum lets training spend its epochs on
// what the attention layers add. The model's shortcut works on (x - last) / sigma
// and its output is multiplied by sigma again, so a linear map fitted in scaled data
// units carries over unchanged; the shortcut's bias is added in data units, after
// de-normalisation, so NLinear's bias carries over too.
#include <cmath>
#include <cstdint>
#include <vector>

#include "attnfc/data/split.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "attnfc/train/baselines.hpp"

namespace attnfc::train {

// The ridges train.linear_ridge = "auto" chooses from (relative to the mean diagonal of
// X^T X): the one whose least-squares fit scores the lowest MSE on the validation windows.
inline constexpr double kRidgeCandidates[] = {1e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 3.0};

struct LinearStart {
  int64_t windows = 0;            // training windows fitted
  double ridge = 0;               // the ridge used
  double val_mse = std::nan("");  // its validation MSE when chosen automatically
};

// Fits NLinear with lookback model.linear_lookback and horizon model.horizon on every
// training window of `scaled` (all rows of the series, scaled, NaN where a value is not
// data: scaled_with_gaps in loaded_model.hpp, the rule the baselines and the training loss
// use; windows touching a NaN are left out), rows of split.train, and
// copies its weights and bias into "linear_skip.weight" and "linear_skip.bias".
// `ridge` >= 0 is used as given; a negative ridge means "auto": each of
// kRidgeCandidates is fitted and the one with the lowest validation MSE (windows of
// split.val, the shortcut alone) is kept. Throws InputError when the model has no
// shortcut, its target is not "delta", or the training rows are too few.
LinearStart init_linear_shortcut(model::PatchTransformer& net, const SeriesRef& scaled,
                                 const data::Split& split, double ridge);
// A panel: one fit over the training windows of every series (splits in the panel's rows),
// the ridge chosen on the validation windows of all of them.
LinearStart init_linear_shortcut(model::PatchTransformer& net, const SeriesRef& scaled,
                                 const std::vector<data::Split>& splits, double ridge);

}  // namespace attnfc::train
