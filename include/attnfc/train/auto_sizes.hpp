#pragma once
// Window sizes that fit the data: model.context_length, model.horizon, model.patch_len and
// model.linear_lookback may be "auto" in a run config, chosen once the series is loaded
// (before the split, the scaler and the model). And every size, given or chosen, is
// checked against the split so that a size that cannot work is an error naming the key
// to change and a value that would work (a newcomer's config copied to another file).
//
// The rules (docs/CONFIG.md "Sizes from the data"):
//  - A known benchmark file (ETTh*, ETTm*, exchange_rate, national_illness), read with the
//    split "auto" or its own protocol, takes the sizes of its published protocol
//    (ETT: horizon 96, context 336; exchange: 96 / 96; ILI: 24 / 104).
//  - Otherwise the horizon is the M4 competition's for the frequency (hourly 48, daily 14,
//    weekly 13, monthly 18, quarterly 8, yearly 6; one day of steps below an hour,
//    10 business days, 10 when the frequency is unknown) and the context the larger of
//    4 horizons and 2 seasons.
//  - Then both are fitted to the split: the horizon to the val and test targets (each part
//    holds one window at least), the context to half the training rows that the horizon
//    leaves, so the least-squares fits (the NLinear baseline, the model's linear start: a
//    weight a context step) have more training windows than weights.
//    In a panel the median series is fitted (shorter ones are skipped and reported).
//  - patch_len "auto": at most 16 steps and at least 8 tokens where the context allows;
//    the context is rounded down to a multiple of the patch. linear_lookback "auto": the
//    whole context (0 for a mixed-channel model, which has no shortcut).
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace attnfc::data {
struct TimeSeries;
}

namespace attnfc::train {

struct RunConfig;

struct AutoSizes {
  bool context = false, horizon = false, patch = false, lookback = false;
  bool any() const { return context || horizon || patch || lookback; }
};

// Says which of the four keys above are "auto" in `model` (the config's "model" object) and
// puts placeholders in their place that the model parser accepts (resolve_sizes replaces
// them). Any other string there is left for the parser to refuse.
AutoSizes take_auto_sizes(nlohmann::json& model);

// Chooses the "auto" sizes of `config` from `series`, then checks that the sizes fit the
// split of a single series: InputError naming data.split, model.horizon or
// model.context_length with a value that works. Returns what it chose and why, for the log
// ("" when nothing was "auto").
std::string resolve_sizes(RunConfig& config, const data::TimeSeries& series);

}  // namespace attnfc::train
