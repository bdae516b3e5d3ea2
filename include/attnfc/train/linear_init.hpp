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
#include "attnfc/data/series.hpp"
#include "attnfc/data/split.hpp"
#include "attnfc/model/patch_transformer.hpp"

namespace attnfc::train {

// Fits NLinear with lookback model.linear_lookback and horizon model.horizon on every
// training window of `scaled` (rows of split.train; unobserved values excluded) and
// copies its weights and bias into "linear_skip.weight" and "linear_skip.bias". `ridge` is relative
// to the mean diagonal of X^T X (NLinear::fit). Returns the number of windows fitted. Throws
// InputError when the model has no shortcut, its target is not "delta", or the training rows are
// too few for a least-squares fit.
int64_t init_linear_shortcut(model::PatchTransformer& net, const data::TimeSeries& scaled,
                             const data::Split& split, double ridge);

}  // namespace attnfc::train
