#include "attnfc/kernels/threading.hpp"

#include <omp.h>
#include <sched.h>
#include <unistd.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <utility>

namespace attnfc::kernels {

namespace {

// CPUs this process may run on (the affinity mask, e.g. from taskset or a
// container's cpuset), or an empty set if the kernel does not tell us.
std::set<int> allowed_cpus() {
  std::set<int> cpus;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &mask)) cpus.insert(c);
  }
  return cpus;
}

bool read_int(const std::string& path, long* out) {
  std::ifstream in(path);
  long v = 0;
  if (!(in >> v)) return false;
  *out = v;
  return true;
}

// Distinct (package, core) pairs among `cpus`, from sysfs topology; 0 if unknown.
int cores_from_sysfs(const std::set<int>& cpus) {
  std::set<std::pair<long, long>> cores;
  for (int c : cpus) {
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
    long pkg = 0, core = 0;
    if (!read_int(dir + "core_id", &core)) return 0;
    if (!read_int(dir + "physical_package_id", &pkg)) pkg = 0;
    cores.emplace(pkg, core);
  }
  return static_cast<int>(cores.size());
}

// Distinct (physical id, core id) pairs among `cpus` (all if empty) from
// /proc/cpuinfo; 0 if the file has no topology (VMs, some architectures).
int cores_from_cpuinfo(const std::set<int>& cpus) {
  std::ifstream in("/proc/cpuinfo");
  std::set<std::pair<long, long>> cores;
  long processor = -1, phys = 0, core = -1;
  auto flush = [&] {
    if (processor >= 0 && core >= 0 && (cpus.empty() || cpus.count(static_cast<int>(processor))))
      cores.emplace(phys, core);
    processor = -1, phys = 0, core = -1;
  };
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) {
      flush();  // a blank line ends one processor's block
      continue;
    }
    const auto key_end = line.find_last_not_of(" \t", colon == 0 ? 0 : colon - 1);
    const std::string key = line.substr(0, key_end == std::string::npos ? 0 : key_end + 1);
    const long value = std::strtol(line.c_str() + colon + 1, nullptr, 10);
    if (key == "processor") processor = value;
    if (key == "physical id") phys = value;
    if (key == "core id") core = value;
  }
  flush();
  return static_cast<int>(cores.size());
}

// CPU limit from a cgroup quota (v2 "cpu.max": "max 100000" or "200000 100000";
// v1 "cpu.cfs_quota_us" / "cpu.cfs_period_us", -1 = none), 0 if there is none.
int cgroup_cpu_limit() {
  long quota = 0, period = 0;
  std::ifstream v2("/sys/fs/cgroup/cpu.max");
  std::string q;
  if (v2 >> q >> period) {
    if (q == "max") return 0;
    quota = std::strtol(q.c_str(), nullptr, 10);
  } else if (!read_int("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", &quota) ||
             !read_int("/sys/fs/cgroup/cpu/cpu.cfs_period_us", &period)) {
    return 0;
  }
  if (quota <= 0 || period <= 0) return 0;
  return static_cast<int>(std::max(1L, (quota + period - 1) / period));
}

int detect_physical_cores() {
  const std::set<int> cpus = allowed_cpus();
  int n = cpus.empty() ? 0 : cores_from_sysfs(cpus);
  if (n <= 0) n = cores_from_cpuinfo(cpus);
  if (n <= 0) n = static_cast<int>(cpus.size());
  if (n <= 0) {
    const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
    n = online > 0 ? static_cast<int>(online) : 1;
  }
  if (const int limit = cgroup_cpu_limit(); limit > 0) n = std::min(n, limit);
  return std::max(n, 1);
}

// OMP_NUM_THREADS as a positive count (its first entry if it is a list), else 0.
int env_threads() {
  const char* env = std::getenv("OMP_NUM_THREADS");
  if (!env) return 0;
  errno = 0;
  char* end = nullptr;
  const long n = std::strtol(env, &end, 10);
  if (errno != 0 || end == env || n <= 0 || n > INT_MAX) return 0;
  return static_cast<int>(n);
}

// Kernels use physical cores by default, but OpenMP's own default is every
// logical CPU; apply ours once when the library is loaded, unless the user set
// OMP_NUM_THREADS (which OpenMP already honours).
const bool kDefaultApplied = [] {
  if (env_threads() == 0) omp_set_num_threads(physical_cores());
  return true;
}();

}  // namespace

int allowed_cpu_count() {
  return static_cast<int>(allowed_cpus().size());
}

int physical_cores() {
  static const int cores = detect_physical_cores();
  return cores;
}

int default_threads() {
  const int env = env_threads();
  return env > 0 ? env : physical_cores();
}

namespace {
bool automatic = false;  // set by the entry point before any thread starts
}  // namespace

// n <= 0 restores the default.
void set_threads(int n) {
  automatic = false;
  omp_set_num_threads(n > 0 ? n : default_threads());
}

void set_threads_automatic() {
  omp_set_num_threads(default_threads());
  automatic = env_threads() == 0;
}

bool threads_automatic() {
  return automatic;
}

int current_threads() {
  return std::max(1, omp_get_max_threads());
}

void enable_flush_to_zero() {
#if defined(__SSE__)
  // FTZ (bit 15) and DAZ (bit 6): denormals cost ~100 cycles each on x86.
  _mm_setcsr(_mm_getcsr() | 0x8040);
#elif defined(__aarch64__)
  // FPCR.FZ (bit 24) is x86's FTZ and DAZ in one: denormal inputs read as zero and
  // denormal results are flushed to zero (single and double precision, scalar and NEON),
  // so the kernels give the same bits as on x86. Written only when not yet set: this runs
  // at the start of every parallel region, and an FPCR write may synchronise the FP unit.
  constexpr uint64_t kFz = uint64_t{1} << 24;
  uint64_t fpcr = 0;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  if ((fpcr & kFz) == 0) __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr | kFz));
#endif
}

}  // namespace attnfc::kernels
