// The backtest's own files (backtest_report.hpp) and the pooling of its folds.
#include "backtest_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/data/csv.hpp"

namespace attnfc::train {

namespace {

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string mse5(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.5f", v);
  return buf;
}

using data::csv_cell;

std::string csv_row(const std::string& fold, const std::string& origin, const std::string& how,
                    const std::string& kept, const std::string& name, const nlohmann::json& m,
                    int64_t windows, const std::string& seconds) {
  const nlohmann::json& s = m.at("scaled");
  const nlohmann::json& o = m.at("original");
  return fold + "," + csv_cell(origin) + "," + how + "," + csv_cell(kept) + "," + csv_cell(name) +
         "," + std::to_string(windows) + "," + number(s.at("mse").get<double>()) + "," +
         number(s.at("mae").get<double>()) + "," + number(o.at("mse").get<double>()) + "," +
         number(o.at("mae").get<double>()) + "," + seconds + "\n";
}

std::string folds_csv(const BacktestResult& r) {
  std::string out =
      "fold,origin,how,kept,forecaster,windows,mse,mae,mse_original,mae_original,"
      "train_seconds\n";
  for (const FoldResult& f : r.folds) {
    const nlohmann::json& test = f.metrics.at("test");
    const std::string kept_s = kept_label(f.metrics.at("kept"));
    const std::string secs = number(f.metrics.value("train_seconds", 0.0));
    for (const std::string& name : forecaster_order(test.at("models")))
      out += csv_row(std::to_string(f.fold), f.origin, f.how, kept_s, name,
                     test.at("models").at(name), test.at("windows").get<int64_t>(), secs);
  }
  for (const std::string& name : forecaster_order(r.pooled)) {
    const nlohmann::json& p = r.pooled.at(name);
    out += csv_row("all", "", "pooled", "", name, p, p.at("windows").get<int64_t>(), "");
  }
  return out;
}

nlohmann::json fold_json(const FoldResult& f) {
  const nlohmann::json& m = f.metrics;
  return {{"fold", f.fold},
          {"origin", f.origin},
          {"how", f.how},
          {"kept", m.at("kept")},
          {"epochs_run", m.value("epochs_run", 0)},
          {"best_val_loss", m.value("best_val_loss", 0.0)},
          {"train_seconds", m.value("train_seconds", 0.0)},
          {"seconds", f.seconds},
          {"test", m.at("test")},
          {"warnings", m.value("warnings", nlohmann::json::array())}};
}

}  // namespace

std::vector<std::string> forecaster_order(const nlohmann::json& models) {
  std::vector<std::string> names;
  if (models.contains("attnfc")) names.push_back("attnfc");
  for (auto it = models.begin(); it != models.end(); ++it)
    if (it.key() != "attnfc") names.push_back(it.key());
  return names;
}

std::string kept_label(const nlohmann::json& kept) {
  return kept.at("model").get<std::string>() + " (epoch " +
         std::to_string(kept.at("epoch").get<int>()) + ")";
}

std::string backtest_json_path(const std::string& dir) {
  return (std::filesystem::path(dir) / "backtest.json").string();
}

std::string folds_csv_path(const std::string& dir) {
  return (std::filesystem::path(dir) / "folds.csv").string();
}

nlohmann::json pool_folds(const std::vector<FoldResult>& folds) {
  struct Sums {
    double windows = 0, s_mse = 0, s_mae = 0, o_mse = 0, o_mae = 0;
  };
  std::vector<std::pair<std::string, Sums>> sums;  // in first-seen order
  for (const FoldResult& f : folds) {
    const nlohmann::json& test = f.metrics.at("test");
    const auto w = static_cast<double>(test.at("windows").get<int64_t>());
    for (const std::string& name : forecaster_order(test.at("models"))) {
      const nlohmann::json& e = test.at("models").at(name);
      auto it =
          std::find_if(sums.begin(), sums.end(), [&](const auto& p) { return p.first == name; });
      if (it == sums.end()) it = sums.insert(sums.end(), {name, Sums{}});
      Sums& s = it->second;
      s.windows += w;
      s.s_mse += w * e.at("scaled").at("mse").get<double>();
      s.s_mae += w * e.at("scaled").at("mae").get<double>();
      s.o_mse += w * e.at("original").at("mse").get<double>();
      s.o_mae += w * e.at("original").at("mae").get<double>();
    }
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, s] : sums)
    out[name] = {{"windows", static_cast<int64_t>(s.windows)},
                 {"scaled", {{"mse", s.s_mse / s.windows}, {"mae", s.s_mae / s.windows}}},
                 {"original", {{"mse", s.o_mse / s.windows}, {"mae", s.o_mae / s.windows}}}};
  return out;
}

std::vector<std::string> pooled_warnings(const BacktestResult& r) {
  std::vector<std::string> out;
  if (!r.pooled.contains("attnfc")) return out;
  const double own = r.pooled.at("attnfc").at("scaled").at("mse").get<double>();
  std::string best_name;
  double best = own;
  for (auto it = r.pooled.begin(); it != r.pooled.end(); ++it) {
    const double v = it.value().at("scaled").at("mse").get<double>();
    if (it.key() != "attnfc" && v < best) best = v, best_name = it.key();
  }
  if (!best_name.empty())
    out.push_back("on the pooled test windows of all folds the model (MSE " + mse5(own) +
                  ") loses to " + best_name + " (MSE " + mse5(best) + ")");
  int linear = 0;
  for (const FoldResult& f : r.folds)
    linear += f.metrics.at("kept").at("model") == "linear start" ? 1 : 0;
  if (linear > 0)
    out.push_back(std::to_string(linear) + " of " + std::to_string(r.folds.size()) +
                  " folds kept the linear start: training beat it on validation in none of them");
  return out;
}

void write_backtest_files(const std::string& dir, const nlohmann::json& plan,
                          const BacktestResult& result) {
  nlohmann::json folds = nlohmann::json::array();
  for (const FoldResult& f : result.folds) folds.push_back(fold_json(f));
  const nlohmann::json all = {
      {"plan", plan}, {"folds", folds}, {"pooled", result.pooled}, {"warnings", result.warnings}};
  write_file_atomic(folds_csv_path(dir), folds_csv(result));
  write_file_atomic(backtest_json_path(dir), all.dump(2) + "\n");
}

}  // namespace attnfc::train
