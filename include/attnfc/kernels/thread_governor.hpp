#pragma once
// The thread count of a repeated step (a training step), chosen from the step's own
// timings when the user chose none (no --threads, no OMP_NUM_THREADS).
//
// Why: beside busy neighbour processes, N OpenMP threads can be slower than one. A thread
// that loses its core for a scheduler time slice holds every other thread at the next
// barrier: most steps run at full speed and a few take ten times as long (measured on a
// 2-core AMD EPYC beside two shell loops: 10-16 ms steps at 2 threads with 110-176 ms
// stalls, 15 ms at 1 thread). Issue 16 measured the S shape at 2 threads beside one
// CPU-bound process at 0.69x of the same run at 1 thread. No static default can know the
// neighbours, and they come and go. Every kernel gives the same bits at any thread count,
// so the count may change at any step without changing a result.
//
// How: the counts form a ladder (N, N/2, ..., 1). After `interval` seconds of steps at the
// current rung the governor probes a neighbouring rung for at least kProbeSteps steps and
// kProbeSeconds; it moves there when the probe's mean step time beats the current rung's
// mean since the last probe by 5%. Means, not medians: the stalls are rare and long, and
// they are the cost. A lost probe doubles the interval (0.25 s .. 32 s), so on a quiet
// machine probing costs well under 1% of a long run; a won probe keeps it. Only step time
// counts (the caller records steps; validation between epochs is not seen). The first
// step after a change pays for waking or parking threads and is not counted. A probe
// towards more threads is made only when the machine had idle CPUs for them over the last
// interval (/proc/stat): it costs nothing to look, so the interval does not grow then.
// Likewise a probe towards fewer threads that lost while the machine's other processes
// used almost no CPU (under kQuietCpus, before and during it) is not made again from that
// rung while they still use none: on a quiet machine nothing has changed that could make
// it win, and those repeated probes cost short runs up to 7% (docs/BENCHMARKS.md); when
// neighbours arrive the probes resume at the next interval.
// The governor allocates nothing after construction. A move up the ladder may make
// libgomp start threads again (a smaller team lets spare pool threads end, with 3+ rungs,
// i.e. 4+ cores), and a new thread allocates its kernel buffers in its first step: once
// per move, not per step.
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>

namespace attnfc::kernels {

// Idle CPUs of the whole machine, on average since the previous call; negative when unknown.
using IdleCpus = std::function<double()>;
// Reads /proc/stat (Linux): (idle + iowait) / all jiffies x online CPUs. Unknown (always
// negative) where it cannot be read, and when this process may not run on every CPU (a
// Slurm job or a cpuset): the machine's idle CPUs are then not ones it could use.
IdleCpus machine_idle_cpus();

// CPUs the machine's other processes left free on average since this process started:
// online CPUs minus theirs busy ((1 - idle share) x CPUs, less this process's own CPU time
// over the same wall time). Negative when unknown: as machine_idle_cpus, or less than
// kMinLoadSeconds since the start (too few /proc/stat ticks to tell).
using FreeCpus = std::function<double()>;
FreeCpus machine_free_cpus();

// CPUs the machine's other processes used on average since the previous call (the
// arithmetic of free_cpus over that time: busy CPUs less this process's own CPU time).
// Negative when unknown, as machine_idle_cpus.
using OtherCpus = std::function<double()>;
OtherCpus machine_other_cpus();
inline constexpr double kMinLoadSeconds = 0.5;
// The arithmetic of machine_free_cpus, in [0, cpus]; negative when an input is unknown.
double free_cpus(double cpus, double idle_share, double own_cpu_seconds, double wall_seconds);

// The first line of /proc/stat, "cpu  user nice system idle iowait irq softirq steal ...":
// idle + iowait and the sum of the first eight fields, in jiffies. False when malformed.
bool parse_cpu_jiffies(const char* text, uint64_t& idle, uint64_t& total);
// The share of the time between two readings that was idle, in [0, 1]; negative when the
// readings do not move forward (iowait may go down: proc(5)).
double idle_share(uint64_t idle0, uint64_t total0, uint64_t idle1, uint64_t total1);

class ThreadGovernor {
 public:
  // max_threads <= 1: a fixed count of 1 (nothing to choose). `idle` tells whether a probe
  // towards more threads has a free CPU to run on: without one the probe would only pay
  // for the stalls (beside one busy process on 2 cores, 2 threads ran at 0.3x of 1), so
  // it is left out; with an unknown count it is made.
  // `free` (read at the first step: after loading the data and the linear start, which
  // give it seconds of the machine to average over) picks the starting count: the largest
  // rung not above the free CPUs, rounded (at least 1); unknown or null: the largest.
  // Beside busy neighbours the first steps then do not pay for stalls while the governor
  // finds its way down (the demo's training beside four loops lost 0.4 s of 14 so).
  // `others` tells whether the machine is quiet enough to stop repeating a lost probe
  // towards fewer threads (null or negative: unknown, every probe is made).
  explicit ThreadGovernor(int max_threads, IdleCpus idle = machine_idle_cpus(),
                          FreeCpus free = nullptr, OtherCpus others = nullptr);
  // Gives OpenMP back, if it moved, the count `free` allows now (over the whole run so far;
  // the largest when unknown) for what follows: the scoring, the next ensemble member.
  ~ThreadGovernor();
  ThreadGovernor(const ThreadGovernor&) = delete;
  ThreadGovernor& operator=(const ThreadGovernor&) = delete;

  // The count to run the next step with.
  int threads() const { return rungs_[probing_ ? probe_rung_ : rung_]; }
  // Around each step: begin_step sets OpenMP's count to threads() when it changed and
  // starts the clock; end_step records the step's time and says whether the governor has
  // just moved to another count (for the log). Nothing is timed when there is no choice.
  void begin_step();
  bool end_step();
  // begin_step without the clock: chooses the start (once) and gives OpenMP the count, for
  // work before the first step that should run at it too (the first validation).
  void settle();
  // The step just run took `seconds` at threads() (end_step's clock; tests feed their own).
  void record(double seconds);

  bool active() const { return rung_count_ > 1; }
  // The rung below `n` threads (n / 2): the ladder's one rule, also for code that sizes
  // work for every count the governor may choose (train::PartWorkers).
  static constexpr int next_lower(int n) { return n / 2; }
  // The free CPUs read at the first step (negative: unknown or not read yet).
  double free_at_start() const { return free_at_start_; }
  // Moves between rungs so far (for the log and the tests).
  int64_t switches() const { return switches_; }

  static constexpr double kFirstInterval = 0.25;  // seconds of steps before the first probe
  static constexpr double kMaxInterval = 32;
  static constexpr double kProbeSeconds = 0.2;
  static constexpr int kProbeSteps = 3;  // counted steps, at least, in a probe and a rung's tally
  static constexpr double kWinMargin = 0.95;
  // Other processes' CPUs below which the machine counts as quiet: /proc/stat counts in
  // 10 ms ticks, so over a quarter second a quiet machine reads up to about 0.1.
  static constexpr double kQuietCpus = 0.25;

 private:
  static constexpr int kMaxRungs = 16;

  // Step times at one count since it was last entered; the first step is not counted.
  struct Tally {
    double seconds = 0;
    int steps = 0;
    bool skip_next = true;
    void add(double s);
    double mean() const { return steps > 0 ? seconds / steps : 0.0; }
  };

  int start_rung(double free) const;  // the largest rung not above round(free), at least 1
  void start_probe();
  void finish_probe();

  std::array<int, kMaxRungs> rungs_{};
  int rung_count_ = 0;
  int rung_ = 0;  // index into rungs_ of the current count; 0 is the most threads
  Tally current_;
  Tally probe_;
  double interval_ = kFirstInterval;
  bool probing_ = false;
  bool probe_up_next_ = false;  // alternate the direction when both neighbours exist
  int probe_rung_ = 0;
  bool probe_quiet_ = false;  // the others used no CPU over the tally before the probe
  // A probe from rung k towards fewer threads lost on a quiet machine.
  std::array<bool, kMaxRungs> lost_quietly_{};
  int64_t switches_ = 0;
  int applied_ = 0;       // the count last given to OpenMP by begin_step
  bool started_ = false;  // begin_step has chosen the starting rung
  double free_at_start_ = -1;
  std::chrono::steady_clock::time_point step_start_;
  IdleCpus idle_;
  FreeCpus free_;
  OtherCpus others_;
};

}  // namespace attnfc::kernels
