// Progress: the bar on a terminal, timestamped lines or JSON lines elsewhere
// (progress.hpp). Written straight to the stream, not through spdlog: progress is
// turned off by --quiet, not by --log-level (the bar never went through the logger either).
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "attnfc/train/progress.hpp"

namespace attnfc::train {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// A JSON number, or null where it is not finite (JSON has no NaN).
nlohmann::ordered_json json_number(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
}

std::string utc_now() {
  return format_utc(std::chrono::system_clock::now());
}

// The fields every JSON event has, in this order.
nlohmann::ordered_json json_event(const char* event, int epoch, int epochs, int64_t step,
                                  int64_t steps_per_epoch) {
  return {{"event", event},   {"time", utc_now()}, {"epoch", epoch},
          {"epochs", epochs}, {"step", step},      {"steps_per_epoch", steps_per_epoch}};
}

void add_eta(nlohmann::ordered_json& j, const Eta& eta) {
  j["eta_s"] = json_number(eta.no_improvement_s);
  j["eta_max_s"] = json_number(eta.budget_s);
}

// "0.38120" (`decimals` places), or "-" before the first validation.
std::string val_text(double val, int decimals) {
  return std::isfinite(val) ? fmt::format("{:.{}f}", val, decimals) : std::string("-");
}

}  // namespace

Progress::Progress(const ProgressOptions& options, const ProgressRun& run)
    : opt_(options), run_(run), start_(Clock::now()), last_draw_(start_), epoch_start_(start_) {
  if (opt_.out == nullptr) opt_.out = stderr;
}

std::string Progress::part_prefix() const {
  std::string s = opt_.fold > 0 ? fmt::format("fold {}/{} ", opt_.fold, opt_.folds) : "";
  if (opt_.member > 0) s += fmt::format("member {}/{} ", opt_.member, opt_.members);
  return s;
}

void Progress::add_part(nlohmann::ordered_json& j) const {
  if (opt_.fold > 0) j["fold"] = opt_.fold, j["folds"] = opt_.folds;
  if (opt_.member > 0) j["member"] = opt_.member, j["members"] = opt_.members;
}

void Progress::write_line(const std::string& line) {
  std::fputs(line.c_str(), opt_.out);
  std::fputc('\n', opt_.out);
  std::fflush(opt_.out);
}

Eta Progress::eta(int epoch, int64_t steps_left_in_epoch, int patience_left,
                  Clock::time_point now) const {
  EtaInput in;
  in.elapsed_s = seconds_between(start_, now);
  in.steps_done = steps_seen_;
  in.steps_per_epoch = run_.steps_per_epoch;
  in.steps_left_in_epoch = steps_left_in_epoch;
  in.epochs_left = run_.epochs - epoch;
  in.patience_left = patience_left;
  return estimate_eta(in);
}

Eta Progress::eta_in_epoch(int epoch, int64_t step_in_epoch, Clock::time_point now) const {
  // The epoch in progress spends one epoch of the patience if it does not improve.
  const int patience_after = run_.patience_left < 0 ? -1 : std::max(0, run_.patience_left - 1);
  return eta(epoch, run_.steps_per_epoch - step_in_epoch, patience_after, now);
}

void Progress::epoch_started() {
  epoch_start_ = Clock::now();
  epoch_steps_seen_ = 0;
}

void Progress::step(int epoch, int64_t step_in_epoch, double loss, double last_val_loss) {
  ++steps_seen_, ++epoch_steps_seen_;
  if (opt_.style == ProgressStyle::kOff) return;
  const auto now = Clock::now();
  if (opt_.style == ProgressStyle::kBar) {
    draw_bar(epoch, step_in_epoch, loss, last_val_loss, now);
    return;
  }
  if (seconds_between(last_draw_, now) < opt_.interval_s) return;
  last_draw_ = now;
  emit_step(epoch, step_in_epoch, loss, last_val_loss, now);
}

void Progress::emit_step(int epoch, int64_t step_in_epoch, double loss, double last_val_loss,
                         Clock::time_point now) {
  const Eta e = eta_in_epoch(epoch, step_in_epoch, now);
  const double epoch_s = seconds_between(epoch_start_, now);
  const double samples_per_s =
      epoch_s > 0 ? static_cast<double>(epoch_steps_seen_ * run_.samples_per_step) / epoch_s : NAN;
  if (opt_.style == ProgressStyle::kJson) {
    auto j = json_event("step", epoch, run_.epochs, step_in_epoch, run_.steps_per_epoch);
    add_part(j);
    j["loss"] = json_number(loss);
    j["val_loss"] = json_number(last_val_loss);
    j["samples_per_s"] = json_number(samples_per_s);
    add_eta(j, e);
    write_line(j.dump());
    return;
  }
  write_line(
      fmt::format("{} {}epoch {}/{} step {}/{}: loss {:.5f}, val loss {}, {:.0f} samples/s; "
                  "ETA {}",
                  utc_now(), part_prefix(), epoch, run_.epochs, step_in_epoch, run_.steps_per_epoch,
                  loss, val_text(last_val_loss, 5),
                  std::isfinite(samples_per_s) ? samples_per_s : 0.0, format_eta(e)));
}

void Progress::draw_bar(int epoch, int64_t step_in_epoch, double loss, double last_val_loss,
                        Clock::time_point now) {
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100) &&
      step_in_epoch != run_.steps_per_epoch)
    return;
  last_draw_ = now;
  drawn_ = true;
  const Eta e = eta_in_epoch(epoch, step_in_epoch, now);
  const double elapsed = seconds_between(start_, now);
  const double rate = elapsed > 0 ? static_cast<double>(steps_seen_) / elapsed : 0;
  constexpr int kWidth = 24;
  const int filled =
      static_cast<int>(kWidth * step_in_epoch / std::max<int64_t>(1, run_.steps_per_epoch));
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  std::fprintf(
      opt_.out, "\r\033[K%sepoch %d/%d [%s] %lld/%lld loss %.4f val %s %.0f samples/s ETA %s",
      part_prefix().c_str(), epoch, run_.epochs, bar.c_str(), static_cast<long long>(step_in_epoch),
      static_cast<long long>(run_.steps_per_epoch), loss, val_text(last_val_loss, 4).c_str(),
      rate * static_cast<double>(run_.samples_per_step), format_eta(e).c_str());
  std::fflush(opt_.out);
}

void Progress::epoch_done(const EpochRecord& r, int patience_left) {
  finish();
  const auto now = Clock::now();
  run_.patience_left = patience_left;
  // Nothing is left when this was the last epoch of the budget or early stopping ends here.
  const bool last = r.epoch >= run_.epochs || patience_left == 0;
  const Eta e = last ? Eta{0, 0} : eta(r.epoch, 0, patience_left, now);
  last_draw_ = epoch_start_ = now;
  epoch_steps_seen_ = 0;
  if (opt_.style == ProgressStyle::kOff) return;
  if (opt_.style == ProgressStyle::kJson) {
    auto j = json_event("epoch", r.epoch, run_.epochs, run_.steps_per_epoch, run_.steps_per_epoch);
    add_part(j);
    j["loss"] = json_number(r.train_loss);
    j["val_loss"] = json_number(r.val_loss);
    j["samples_per_s"] = json_number(r.samples_per_s);
    add_eta(j, e);
    j["steps"] = r.steps;
    j["lr"] = json_number(r.lr);
    j["seconds"] = json_number(r.seconds);
    j["best"] = r.best;
    j["patience_left"] =
        patience_left < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(patience_left);
    write_line(j.dump());
    return;
  }
  const std::string tail = r.best ? " (best)"
                           : patience_left >= 0
                               ? " (no improvement; " + std::to_string(patience_left) + " left)"
                               : std::string(" (no improvement)");
  const std::string msg = fmt::format(
      "{}epoch {}/{}: train loss {:.5f}, val loss {:.5f}, lr {:.3g}, {:.1f} s, {:.0f} "
      "samples/s{}{}",
      part_prefix(), r.epoch, run_.epochs, r.train_loss, r.val_loss, r.lr, r.seconds,
      r.samples_per_s, tail, last ? "" : "; ETA " + format_eta(e));
  write_line(opt_.style == ProgressStyle::kLines ? utc_now() + " " + msg : msg);
}

void Progress::done(const ProgressEnd& end) {
  finish();
  if (opt_.style != ProgressStyle::kJson && opt_.style != ProgressStyle::kLines) return;
  const double elapsed = seconds_between(start_, Clock::now());
  const double samples_per_s =
      elapsed > 0 && steps_seen_ > 0
          ? static_cast<double>(steps_seen_ * run_.samples_per_step) / elapsed
          : NAN;
  if (opt_.style == ProgressStyle::kJson) {
    auto j =
        json_event("done", end.epochs_run, run_.epochs, run_.steps_per_epoch, run_.steps_per_epoch);
    add_part(j);
    j["loss"] = json_number(end.last_train_loss);
    j["val_loss"] = json_number(end.best_val_loss);
    j["samples_per_s"] = json_number(samples_per_s);
    add_eta(j, Eta{0, 0});
    j["steps"] = end.steps;
    j["best_epoch"] = end.best_epoch;
    j["stopped_early"] = end.stopped_early;
    write_line(j.dump());
    return;
  }
  write_line(fmt::format("{} {}done: {} of {} epochs{}, {} steps; scoring the kept model",
                         utc_now(), part_prefix(), end.epochs_run, run_.epochs,
                         end.stopped_early ? " (early stopping)" : "", end.steps));
}

void Progress::finish() {
  if (opt_.style == ProgressStyle::kBar && drawn_) {
    std::fputs("\r\033[K", opt_.out);
    std::fflush(opt_.out);
    drawn_ = false;
  }
}

}  // namespace attnfc::train
