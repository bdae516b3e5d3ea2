// CSV parsing speed on a generated ~100 MB file shaped like ETTh1 (a date-time
// column and 7 float columns written with varying precision, some negative).
// Measured from memory (the page cache makes file reads noise), in MB of CSV text
// per second on one thread:
//   "tokenize"    CsvTable::parse alone (quotes, delimiters, line ends),
//   "load_series" the whole path train/predict use: tokenize, timestamps,
//                 from_chars numbers, strictly-increasing check, frequency, gaps.
//   "csv long"    a long-format panel (id,date,v1,v2; CsvOptions::id_column): 1,000,000 rows
//                 across 10,000 series of 100 hourly rows, written time-major (every series
//                 at one time, then the next time), so every row's id is looked up anew.
// The reference is a plain getline + strtod reader measured in the same process.
// "tokenize ..., <path> scan" forces each vector field scan this CPU runs, against the
// scalar scan in the same process (alternating rounds, CPU time).
// Each case is reported twice: by wall clock (the convention) and by this
// thread's CPU time, which stays meaningful when other jobs share the cores.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "../src/data/csv_scan.hpp"
#include "attnfc/data/csv.hpp"
#include "attnfc/data/series.hpp"
#include "attnfc/data/time.hpp"
#include "bench_util.hpp"

namespace {

using namespace attnfc::data;

std::string make_csv(size_t target_bytes) {
  std::string out = "date,HUFL,HULL,MUFL,MULL,LUFL,LULL,OT\n";
  out.reserve(target_bytes + 256);
  const TimeStyle style{TimeFormat::kDateTimeSeconds, '-', ' '};
  int64_t t = 1467331200;
  unsigned long long s = 12345;
  char buf[64];
  while (out.size() < target_bytes) {
    out += format_timestamp(t, style);
    t += 3600;
    for (int c = 0; c < 7; ++c) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      const double v = static_cast<double>(static_cast<int>(s >> 33) % 200000 - 50000) / 1000.0;
      // Like ETTh1: most values are float32 printed at double precision, some short.
      const int n = (s >> 20) % 4 == 0 ? std::snprintf(buf, sizeof buf, ",%.3f", v)
                                       : std::snprintf(buf, sizeof buf, ",%.17g",
                                                       static_cast<double>(static_cast<float>(v)));
      out.append(buf, static_cast<size_t>(n));
    }
    out += '\n';
  }
  return out;
}

// The naive baseline: one std::string per line and per field, strtod.
double naive_parse(const std::string& text) {
  std::istringstream in(text);
  std::string line, field;
  double checksum = 0;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::getline(fields, field, ',');  // time: skipped
    while (std::getline(fields, field, ',')) checksum += std::strtod(field.c_str(), nullptr);
  }
  return checksum;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Timing {
  double wall, cpu;  // median seconds per call
};
template <class F>
Timing time_both(F&& f, double budget, int reps) {
  std::vector<double> cpu;
  const double wall = bench::time_median(
      [&] {
        const double c0 = thread_cpu_seconds();
        f();
        cpu.push_back(thread_cpu_seconds() - c0);
      },
      budget, reps, 20);
  return {wall, bench::median(cpu)};
}

// CsvTable::parse with each vector scan path, against the scalar one, alternating.
void bench_scan_paths(const bench::Options& opt, const std::string& text,
                      const std::string& shape) {
  using detail::ScanPath;
  const double mb = static_cast<double>(text.size()) / 1e6;
  const ScanPath saved = detail::scan_path();
  volatile size_t sink = 0;
  auto parse = [&] { sink = CsvTable::parse(text, "bench.csv").num_rows(); };
  for (ScanPath p : {ScanPath::Avx2, ScanPath::Avx512}) {
    if (!detail::scan_path_supported(p)) continue;
    const std::string name =
        "tokenize " + shape + ", " + (p == ScanPath::Avx2 ? "avx2" : "avx512") + " scan";
    if (!bench::selected(opt, name)) continue;
    std::vector<double> ours, scalar;
    for (int round = 0; round < 4; ++round) {
      for (int side = 0; side < 2; ++side) {
        const bool vector_side = (side + round) % 2 == 0;
        detail::set_scan_path(vector_side ? p : ScanPath::Scalar);
        (vector_side ? ours : scalar).push_back(time_both(parse, opt.min_seconds / 4, 3).cpu);
      }
    }
    bench::emit("csv", name, "MB/s per CPU-second", mb / bench::median(ours), "scalar scan",
                mb / bench::median(scalar));
  }
  detail::set_scan_path(saved);
  (void)sink;
}

// The long-format panel of the "csv long" case (see the top of the file).
std::string make_long_csv(size_t series, size_t rows_per_series) {
  std::string out = "id,date,v1,v2\n";
  out.reserve(series * rows_per_series * 48);
  const TimeStyle style{TimeFormat::kDateTimeSeconds, '-', ' '};
  unsigned long long s = 987654321;
  char buf[96];
  for (size_t r = 0; r < rows_per_series; ++r) {
    const std::string date = format_timestamp(1577836800 + static_cast<int64_t>(r) * 3600, style);
    for (size_t k = 0; k < series; ++k) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      const double a = static_cast<double>(static_cast<int>(s >> 33) % 200000) / 100.0;
      const double b = static_cast<double>(static_cast<int>(s >> 40) % 5000 - 2500) / 10.0;
      const int n =
          std::snprintf(buf, sizeof buf, "item_%05zu,%s,%.2f,%.1f\n", k, date.c_str(), a, b);
      out.append(buf, static_cast<size_t>(n));
    }
  }
  return out;
}

void bench_long(const bench::Options& opt) {
  const std::string name = "csv long 1M rows 10k series, 4 columns, 1 thread";
  if (!bench::selected(opt, name)) return;
  const std::string text = make_long_csv(10000, 100);
  const double mb = static_cast<double>(text.size()) / 1e6;
  CsvOptions o;
  o.id_column = "id";
  volatile double sink = 0;
  const Timing t = time_both(
      [&] {
        const TimeSeries series = load_series(CsvTable::parse(text, "long.csv"), o);
        sink = series.values.back() + static_cast<double>(series.num_series());
      },
      opt.min_seconds, 3);
  bench::emit("csv", name, "MB/s", mb / t.wall);
  bench::emit("csv", name, "MB/s per CPU-second", mb / t.cpu);
  (void)sink;
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Options opt = bench::parse_args(argc, argv);
  const std::string text = make_csv(100u << 20);
  const double mb = static_cast<double>(text.size()) / 1e6;
  const std::string shape = std::to_string(static_cast<int>(mb)) + " MB, 8 columns, 1 thread";
  volatile double sink = 0;

  const std::string tok_case = "tokenize " + shape;
  if (bench::selected(opt, tok_case)) {
    const Timing t = time_both(
        [&] { sink = static_cast<double>(CsvTable::parse(text, "bench.csv").num_rows()); },
        opt.min_seconds, 3);
    bench::emit("csv", tok_case, "MB/s", mb / t.wall);
    bench::emit("csv", tok_case, "MB/s per CPU-second", mb / t.cpu);
  }
  const std::string load_case = "load_series " + shape;
  if (bench::selected(opt, load_case)) {
    const CsvOptions o;
    const Timing t = time_both(
        [&] {
          const TimeSeries series = load_series(CsvTable::parse(text, "bench.csv"), o);
          sink = series.values.back();
        },
        opt.min_seconds, 3);
    const Timing naive = time_both([&] { sink = naive_parse(text); }, opt.min_seconds, 3);
    bench::emit("csv", load_case, "MB/s", mb / t.wall, "getline+strtod", mb / naive.wall);
    bench::emit("csv", load_case, "MB/s per CPU-second", mb / t.cpu, "getline+strtod",
                mb / naive.cpu);
  }
  bench_scan_paths(opt, text, shape);
  bench_long(opt);
  (void)sink;
  return 0;
}
