#pragma once
// What a finished backtest writes beside its fold folders (backtest.hpp): folds.csv and
// the results in backtest.json.
#include <string>

#include <nlohmann/json.hpp>

#include "attnfc/train/backtest.hpp"

namespace attnfc::train {

// folds.csv (one row per fold and forecaster, then the pooled rows as fold "all") and
// backtest.json ({"plan": plan, "folds": [...], "pooled": {...}}), each written atomically.
void write_backtest_files(const std::string& dir, const nlohmann::json& plan,
                          const BacktestResult& result);

}  // namespace attnfc::train
