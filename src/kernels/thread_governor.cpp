#include "attnfc/kernels/thread_governor.hpp"

#include <fcntl.h>
#include <omp.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "attnfc/kernels/threading.hpp"

namespace attnfc::kernels {

bool parse_cpu_jiffies(const char* text, uint64_t& idle, uint64_t& total) {
  if (std::strncmp(text, "cpu ", 4) != 0) return false;
  const char* at = text + 4;
  idle = total = 0;
  for (int field = 0; field < 8; ++field) {  // user .. steal; guest is inside user already
    char* end = nullptr;
    const unsigned long long v = std::strtoull(at, &end, 10);
    if (end == at) return field > 4;  // old kernels stop after iowait or irq
    if (field == 3 || field == 4) idle += v;
    total += v;
    at = end;
  }
  return true;
}

double idle_share(uint64_t idle0, uint64_t total0, uint64_t idle1, uint64_t total1) {
  if (total1 <= total0 || idle1 < idle0) return -1;
  return std::min(1.0, static_cast<double>(idle1 - idle0) / static_cast<double>(total1 - total0));
}

namespace {

// Reads into a fixed buffer: no allocation in a training step.
bool read_cpu_jiffies(uint64_t& idle, uint64_t& total) {
  const int fd = ::open("/proc/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return parse_cpu_jiffies(buf, idle, total);
}

struct LoadReading {
  uint64_t idle = 0, total = 0;  // /proc/stat jiffies
  double own = 0, wall = 0;      // this process's CPU seconds, monotonic seconds
  bool ok = false;
};

double clock_seconds(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

LoadReading read_load() {
  LoadReading r;
  r.ok = read_cpu_jiffies(r.idle, r.total);
  r.own = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
  r.wall = clock_seconds(CLOCK_MONOTONIC);
  return r;
}

const LoadReading kAtStart = read_load();  // when the program was loaded

}  // namespace

double free_cpus(double cpus, double idle, double own_cpu_seconds, double wall_seconds) {
  if (cpus <= 0 || idle < 0 || own_cpu_seconds < 0 || wall_seconds <= 0) return -1;
  const double others = (1.0 - idle) * cpus - own_cpu_seconds / wall_seconds;
  return std::clamp(cpus - others, 0.0, cpus);
}

FreeCpus machine_free_cpus() {
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus <= 0 || allowed_cpu_count() != cpus || !kAtStart.ok) return [] { return -1.0; };
  return [cpus]() -> double {
    const LoadReading now = read_load();
    if (!now.ok || now.wall - kAtStart.wall < kMinLoadSeconds) return -1;
    return free_cpus(static_cast<double>(cpus),
                     idle_share(kAtStart.idle, kAtStart.total, now.idle, now.total),
                     now.own - kAtStart.own, now.wall - kAtStart.wall);
  };
}

OtherCpus machine_other_cpus() {
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  const LoadReading first = read_load();
  if (cpus <= 0 || allowed_cpu_count() != cpus || !first.ok) return [] { return -1.0; };
  return [cpus, last = first]() mutable -> double {
    const LoadReading now = read_load();
    if (!now.ok) return -1;
    const double n = static_cast<double>(cpus);
    const double free = free_cpus(n, idle_share(last.idle, last.total, now.idle, now.total),
                                  now.own - last.own, now.wall - last.wall);
    last = now;
    return free < 0 ? -1 : n - free;
  };
}

IdleCpus machine_idle_cpus() {
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  uint64_t last_idle = 0, last_total = 0;
  // Only when this process may run on every online CPU (no taskset, cpuset, Slurm binding).
  if (cpus <= 0 || allowed_cpu_count() != cpus || !read_cpu_jiffies(last_idle, last_total))
    return [] { return -1.0; };
  return [cpus, last_idle, last_total]() mutable -> double {
    uint64_t idle = 0, total = 0;
    if (!read_cpu_jiffies(idle, total)) return -1;
    const double share = idle_share(last_idle, last_total, idle, total);
    last_idle = idle, last_total = total;
    return share < 0 ? -1 : share * static_cast<double>(cpus);
  };
}

void ThreadGovernor::Tally::add(double s) {
  if (skip_next) {
    skip_next = false;
    return;
  }
  seconds += s;
  ++steps;
}

ThreadGovernor::ThreadGovernor(int max_threads, IdleCpus idle, FreeCpus free, OtherCpus others)
    : idle_(std::move(idle)), free_(std::move(free)), others_(std::move(others)) {
  for (int n = std::max(max_threads, 1); rung_count_ < kMaxRungs; n = next_lower(n)) {
    rungs_[rung_count_++] = n;
    if (n == 1) break;
  }
}

ThreadGovernor::~ThreadGovernor() {
  // What follows (the final scoring, the next member's linear start) runs at the count the
  // machine's load since the start allows, or at the largest when that is unknown.
  const int after = rungs_[start_rung(free_ ? free_() : -1)];
  if (applied_ != 0 && applied_ != after) omp_set_num_threads(after);
}

int ThreadGovernor::start_rung(double free) const {
  const double want = std::max(1.0, std::floor(free + 0.5));
  int rung = 0;
  while (free >= 0 && rung + 1 < rung_count_ && rungs_[rung] > want) ++rung;
  return rung;
}

void ThreadGovernor::settle() {
  if (!active()) return;
  if (!started_) {
    started_ = true;
    free_at_start_ = free_ ? free_() : -1;
    rung_ = start_rung(free_at_start_);
  }
  if (threads() != applied_) {
    applied_ = threads();
    omp_set_num_threads(applied_);
  }
}

void ThreadGovernor::begin_step() {
  if (!active()) return;
  settle();
  step_start_ = std::chrono::steady_clock::now();
}

bool ThreadGovernor::end_step() {
  if (!active()) return false;
  const int64_t before = switches_;
  record(std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start_).count());
  return switches_ != before;
}

void ThreadGovernor::record(double seconds) {
  if (!active()) return;
  started_ = true;  // the start is chosen before the first step only
  if (probing_) {
    probe_.add(seconds);
    if (probe_.steps >= kProbeSteps && probe_.seconds >= kProbeSeconds) finish_probe();
    return;
  }
  current_.add(seconds);
  if (current_.steps >= kProbeSteps && current_.seconds >= interval_) start_probe();
}

void ThreadGovernor::start_probe() {
  const bool can_go_up = rung_ > 0, can_go_down = rung_ + 1 < rung_count_;
  const bool up = can_go_up && (probe_up_next_ || !can_go_down);
  probe_rung_ = up ? rung_ - 1 : rung_ + 1;
  probe_up_next_ = !up;
  const double idle = idle_ ? idle_() : -1;  // over this rung's tally
  const double others = others_ ? others_() : -1;
  if (up && idle >= 0 && idle < 0.5 * (rungs_[probe_rung_] - rungs_[rung_])) {
    current_ = Tally{};  // no free CPU for more threads: look again after an interval
    return;
  }
  probe_quiet_ = others >= 0 && others < kQuietCpus;
  if (!up && probe_quiet_ && lost_quietly_[static_cast<size_t>(rung_)]) {
    current_ = Tally{};  // still quiet: it would lose again; look after an interval
    return;
  }
  probing_ = true;
  probe_ = Tally{};
}

void ThreadGovernor::finish_probe() {
  probing_ = false;
  const double others = others_ ? others_() : -1;  // over the probe; and restarts the count
  if (probe_.mean() < kWinMargin * current_.mean()) {
    rung_ = probe_rung_;
    ++switches_;
    probe_up_next_ = !probe_up_next_;  // then look further the same way
  } else {
    interval_ = std::min(2 * interval_, kMaxInterval);
    if (probe_rung_ > rung_ && probe_quiet_ && others >= 0 && others < kQuietCpus)
      lost_quietly_[static_cast<size_t>(rung_)] = true;
  }
  current_ = Tally{};  // the rung's mean since this probe: neighbours come and go
  if (idle_) idle_();  // and the machine's idle CPUs over the same time
}

}  // namespace attnfc::kernels
