#pragma once
// Shared helpers for the bench_* programs: argument parsing (--threads N), wall-clock
// timing with a median over repetitions, and the JSON-line output that
// scripts/bench.sh aggregates (one object per measured quantity, see CONTRIBUTING.md):
//   {"bench":"gemm","case":"NT 4096x384x128","metric":"GFLOP/s","value":123.4,
//    "ref":"openblas","ref_value":130.2}
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "attnfc/kernels/threading.hpp"

namespace bench {

struct Options {
  int threads = 0;            // 0: the kernels' default (physical cores)
  double min_seconds = 0.25;  // time budget per measured quantity
  std::string filter;         // only cases whose name contains this
  std::string ref_isa;        // bench_gemm: also time attnfc on this kernel path, in process
};

// --cpu-time: time by the process's CPU clock instead of the wall clock. At one thread
// it leaves out the time the process waits for a core on a shared machine.
inline bool g_cpu_clock = false;

inline void usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s [--threads N] [--min-time SECONDS] [--filter SUBSTRING] [--ref-isa PATH] "
               "[--cpu-time]\n"
               "Prints one JSON object per measured quantity to stdout.\n",
               prog);
}

// Parses the common flags and sets the thread count for every kernel.
inline Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--threads" && has_value) {
      o.threads = std::atoi(argv[++i]);
      if (o.threads <= 0) {
        std::fprintf(stderr, "%s: --threads expects a positive integer, got '%s'\n", argv[0],
                     argv[i]);
        std::exit(2);
      }
    } else if (a == "--min-time" && has_value) {
      o.min_seconds = std::atof(argv[++i]);
    } else if (a == "--filter" && has_value) {
      o.filter = argv[++i];
    } else if (a == "--cpu-time") {
      g_cpu_clock = true;
    } else if (a == "--ref-isa" && has_value) {
      o.ref_isa = argv[++i];
    } else if (a == "--help" || a == "-h") {
      usage(argv[0]);
      std::exit(0);
    } else {
      std::fprintf(stderr, "%s: unknown or incomplete argument '%s'\n", argv[0], argv[i]);
      usage(argv[0]);
      std::exit(2);
    }
  }
  attnfc::kernels::set_threads(o.threads);
  o.threads = attnfc::kernels::current_threads();
  return o;
}

// --filter SUBSTRING selects the cases whose name contains it; --filter =NAME exactly NAME
// ("S" alone also selects "S-quantiles").
inline bool selected(const Options& o, const std::string& name) {
  if (!o.filter.empty() && o.filter[0] == '=') return name == o.filter.substr(1);
  return o.filter.empty() || name.find(o.filter) != std::string::npos;
}

inline double now_seconds() {
  if (g_cpu_clock) {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median seconds per call of f(): one warm-up call (skipped when a call is slower than
// the whole budget), then repeats until the budget is spent, at least min_reps times.
template <class F>
double time_median(F&& f, double budget_seconds, int min_reps = 5, int max_reps = 200) {
  double t0 = now_seconds();
  f();
  const double first = now_seconds() - t0;
  std::vector<double> times;
  if (first > budget_seconds) times.push_back(first);
  const double start = now_seconds();
  while (static_cast<int>(times.size()) < max_reps &&
         (static_cast<int>(times.size()) < min_reps || now_seconds() - start < budget_seconds)) {
    t0 = now_seconds();
    f();
    times.push_back(now_seconds() - t0);
    if (first > budget_seconds && static_cast<int>(times.size()) >= 3) break;
  }
  return median(times);
}

inline std::string json_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

// One JSON line. ref may be empty (no reference measured); non-finite values are
// written as null so the line stays valid JSON.
inline void emit(const std::string& bench, const std::string& case_name, const std::string& metric,
                 double value, const std::string& ref = "", double ref_value = NAN) {
  auto num = [](double v) {
    if (!std::isfinite(v)) return std::string("null");
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return std::string(buf);
  };
  std::string line = "{\"bench\":\"" + json_escape(bench) + "\",\"case\":\"" +
                     json_escape(case_name) + "\",\"metric\":\"" + json_escape(metric) +
                     "\",\"value\":" + num(value);
  if (!ref.empty()) {
    line += ",\"ref\":\"" + json_escape(ref) + "\",\"ref_value\":" + num(ref_value);
  }
  line += "}\n";
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
}

// Deterministic fill in [-1, 1).
inline void fill_random(float* p, size_t n, unsigned seed) {
  unsigned long long s = 0x9E3779B97F4A7C15ull ^ seed;
  for (size_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = static_cast<float>(static_cast<int>(s >> 32) * (1.0 / 2147483648.0));
  }
}

}  // namespace bench
