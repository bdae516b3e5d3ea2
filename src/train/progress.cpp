#include "attnfc/train/progress.hpp"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
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

Progress::Progress(bool tty, int epochs, int64_t steps_per_epoch, int64_t samples_per_step)
    : tty_(tty),
      epochs_(epochs),
      steps_per_epoch_(steps_per_epoch),
      samples_per_step_(samples_per_step),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void Progress::step(int epoch, int64_t step_in_epoch, double loss, double last_val_loss) {
  ++steps_seen_;
  if (!tty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100) &&
      step_in_epoch != steps_per_epoch_)
    return;
  last_draw_ = now;
  drawn_ = true;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(steps_seen_) / elapsed : 0;
  const int64_t remaining =
      static_cast<int64_t>(epochs_ - epoch) * steps_per_epoch_ + (steps_per_epoch_ - step_in_epoch);
  constexpr int kWidth = 24;
  const int filled =
      static_cast<int>(kWidth * step_in_epoch / std::max<int64_t>(1, steps_per_epoch_));
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  char val[32] = "-";
  if (std::isfinite(last_val_loss)) std::snprintf(val, sizeof val, "%.4f", last_val_loss);
  std::fprintf(stderr, "\r\033[Kepoch %d/%d [%s] %lld/%lld loss %.4f val %s %.0f samples/s ETA %s",
               epoch, epochs_, bar.c_str(), static_cast<long long>(step_in_epoch),
               static_cast<long long>(steps_per_epoch_), loss, val,
               rate * static_cast<double>(samples_per_step_),
               format_duration(rate > 0 ? static_cast<double>(remaining) / rate : NAN).c_str());
  std::fflush(stderr);
}

void Progress::epoch_done(const EpochRecord& r, int patience_left) {
  finish();
  const std::string tail = r.best ? " (best)"
                           : patience_left >= 0
                               ? " (no improvement; " + std::to_string(patience_left) + " left)"
                               : std::string(" (no improvement)");
  const std::string msg = fmt::format(
      "epoch {}/{}: train loss {:.5f}, val loss {:.5f}, lr {:.3g}, {:.1f} s, {:.0f} samples/s{}",
      r.epoch, epochs_, r.train_loss, r.val_loss, r.lr, r.seconds, r.samples_per_s, tail);
  if (tty_) {
    std::fprintf(stderr, "%s\n", msg.c_str());
    std::fflush(stderr);
  } else {
    spdlog::info("{}", msg);
  }
}

void Progress::finish() {
  if (tty_ && drawn_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
  }
}

}  // namespace attnfc::train
