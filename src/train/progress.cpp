#include "attnfc/train/progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

#include <nlohmann/json.hpp>

#include "attnfc/base/error.hpp"

namespace attnfc::train {

std::string format_train_log(const std::vector<EpochRecord>& records) {
  std::string out = "epoch,steps,train_loss,val_loss,lr,seconds,samples_per_s,best\n";
  char buf[256];
  for (const auto& r : records) {
    std::snprintf(buf, sizeof buf, "%d,%lld,%.9g,%.9g,%.9g,%.3f,%.1f,%d\n", r.epoch,
                  static_cast<long long>(r.steps), r.train_loss, r.val_loss, r.lr, r.seconds,
                  r.samples_per_s, r.best ? 1 : 0);
    out += buf;
  }
  return out;
}

std::vector<EpochRecord> parse_train_log(const std::string& text, const std::string& source) {
  std::vector<EpochRecord> out;
  std::istringstream in(text);
  std::string line;
  long line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line_no == 1 || line.empty()) continue;
    EpochRecord r;
    long long steps = 0;
    int best = 0;
    if (std::sscanf(line.c_str(), "%d,%lld,%lf,%lf,%lf,%lf,%lf,%d", &r.epoch, &steps, &r.train_loss,
                    &r.val_loss, &r.lr, &r.seconds, &r.samples_per_s, &best) != 8)
      throw InputError(
          locate(source, line_no, 0, "found '" + line + "', expected 8 comma-separated numbers"));
    r.steps = steps;
    r.best = best != 0;
    out.push_back(r);
  }
  return out;
}

nlohmann::json to_json(const EpochRecord& r) {
  return {{"epoch", r.epoch},
          {"steps", r.steps},
          {"train_loss", r.train_loss},
          {"val_loss", r.val_loss},
          {"lr", r.lr},
          {"seconds", r.seconds},
          {"samples_per_s", r.samples_per_s},
          {"best", r.best}};
}

EpochRecord epoch_record_from_json(const nlohmann::json& j) {
  EpochRecord r;
  r.epoch = j.at("epoch").get<int>();
  r.steps = j.at("steps").get<int64_t>();
  r.train_loss = j.at("train_loss").get<double>();
  r.val_loss = j.at("val_loss").get<double>();
  r.lr = j.at("lr").get<double>();
  r.seconds = j.at("seconds").get<double>();
  r.samples_per_s = j.at("samples_per_s").get<double>();
  r.best = j.at("best").get<bool>();
  return r;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

std::string format_utc(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm utc{};
  ::gmtime_r(&secs, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

Eta estimate_eta(const EtaInput& in) {
  if (in.steps_done <= 0 || !(in.elapsed_s > 0)) return {NAN, NAN};
  const double seconds_per_step = in.elapsed_s / static_cast<double>(in.steps_done);
  const int64_t after = std::max(0, in.epochs_left);
  const int64_t after_if_no_improvement =
      in.patience_left < 0 ? after : std::min<int64_t>(after, in.patience_left);
  const auto seconds = [&](int64_t epochs) {
    return static_cast<double>(in.steps_left_in_epoch + epochs * in.steps_per_epoch) *
           seconds_per_step;
  };
  return {seconds(after), seconds(after_if_no_improvement)};
}

std::string format_eta(const Eta& eta) {
  const std::string most = format_duration(eta.budget_s);
  const std::string first = format_duration(eta.no_improvement_s);
  return first == most ? most : first + " (at most " + most + ")";
}

}  // namespace attnfc::train
