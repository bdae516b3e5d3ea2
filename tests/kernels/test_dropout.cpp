// Dropout kernels against the one-element-at-a-time reference on random_uniform: the
// same kept/dropped pattern at awkward sizes (vector body and scalar tail, one chunk
// and many), the same bits (no FMA contraction on either side), at 1 and 2 threads.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "attnfc/kernels/dropout.hpp"
#include "attnfc/kernels/random.hpp"
#include "kernel_test_util.hpp"

using namespace attnfc;
using namespace attnfc::kernels;
using attnfc::test::bit_equal;
using attnfc::test::randn;
using attnfc::test::ThreadCount;

TEST_CASE("uniform_threshold24 gives the same decision as random_uniform >= p") {
  for (float p : {0.0f, 1e-9f, 0.1f, 0.3f, 0.5f, 0.999f, 1.0f}) {
    const uint32_t t = uniform_threshold24(p);
    for (uint64_t c = 0; c < 20000; ++c) {
      const bool want = random_uniform(11, c) >= p;
      if ((uniform_bits24(seed_state(11), c) >= t) != want) {
        FAIL("p = " << p << ", counter " << c);
      }
    }
  }
}

TEST_CASE("dropout kernels match the reference, at 1 and 2 threads") {
  for (int64_t n : {1, 7, 15, 16, 33, 129, 257, 8193, 70001}) {
    CAPTURE(n);
    const auto x = randn(static_cast<size_t>(n), 1), r = randn(static_cast<size_t>(n), 2);
    const auto dy = randn(static_cast<size_t>(n), 3), dx0 = randn(static_cast<size_t>(n), 4);
    for (float p : {0.1f, 0.5f}) {
      for (const float* res : {static_cast<const float*>(nullptr), r.data()}) {
        std::vector<float> want(x.size()), got1(x.size()), got2(x.size());
        dropout_forward_reference(x.data(), res, want.data(), n, 99, p);
        {
          ThreadCount one(1);
          dropout_forward(x.data(), res, got1.data(), n, 99, p);
        }
        {
          ThreadCount two(2);
          dropout_forward(x.data(), res, got2.data(), n, 99, p);
        }
        CHECK(bit_equal(got1, got2));
        CHECK(bit_equal(got1, want));
        if (!res) {
          for (int64_t i = 0; i < n; ++i) {
            if ((got1[i] == 0.0f) != (want[i] == 0.0f)) FAIL("mask differs at " << i);
          }
        }
      }
      std::vector<float> want = dx0, got1 = dx0, got2 = dx0;
      dropout_backward_reference(dy.data(), want.data(), n, 5, p);
      {
        ThreadCount one(1);
        dropout_backward(dy.data(), got1.data(), n, 5, p);
      }
      {
        ThreadCount two(2);
        dropout_backward(dy.data(), got2.data(), n, 5, p);
      }
      CHECK(bit_equal(got1, got2));
      CHECK(bit_equal(got1, want));
      int untouched = 0;
      for (int64_t i = 0; i < n; ++i) untouched += got1[i] == dx0[i];
      CHECK(untouched > 0.8 * p * n - 5);  // dropped elements keep their value
    }
  }
}
