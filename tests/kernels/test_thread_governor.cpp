// The thread governor's decisions, fed step times from a model of the machine: a quiet
// machine (time falls with threads), one busy with neighbours (more threads stall now and
// then), and one whose neighbours leave. No real timing: the governor only sees the numbers,
// and the machine's idle CPUs are unknown (nullptr) unless a case gives them.
#include <doctest/doctest.h>

#include <omp.h>
#include <unistd.h>

#include <filesystem>
#include <functional>

#include "attnfc/kernels/thread_governor.hpp"

using attnfc::kernels::ThreadGovernor;

namespace {

struct Run {
  double seconds_at[64] = {};  // time spent at each count
  long steps_at[64] = {};
  long total = 0;
  double seconds = 0;
};

using StepTime = std::function<double(int threads, long step)>;

void run_governor(ThreadGovernor& g, Run& r, long steps, const StepTime& time) {
  for (long i = 0; i < steps; ++i, ++r.total) {
    const int n = g.threads();
    const double t = time(n, r.total);
    ++r.steps_at[n];
    r.seconds_at[n] += t;
    r.seconds += t;
    g.record(t);
  }
}

// Steps (at most 20000) until the governor runs `threads`; the seconds they took, or -1.
double seconds_until(ThreadGovernor& g, Run& r, int threads, const StepTime& time) {
  const double from = r.seconds;
  for (long i = 0; i < 20000; ++i) {
    run_governor(g, r, 1, time);
    if (g.threads() == threads) return r.seconds - from;
  }
  return -1;
}

// 10 ms at 1 thread; 2 threads 1.67x as fast, 4 threads 2.5x.
double quiet(int threads, long) {
  return 0.010 / (0.2 + 0.8 * threads);
}

// What a 2-core machine beside two CPU-bound processes showed: at 2 threads most steps are
// fast (10 ms) and every fourth stalls for a scheduler time slice (110 ms): 35 ms on
// average; at 1 thread a steady 15 ms.
double stalls(int threads, long step) {
  if (threads == 1) return 0.015;
  return step % 4 == 3 ? 0.110 : 0.010;
}

}  // namespace

TEST_CASE("thread governor: the ladder halves from the largest count down to 1") {
  ThreadGovernor one(1, nullptr);
  CHECK_FALSE(one.active());
  CHECK(one.threads() == 1);
  ThreadGovernor none(0, nullptr);
  CHECK(none.threads() == 1);
  ThreadGovernor six(6, nullptr);
  CHECK(six.active());
  CHECK(six.threads() == 6);
  Run r;
  // Fewer threads are faster on every rung: it steps down the ladder to 1.
  run_governor(six, r, 2000, [](int n, long) { return n == 6 ? 0.03 : n == 3 ? 0.02 : 0.01; });
  CHECK(six.threads() == 1);
  CHECK(r.steps_at[3] > 0);
  CHECK(six.switches() == 2);
}

TEST_CASE("thread governor: a quiet machine keeps every thread; probing costs under 1%") {
  ThreadGovernor g(2, nullptr);
  Run r;
  run_governor(g, r, 200000, quiet);  // about 20 minutes of steps
  CHECK(g.threads() == 2);
  CHECK(g.switches() == 0);
  CHECK(r.steps_at[1] > 0);  // it did look
  const double at_two = r.total * quiet(2, 0);
  CHECK(r.seconds < 1.01 * at_two);
}

TEST_CASE("thread governor: rare long stalls count, and it moves to 1 thread") {
  // Medians of a few steps see 10 ms at 2 threads and stay there; the mean sees 35 ms.
  ThreadGovernor g(2, nullptr);
  Run r;
  run_governor(g, r, 40000, stalls);  // about 10 minutes of steps at 1 thread
  CHECK(g.threads() == 1);
  // Against every step at 1 thread: within 2% (the first interval and the probes back up).
  CHECK(r.seconds < 1.02 * r.total * 0.015);
}

TEST_CASE("thread governor: a small difference (under 5%) is not worth a move") {
  ThreadGovernor g(2, nullptr);
  Run r;
  run_governor(g, r, 20000, [](int n, long) { return n == 2 ? 0.0100 : 0.0097; });
  CHECK(g.threads() == 2);
  CHECK(g.switches() == 0);
}

TEST_CASE("thread governor: when the neighbours leave, it returns to every thread") {
  ThreadGovernor g(2, nullptr);
  Run r;
  run_governor(g, r, 20000, stalls);
  REQUIRE(g.threads() == 1);
  const double back_after = seconds_until(g, r, 2, quiet);
  REQUIRE(back_after > 0);
  // Within the longest interval and one probe.
  CHECK(back_after <= ThreadGovernor::kMaxInterval + 1.0);
  run_governor(g, r, 20000, quiet);
  CHECK(g.threads() == 2);
}

TEST_CASE("thread governor: with no idle CPU it does not probe for more threads") {
  double idle = 0;  // beside busy neighbours: every CPU in use
  ThreadGovernor g(2, [&idle] { return idle; });
  Run r;
  run_governor(g, r, 1000, stalls);
  REQUIRE(g.threads() == 1);
  const long at_two = r.steps_at[2];
  run_governor(g, r, 40000, stalls);
  CHECK(r.steps_at[2] == at_two);  // no probe at 2 threads after the move
  idle = 1.0;  // the neighbours left: it looks within an interval, however long the wait
  const double left_at = r.seconds;
  while (g.threads() == 1 && r.seconds - left_at < 60) run_governor(g, r, 1, quiet);
  CHECK(r.seconds - left_at < 1.0);
  run_governor(g, r, 2000, quiet);
  CHECK(g.threads() == 2);
  // An unknown count (a machine without /proc/stat) probes as before.
  idle = -1;
  ThreadGovernor unknown(2, [&idle] { return idle; });
  Run u;
  run_governor(unknown, u, 40000, stalls);
  CHECK(unknown.threads() == 1);
  CHECK(u.steps_at[2] > 50);
}

TEST_CASE("thread governor: on a quiet machine a lost probe for fewer threads is not made again") {
  double others = 0;  // CPUs the other processes use: none
  ThreadGovernor g(2, nullptr, nullptr, [&others] { return others; });
  Run r;
  run_governor(g, r, 200000, quiet);  // about 20 minutes of steps
  CHECK(g.threads() == 2);
  // One probe of at least kProbeSeconds at 1 thread (10 ms steps), not one per interval.
  CHECK(r.seconds_at[1] >= ThreadGovernor::kProbeSeconds);
  CHECK(r.seconds_at[1] < 2 * ThreadGovernor::kProbeSeconds);
  // Neighbours arrive: the next interval probes again, and the governor moves to 1 thread.
  others = 1.0;
  const double moved_after = seconds_until(g, r, 1, stalls);
  REQUIRE(moved_after > 0);
  CHECK(moved_after < 2.0);  // the interval stayed at 0.5 s: well under 2 s
  // Without a reading (a machine without /proc/stat) it probes on a quiet machine as before.
  others = -1;
  ThreadGovernor unknown(2, nullptr, nullptr, [&others] { return others; });
  Run u;
  run_governor(unknown, u, 200000, quiet);
  CHECK(u.seconds_at[1] > 5 * ThreadGovernor::kProbeSeconds);
}

TEST_CASE("thread governor: the first step after a change is not counted") {
  // 1 thread is twice as fast, but the first step after moving to it takes 100 times as
  // long (threads being parked): counted, it would sink every probe.
  ThreadGovernor g(2, nullptr);
  int last = 2;
  Run r;
  run_governor(g, r, 2000, [&last](int n, long) {
    const double t = (n == 1 ? 0.005 : 0.010) * (n == 1 && last != 1 ? 100.0 : 1.0);
    last = n;
    return t;
  });
  CHECK(g.threads() == 1);
}

TEST_CASE("thread governor: /proc/stat's first line and the idle share between readings") {
  using attnfc::kernels::idle_share;
  using attnfc::kernels::parse_cpu_jiffies;
  uint64_t idle = 0, total = 0;
  // user nice system idle iowait irq softirq steal guest guest_nice
  REQUIRE(parse_cpu_jiffies("cpu  100 5 50 800 20 3 2 10 7 0\ncpu0 1 2 3", idle, total));
  CHECK(idle == 820);   // idle + iowait
  CHECK(total == 990);  // user .. steal (guest is counted inside user)
  REQUIRE(parse_cpu_jiffies("cpu 1 2 3 4 5\n", idle, total));  // an old kernel: no irq ..
  CHECK(idle == 9);
  CHECK(total == 15);
  CHECK_FALSE(parse_cpu_jiffies("cpu 1 2 3 4\n", idle, total));  // no iowait
  CHECK_FALSE(parse_cpu_jiffies("intr 1 2 3 4 5 6 7 8", idle, total));
  CHECK_FALSE(parse_cpu_jiffies("", idle, total));
  CHECK(idle_share(800, 1000, 900, 1200) == doctest::Approx(0.5));
  CHECK(idle_share(800, 1000, 800, 1200) == 0.0);
  CHECK(idle_share(800, 1000, 790, 1200) < 0);  // iowait went down
  CHECK(idle_share(800, 1000, 900, 1000) < 0);  // no time passed
}

TEST_CASE("thread governor: the largest count is given back when it ends") {
  omp_set_num_threads(2);
  {
    ThreadGovernor g(2, nullptr);
    Run r;
    run_governor(g, r, 200, stalls);
    REQUIRE(g.threads() == 1);
    g.begin_step();
    CHECK(omp_get_max_threads() == 1);
  }
  CHECK(omp_get_max_threads() == 2);
}

TEST_CASE("thread governor: the machine's idle CPUs are read from /proc/stat") {
  const attnfc::kernels::IdleCpus idle = attnfc::kernels::machine_idle_cpus();
  volatile double sink = 0;
  for (long i = 0; i < 20000000; ++i) sink = sink + 1e-9 * static_cast<double>(i);
  const double v = idle();
  if (std::filesystem::exists("/proc/stat")) {
    CHECK(v >= 0.0);
    CHECK(v <= static_cast<double>(::sysconf(_SC_NPROCESSORS_ONLN)));
  }
}

TEST_CASE("thread governor: it starts at the rung the CPUs left free before training allow") {
  using attnfc::kernels::free_cpus;
  // 2 CPUs fully busy over 1 s, half a CPU of it ours: the others used 1.5, leaving 0.5.
  CHECK(free_cpus(2, 0.0, 0.5, 1.0) == doctest::Approx(0.5));
  CHECK(free_cpus(2, 0.5, 1.0, 1.0) == doctest::Approx(2.0));  // the busy half was ours
  CHECK(free_cpus(2, 0.0, 0.0, 1.0) == 0.0);                   // clamped to [0, cpus]
  CHECK(free_cpus(2, -1.0, 0.5, 1.0) < 0);                     // unknown idle share
  CHECK(free_cpus(2, 0.5, 0.5, 0.0) < 0);                      // no time to average over
  const int saved = omp_get_max_threads();
  struct Start {
    double free;
    int threads;
  };
  for (const Start s : {Start{1.2, 1}, {0.3, 1}, {2.6, 2}, {3.6, 4}, {-1, 4}}) {
    ThreadGovernor g(4, nullptr, [&] { return s.free; });
    CHECK(g.threads() == 4);  // chosen at the first step, once the data is loaded
    g.begin_step();
    CAPTURE(s.free);
    CHECK(g.threads() == s.threads);
    CHECK(omp_get_max_threads() == s.threads);
  }
  ThreadGovernor unknown(4, nullptr);
  unknown.begin_step();
  CHECK(unknown.threads() == 4);
  {  // What follows the steps runs at the count the load allows (the largest when unknown).
    ThreadGovernor low(4, nullptr, [] { return 1.1; });
    low.begin_step();
  }
  CHECK(omp_get_max_threads() == 1);
  {
    ThreadGovernor high(4, nullptr, [] { return -1.0; });
    high.begin_step();
  }
  CHECK(omp_get_max_threads() == 4);
  // Started low on a machine whose neighbours then leave: it climbs back up.
  ThreadGovernor g(
      2, [] { return 2.0; }, [] { return 0.8; });
  g.begin_step();
  REQUIRE(g.threads() == 1);
  Run r;
  run_governor(g, r, 2000, quiet);
  CHECK(g.threads() == 2);
  omp_set_num_threads(saved);
}
