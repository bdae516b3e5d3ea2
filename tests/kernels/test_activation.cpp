#include <doctest/doctest.h>

#include <vector>

#include "attnfc/kernels/activation.hpp"
#include "kernel_test_util.hpp"

using namespace attnfc;
using namespace attnfc::kernels;
using attnfc::test::ThreadCount;

TEST_CASE("GELU forward / backward match the reference; 1 and 2 threads agree") {
  for (int64_t n : {1, 7, 33, 129, 257, 70001}) {
    for (bool tanh_approx : {true, false}) {
      CAPTURE(n);
      CAPTURE(tanh_approx);
      auto x = test::randn(n, static_cast<uint32_t>(n), 3.0f);
      if (n > 6) x[1] = 0.0f, x[2] = -12.0f, x[3] = 12.0f, x[4] = -60.0f, x[5] = 1e-6f;
      const auto dy = test::randn(n, 99), dx0 = test::randn(n, 98);
      std::vector<float> yr(n), y1(n), y2(n);
      auto dr = dx0, d1 = dx0, d2 = dx0;
      gelu_forward_reference(x.data(), yr.data(), n, tanh_approx);
      gelu_backward_reference(x.data(), dy.data(), dr.data(), n, tanh_approx);
      {
        ThreadCount t(1);
        gelu_forward(x.data(), y1.data(), n, tanh_approx);
        gelu_backward(x.data(), dy.data(), d1.data(), n, tanh_approx);
      }
      {
        ThreadCount t(2);
        gelu_forward(x.data(), y2.data(), n, tanh_approx);
        gelu_backward(x.data(), dy.data(), d2.data(), n, tanh_approx);
      }
      test::all_close(y1, yr, 1e-6, 1e-5, "gelu");
      test::all_close(d1, dr, 2e-6, 2e-5, "gelu backward");
      CHECK(test::bit_equal(y1, y2));
      CHECK(test::bit_equal(d1, d2));
    }
  }
}

TEST_CASE("GELU backward agrees with central differences; the other form's derivative is caught") {
  auto x = test::randn(64, 7, 2.0f);
  const auto w = test::randn(64, 8);
  for (bool tanh_approx : {true, false}) {
    CAPTURE(tanh_approx);
    std::vector<float> y(x.size());
    auto loss = [&] {
      gelu_forward(x.data(), y.data(), static_cast<int64_t>(x.size()), tanh_approx);
      return test::weighted_sum(y, w);
    };
    std::vector<float> dx(x.size(), 0.0f), other(x.size(), 0.0f);
    gelu_backward(x.data(), w.data(), dx.data(), static_cast<int64_t>(x.size()), tanh_approx);
    CHECK(test::gradient_error(x, loss, dx, 1e-2f) < 1e-3);
    // A plausible bug: the derivative of x * Phi(x) without the x * phi(x) term.
    for (size_t i = 0; i < x.size(); ++i) {
      std::vector<float> yi(1);
      gelu_forward(&x[i], yi.data(), 1, tanh_approx);
      other[i] = (x[i] != 0.0f ? yi[0] / x[i] : 0.5f) * w[i];
    }
    CHECK(test::gradient_error(x, loss, other, 1e-2f) > 5e-2);
  }
}
