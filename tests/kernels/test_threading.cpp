#include <doctest/doctest.h>

#include <omp.h>
#include <unistd.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include <cstdlib>
#include <string>
#include <vector>

#include "attnfc/kernels/softmax.hpp"
#include "attnfc/kernels/threading.hpp"
#include "kernel_test_util.hpp"

using namespace attnfc::kernels;

namespace {
// Sets or unsets an environment variable for one scope.
struct EnvVar {
  std::string name;
  std::string saved;
  bool had;
  EnvVar(const char* n, const char* value) : name(n) {
    const char* old = std::getenv(n);
    had = old != nullptr;
    if (had) saved = old;
    if (value)
      setenv(n, value, 1);
    else
      unsetenv(n);
  }
  ~EnvVar() {
    if (had)
      setenv(name.c_str(), saved.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};
}  // namespace

TEST_CASE("physical_cores is between 1 and the logical CPU count, and stable") {
  const int cores = physical_cores();
  CHECK(cores >= 1);
  CHECK(cores <= static_cast<int>(sysconf(_SC_NPROCESSORS_CONF)));
  CHECK(physical_cores() == cores);
}

TEST_CASE("default_threads honours OMP_NUM_THREADS, else physical cores") {
  {
    EnvVar e("OMP_NUM_THREADS", "3");
    CHECK(default_threads() == 3);
  }
  {
    EnvVar e("OMP_NUM_THREADS", "2,1");  // a nesting list: its first level counts
    CHECK(default_threads() == 2);
  }
  for (const char* junk : {"", "zero", "0", "-4", "99999999999999"}) {
    EnvVar e("OMP_NUM_THREADS", junk);
    CHECK(default_threads() == physical_cores());
  }
  {
    EnvVar e("OMP_NUM_THREADS", nullptr);
    CHECK(default_threads() == physical_cores());
  }
}

TEST_CASE("set_threads sets current_threads; 0 restores the default") {
  set_threads(3);
  CHECK(current_threads() == 3);
  set_threads(1);
  CHECK(current_threads() == 1);
  set_threads(0);
  CHECK(current_threads() == default_threads());
  set_threads(-2);
  CHECK(current_threads() == default_threads());
}

TEST_CASE("threads are attnfc's to adapt only when the user chose no count") {
  {
    EnvVar e("OMP_NUM_THREADS", nullptr);
    set_threads_automatic();
    CHECK(threads_automatic());
    CHECK(current_threads() == physical_cores());
    set_threads(1);  // --threads 1
    CHECK_FALSE(threads_automatic());
  }
  {
    EnvVar e("OMP_NUM_THREADS", "1");
    set_threads_automatic();
    CHECK_FALSE(threads_automatic());
    CHECK(current_threads() == 1);
  }
  set_threads(0);
}

#if defined(__SSE__)
TEST_CASE("enable_flush_to_zero sets FTZ and DAZ, and kernels set them in their threads") {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved & ~0x8040u);
  enable_flush_to_zero();
  CHECK((_mm_getcsr() & 0x8040u) == 0x8040u);
  volatile float denormal = 1e-40f;
  volatile float product = denormal * 1.0f;
  CHECK(product == 0.0f);  // DAZ: the denormal input reads as zero

  // Every thread of a kernel's team runs with FTZ/DAZ: after a parallel softmax,
  // the pool threads (reused by the next region) still have the bits set.
  attnfc::test::ThreadCount t(2);
  const int rows = 256, cols = 256;
  std::vector<float> x(rows * cols, 0.5f), y(x.size());
  softmax_forward(x.data(), y.data(), rows, cols);
  int with_ftz = 0, threads = 0;
#pragma omp parallel num_threads(2) reduction(+ : with_ftz, threads)
  {
    threads += 1;
    with_ftz += (_mm_getcsr() & 0x8040u) == 0x8040u ? 1 : 0;
  }
  CHECK(with_ftz == threads);
  _mm_setcsr(saved);
}
#endif
