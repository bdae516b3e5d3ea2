// GEMM throughput (GFLOP/s) for NN, NT and TN on square and model shapes, next to
// OpenBLAS's cblas_sgemm measured in the same process. OpenBLAS is loaded with dlopen
// so that building attnfc never depends on it; without it the ratio is skipped.
// --ref-isa PATH replaces OpenBLAS by attnfc itself on another kernel path (say
// portable), timed in the same process in alternating rounds: a reference for
// before/after comparisons on a shared machine.
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "attnfc/kernels/gemm.hpp"
#include "attnfc/kernels/isa.hpp"
#include "bench_util.hpp"
#include "fma_peak.hpp"

namespace {

// CBLAS enums (cblas.h): row-major 101, no-trans 111, trans 112.
using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);
using SetThreadsFn = void (*)(int);

struct OpenBlas {
  void* handle = nullptr;
  SgemmFn sgemm = nullptr;
  SetThreadsFn set_threads = nullptr;

  // OpenBLAS's DYNAMIC_ARCH reads the CPU model name; on a virtual machine that reports a
  // generic "Intel Xeon Processor" it falls back to its Prescott (SSE3) kernels, about 8x
  // slower than its AVX-512 ones. Compare against its best kernel for this CPU instead,
  // unless the user chose one with OPENBLAS_CORETYPE.
  static void choose_core() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
      setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
      setenv("OPENBLAS_CORETYPE", "Haswell", 0);
    }
  }

  bool load() {
    choose_core();
    for (const char* name : {"libopenblas.so.0", "libopenblas.so"}) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle) break;
    }
    if (!handle) return false;
    sgemm = reinterpret_cast<SgemmFn>(dlsym(handle, "cblas_sgemm"));
    set_threads = reinterpret_cast<SetThreadsFn>(dlsym(handle, "openblas_set_num_threads"));
    if (auto corename = reinterpret_cast<char* (*)()>(dlsym(handle, "openblas_get_corename"))) {
      std::fprintf(stderr, "bench_gemm: OpenBLAS core %s\n", corename());
    }
    return sgemm != nullptr;
  }
};

// What "theirs" is: OpenBLAS, attnfc on another kernel path, or nothing.
struct Reference {
  const char* name = nullptr;  // null: no reference
  const OpenBlas* blas = nullptr;
  attnfc::kernels::Isa isa{};  // when blas is null

  // Median seconds of f() with the reference's kernel path active.
  template <class F>
  double time(F&& f, double budget) const {
    if (blas) return bench::time_median(f, budget);
    const attnfc::kernels::Isa ours = attnfc::kernels::active_isa();
    attnfc::kernels::set_isa(isa);
    const double t = bench::time_median(f, budget);
    attnfc::kernels::set_isa(ours);
    return t;
  }
  void gemm(bool tA, bool tB, int M, int N, int K, const float* A, int lda, const float* B, int ldb,
            float* C, int ldc) const {
    if (blas) {
      blas->sgemm(101, tA ? 112 : 111, tB ? 112 : 111, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
    } else {
      attnfc::kernels::gemm(tA, tB, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
    }
  }
};

Reference choose_reference(const bench::Options& opt, OpenBlas& blas) {
  Reference ref;
  if (!opt.ref_isa.empty()) {
    const auto isa = attnfc::kernels::isa_from_name(opt.ref_isa);
    if (!isa || !attnfc::kernels::isa_supported(*isa)) {
      std::fprintf(stderr, "bench_gemm: --ref-isa '%s' is not a path this cpu runs\n",
                   opt.ref_isa.c_str());
      std::exit(2);
    }
    ref.isa = *isa;
    ref.name = attnfc::kernels::isa_name(*isa);
    return ref;
  }
  if (!blas.load()) {
    std::fprintf(stderr, "bench_gemm: libopenblas.so.0 not found; OpenBLAS ratio skipped\n");
    return ref;
  }
  if (blas.set_threads) blas.set_threads(opt.threads);
  ref.blas = &blas;
  ref.name = "openblas";
  return ref;
}

struct Shape {
  int M, N, K;
  const char* only_mode = nullptr;  // null: NN, NT and TN
};

// Both libraries keep their worker threads spinning for a while after a call; pause
// when switching so one library's spinning threads do not steal the other's cores.
void let_threads_settle() {
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

// The two sides alternate in short rounds, the order swapped every round, so that a
// change of load on a shared machine hits both about equally (one long block each let a
// neighbour's burst land on one side only). Each side's figure is the median over its
// rounds. Whichever runs first on fresh buffers pays for their first touch; the first
// order alternates from case to case (case_index).
template <class Ours, class Theirs>
void time_rounds(const Reference& ref, Ours&& run_ours, Theirs&& run_theirs, double budget,
                 int case_index, double& ours, double& theirs) {
  constexpr int kRounds = 4;
  std::vector<double> ours_t, theirs_t;
  for (int r = 0; r < kRounds; ++r) {
    if ((r + case_index) % 2 == 0) {
      ours_t.push_back(bench::time_median(run_ours, budget / kRounds));
      let_threads_settle();
      theirs_t.push_back(ref.time(run_theirs, budget / kRounds));
    } else {
      theirs_t.push_back(ref.time(run_theirs, budget / kRounds));
      let_threads_settle();
      ours_t.push_back(bench::time_median(run_ours, budget / kRounds));
    }
    let_threads_settle();
  }
  ours = bench::median(ours_t);
  theirs = bench::median(theirs_t);
}

// Attention-sized batches: 1024 independent NT products of 64x64x32 (S = Q K^T per
// head and tile). OpenBLAS has no batched call, so its reference is a loop.
void bench_batched(const bench::Options& opt, const Reference& ref) {
  const int M = 64, N = 64, K = 32, batch = 1024;
  const std::string name = "batched NT 1024x(64x64x32)";
  if (!bench::selected(opt, name)) return;
  std::vector<float> A(static_cast<size_t>(batch) * M * K), B(static_cast<size_t>(batch) * N * K),
      C(static_cast<size_t>(batch) * M * N);
  bench::fill_random(A.data(), A.size(), 3);
  bench::fill_random(B.data(), B.size(), 4);
  const double flops = 2.0 * M * N * K * batch;
  auto run_ours = [&] {
    attnfc::kernels::gemm_strided_batched(false, true, M, N, K, 1.0f, A.data(), K, M * K, B.data(),
                                          K, N * K, 0.0f, C.data(), N, M * N, batch);
  };
  if (!ref.name) {
    bench::emit("gemm", name, "GFLOP/s",
                flops / bench::time_median(run_ours, opt.min_seconds) * 1e-9);
    return;
  }
  auto run_theirs = [&] {
    if (!ref.blas) return run_ours();  // attnfc's batched call on the reference path
    for (int b = 0; b < batch; ++b) {
      ref.gemm(false, true, M, N, K, A.data() + b * M * K, K, B.data() + b * N * K, K,
               C.data() + b * M * N, N);
    }
  };
  double ours = 0, theirs = 0;
  time_rounds(ref, run_ours, run_theirs, opt.min_seconds, 0, ours, theirs);
  bench::emit("gemm", name, "GFLOP/s", flops / ours * 1e-9, ref.name, flops / theirs * 1e-9);
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Options opt = bench::parse_args(argc, argv);
  OpenBlas blas;
  const Reference ref = choose_reference(opt, blas);
  std::fprintf(stderr, "bench_gemm: kernels %s, reference %s\n",
               attnfc::kernels::isa_name(attnfc::kernels::active_isa()),
               ref.name ? ref.name : "none");

  const Shape shapes[] = {{512, 512, 512},
                          {1024, 1024, 1024},
                          {4096, 384, 128},
                          {4096, 128, 128},
                          {4096, 512, 128},
                          {4096, 128, 512},
                          // The weight gradients of the model's linear layers (dW = dY^T X
                          // over 4096 tokens): few rows, long K.
                          {384, 128, 4096, "TN"},
                          {128, 512, 4096, "TN"}};
  const attnfc::kernels::Isa isa = attnfc::kernels::active_isa();
  bool wants_peak = bench::selected(opt, "FMA peak");
  for (const char* mode : {"NN", "NT", "TN"}) {
    wants_peak = wants_peak || bench::selected(opt, std::string(mode) + " 1024x1024x1024");
  }
  const double peak = wants_peak ? bench::fma_peak_gflops(isa, opt.threads) : 0.0;
  if (peak > 0 && bench::selected(opt, "FMA peak")) {
    bench::emit("gemm", std::string("FMA peak ") + attnfc::kernels::isa_name(isa), "GFLOP/s", peak);
  }
  const char* modes[] = {"NN", "NT", "TN"};
  int case_index = 0;
  for (const Shape& s : shapes) {
    // Every operand is stored densely for its transpose; sizes do not depend on it.
    std::vector<float> A(static_cast<size_t>(s.M) * s.K), B(static_cast<size_t>(s.K) * s.N),
        C(static_cast<size_t>(s.M) * s.N);
    bench::fill_random(A.data(), A.size(), 1);
    bench::fill_random(B.data(), B.size(), 2);
    for (const char* mode : modes) {
      if (s.only_mode && std::string(s.only_mode) != mode) continue;
      const bool tA = mode[0] == 'T', tB = mode[1] == 'T';
      const std::string name = std::string(mode) + " " + std::to_string(s.M) + "x" +
                               std::to_string(s.N) + "x" + std::to_string(s.K);
      if (!bench::selected(opt, name)) continue;
      const int lda = tA ? s.M : s.K, ldb = tB ? s.K : s.N, ldc = s.N;
      const double flops = 2.0 * s.M * s.N * s.K;
      auto run_ours = [&] {
        attnfc::kernels::gemm(tA, tB, s.M, s.N, s.K, 1.0f, A.data(), lda, B.data(), ldb, 0.0f,
                              C.data(), ldc);
      };
      const bool square_1024 = s.M == 1024 && s.N == 1024 && s.K == 1024;
      if (!ref.name) {
        const double ours = bench::time_median(run_ours, opt.min_seconds);
        bench::emit("gemm", name, "GFLOP/s", flops / ours * 1e-9);
        if (peak > 0 && square_1024) {
          bench::emit("gemm", name, "fraction of FMA peak", flops / ours * 1e-9 / peak);
        }
        continue;
      }
      auto run_theirs = [&] {
        ref.gemm(tA, tB, s.M, s.N, s.K, A.data(), lda, B.data(), ldb, C.data(), ldc);
      };
      double ours = 0, theirs = 0;
      time_rounds(ref, run_ours, run_theirs, opt.min_seconds, case_index++, ours, theirs);
      bench::emit("gemm", name, "GFLOP/s", flops / ours * 1e-9, ref.name, flops / theirs * 1e-9);
      if (peak > 0 && square_1024) {
        bench::emit("gemm", name, "fraction of FMA peak", flops / ours * 1e-9 / peak, ref.name,
                    flops / theirs * 1e-9 / peak);
      }
    }
  }
  bench_batched(opt, ref);
  return 0;
}
