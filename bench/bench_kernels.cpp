// Throughput of the non-GEMM kernels next to their plain references, measured in the
// same process: softmax and layernorm rows (Gelem/s), and fused attention forward +
// backward (ms) with its peak attention-state memory (MiB) at growing L.
#include <malloc.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attnfc/kernels/attention.hpp"
#include "attnfc/kernels/layernorm.hpp"
#include "attnfc/kernels/softmax.hpp"
#include "bench_util.hpp"

namespace ak = attnfc::kernels;

namespace {

void bench_softmax(const bench::Options& opt) {
  const int rows = 4096, cols = 256;
  const std::string name = "rows " + std::to_string(rows) + "x" + std::to_string(cols);
  if (!bench::selected(opt, "softmax " + name)) return;
  std::vector<float> x(static_cast<size_t>(rows) * cols), y(x.size()), dy(x.size()), dx(x.size());
  bench::fill_random(x.data(), x.size(), 11);
  bench::fill_random(dy.data(), dy.size(), 12);
  const double elems = static_cast<double>(rows) * cols * 1e-9;
  const double fwd = bench::time_median(
      [&] { ak::softmax_forward(x.data(), y.data(), rows, cols); }, opt.min_seconds);
  const double fwd_ref = bench::time_median(
      [&] { ak::softmax_forward_reference(x.data(), y.data(), rows, cols); }, opt.min_seconds);
  bench::emit("softmax", "forward " + name, "Gelem/s", elems / fwd, "reference", elems / fwd_ref);
  const double bwd = bench::time_median(
      [&] { ak::softmax_backward(y.data(), dy.data(), dx.data(), rows, cols); }, opt.min_seconds);
  const double bwd_ref = bench::time_median(
      [&] { ak::softmax_backward_reference(y.data(), dy.data(), dx.data(), rows, cols); },
      opt.min_seconds);
  bench::emit("softmax", "backward " + name, "Gelem/s", elems / bwd, "reference", elems / bwd_ref);
}

void bench_layernorm(const bench::Options& opt) {
  const int rows = 4096, C = 128;  // the model's token count x width
  const std::string name = "rows " + std::to_string(rows) + "x" + std::to_string(C);
  if (!bench::selected(opt, "layernorm " + name)) return;
  const size_t n = static_cast<size_t>(rows) * C;
  std::vector<float> x(n), y(n), dy(n), dx(n), gamma(C), beta(C), dgamma(C), dbeta(C);
  std::vector<float> mean(rows), rstd(rows);
  bench::fill_random(x.data(), n, 21);
  bench::fill_random(dy.data(), n, 22);
  bench::fill_random(gamma.data(), C, 23);
  bench::fill_random(beta.data(), C, 24);
  const double elems = static_cast<double>(n) * 1e-9;
  auto fwd = [&](bool ref) {
    (ref ? ak::layernorm_forward_reference : ak::layernorm_forward)(
        x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), rows, C, 1e-5f);
  };
  auto bwd = [&](bool ref) {
    (ref ? ak::layernorm_backward_reference : ak::layernorm_backward)(
        dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx.data(), dgamma.data(),
        dbeta.data(), rows, C);
  };
  const double f = bench::time_median([&] { fwd(false); }, opt.min_seconds);
  const double fr = bench::time_median([&] { fwd(true); }, opt.min_seconds);
  bench::emit("layernorm", "forward " + name, "Gelem/s", elems / f, "reference", elems / fr);
  const double b = bench::time_median([&] { bwd(false); }, opt.min_seconds);
  const double br = bench::time_median([&] { bwd(true); }, opt.min_seconds);
  bench::emit("layernorm", "backward " + name, "Gelem/s", elems / b, "reference", elems / br);
}

// Resident-memory high-water mark: /proc/self/clear_refs "5" resets VmHWM to the
// current RSS, so the growth during one call is the memory that call needed beyond
// the caller's buffers (all allocated and touched beforehand).
long status_kib(const char* key) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long v = -1;
  const size_t klen = std::strlen(key);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, key, klen) == 0 && line[klen] == ':') {
      v = std::atol(line + klen + 1);
      break;
    }
  }
  std::fclose(f);
  return v;
}

bool reset_peak_rss() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

struct AttnBuffers {
  std::vector<float> Q, K, V, O, lse, dO, dQ, dK, dV;
  explicit AttnBuffers(int L, int D) {
    const size_t n = static_cast<size_t>(L) * D;
    for (auto* v : {&Q, &K, &V, &O, &dO, &dQ, &dK, &dV}) v->assign(n, 0.0f);
    lse.assign(L, 0.0f);
    bench::fill_random(Q.data(), n, 31);
    bench::fill_random(K.data(), n, 32);
    bench::fill_random(V.data(), n, 33);
    bench::fill_random(dO.data(), n, 34);
  }
  void run(const ak::AttnParams& p, bool reference) {
    if (reference) {
      ak::attention_forward_reference(p, Q.data(), K.data(), V.data(), O.data(), lse.data());
      ak::attention_backward_reference(p, Q.data(), K.data(), V.data(), O.data(), lse.data(),
                                       dO.data(), dQ.data(), dK.data(), dV.data());
    } else {
      ak::attention_forward(p, Q.data(), K.data(), V.data(), O.data(), lse.data());
      ak::attention_backward(p, Q.data(), K.data(), V.data(), O.data(), lse.data(), dO.data(),
                             dQ.data(), dK.data(), dV.data());
    }
  }
  // Peak attention state of one forward + backward in MiB: resident growth during the
  // call plus the saved logsumexp. Negative when /proc does not allow the measurement.
  double state_mib(const ak::AttnParams& p, bool reference) {
    if (!reset_peak_rss()) return -1.0;
    const long before = status_kib("VmRSS");
    run(p, reference);
    const long peak = status_kib("VmHWM");
    if (before < 0 || peak < 0) return -1.0;
    return (static_cast<double>(peak - before) * 1024.0 + lse.size() * sizeof(float)) /
           (1024.0 * 1024.0);
  }
};

void bench_attention(const bench::Options& opt, int ref_max_L, double max_seconds) {
  const int D = 64;
  const int lengths[] = {256, 1024, 4096, 16384};
  for (int L : lengths) {
    const std::string name = "causal L=" + std::to_string(L) + " d=" + std::to_string(D);
    if (!bench::selected(opt, "attention " + name)) continue;
    ak::AttnParams p;
    p.Lq = p.Lk = L;
    p.head_dim = D;
    p.scale = 0.125f;  // 1/sqrt(64)
    p.causal = true;
    p.q = p.k = p.v = p.o = ak::contiguous_layout(1, L, D);
    AttnBuffers buf(L, D);
    const bool with_ref = L <= ref_max_L;
    // Memory first: the first call also counts any scratch a kernel allocates once.
    const double mem = buf.state_mib(p, false);
    const double mem_ref = with_ref ? buf.state_mib(p, true) : -1.0;
    const double t = bench::time_median([&] { buf.run(p, false); }, opt.min_seconds, 3);
    const double t_ref =
        with_ref ? bench::time_median([&] { buf.run(p, true); }, opt.min_seconds, 3) : -1.0;
    if (with_ref) {
      bench::emit("attention", name, "fwd+bwd ms", t * 1e3, "reference", t_ref * 1e3);
    } else {
      bench::emit("attention", name, "fwd+bwd ms", t * 1e3);
    }
    if (mem >= 0) {
      if (with_ref && mem_ref >= 0) {
        bench::emit("attention", name, "state MiB", mem, "reference", mem_ref);
      } else {
        bench::emit("attention", name, "state MiB", mem);
      }
    }
    // Each step quadruples the work: stop before a case would blow the time budget.
    if (L != lengths[3] && t * 16.0 > max_seconds) {
      std::fprintf(stderr, "bench_kernels: skipping attention beyond L=%d (%.1f s per call)\n", L,
                   t);
      break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Return large freed blocks to the system at once so that the resident-memory
  // measurements of one case are not hidden by memory freed by the previous one.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  mallopt(M_TRIM_THRESHOLD, 128 * 1024);
  const bench::Options opt = bench::parse_args(argc, argv);
  bench_softmax(opt);
  bench_layernorm(opt);
  bench_attention(opt, /*ref_max_L=*/1024, /*max_seconds=*/20.0);
  return 0;
}
