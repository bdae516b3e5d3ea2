#include <doctest/doctest.h>

#include <vector>

#include "attnfc/kernels/layernorm.hpp"
#include "kernel_test_util.hpp"

using namespace attnfc;
using namespace attnfc::kernels;
using attnfc::test::ThreadCount;

namespace {
const int kSizes[] = {1, 7, 33, 129, 257};
}

TEST_CASE("layernorm forward matches the reference; 1 and 2 threads agree") {
  for (int rows : kSizes) {
    for (int C : kSizes) {
      for (bool with_beta : {true, false}) {
        CAPTURE(rows);
        CAPTURE(C);
        CAPTURE(with_beta);
        const size_t n = static_cast<size_t>(rows) * C;
        auto x = test::randn(n, rows + 3 * C, 2.0f);
        for (size_t i = 0; i < n; ++i) x[i] += 5.0f;  // an offset that tests the variance pass
        const auto gamma = test::randn(C, 1), beta = test::randn(C, 2);
        const float* b = with_beta ? beta.data() : nullptr;
        std::vector<float> y0(n), m0(rows), s0(rows), y1(n), m1(rows), s1(rows), y2(n), m2(rows),
            s2(rows);
        layernorm_forward_reference(x.data(), gamma.data(), b, y0.data(), m0.data(), s0.data(),
                                    rows, C, 1e-5f);
        {
          ThreadCount t(1);
          layernorm_forward(x.data(), gamma.data(), b, y1.data(), m1.data(), s1.data(), rows, C,
                            1e-5f);
        }
        {
          ThreadCount t(2);
          layernorm_forward(x.data(), gamma.data(), b, y2.data(), m2.data(), s2.data(), rows, C,
                            1e-5f);
        }
        test::all_close(y1, y0, 2e-5, 2e-5, "y");
        test::all_close(m1, m0, 1e-6, 1e-6, "mean");
        test::all_close(s1, s0, 1e-6, 2e-5, "rstd");
        CHECK(test::bit_equal(y1, y2));
        CHECK(test::bit_equal(m1, m2));
        CHECK(test::bit_equal(s1, s2));
      }
    }
  }
}

TEST_CASE("layernorm backward matches the reference, accumulates; 1 and 2 threads agree") {
  for (int rows : kSizes) {
    for (int C : kSizes) {
      CAPTURE(rows);
      CAPTURE(C);
      const size_t n = static_cast<size_t>(rows) * C;
      const auto x = test::randn(n, 31 + rows), dy = test::randn(n, 32 + C);
      const auto gamma = test::randn(C, 3);
      std::vector<float> y(n), mean(rows), rstd(rows);
      layernorm_forward_reference(x.data(), gamma.data(), nullptr, y.data(), mean.data(),
                                  rstd.data(), rows, C, 1e-5f);
      const auto dx0 = test::randn(n, 4), dg0 = test::randn(C, 5), db0 = test::randn(C, 6);
      auto dxr = dx0, dgr = dg0, dbr = db0;
      layernorm_backward_reference(dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(),
                                   dxr.data(), dgr.data(), dbr.data(), rows, C);
      std::vector<float> dx[2], dg[2], db[2];
      for (int t = 0; t < 2; ++t) {
        ThreadCount tc(t + 1);
        dx[t] = dx0, dg[t] = dg0, db[t] = db0;
        layernorm_backward(dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(),
                           dx[t].data(), dg[t].data(), db[t].data(), rows, C);
      }
      test::all_close(dx[0], dxr, 2e-5, 1e-4, "dx");
      test::all_close(dg[0], dgr, 2e-5, 1e-4, "dgamma");
      test::all_close(db[0], dbr, 2e-5, 1e-4, "dbeta");
      CHECK(test::bit_equal(dx[0], dx[1]));
      CHECK(test::bit_equal(dg[0], dg[1]));
      CHECK(test::bit_equal(db[0], db[1]));
      // Without parameter gradients only dx is produced, and it is the same.
      auto dx_only = dx0;
      layernorm_backward(dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(),
                         dx_only.data(), nullptr, nullptr, rows, C);
      CHECK(test::bit_equal(dx_only, dx[0]));
    }
  }
}

TEST_CASE("layernorm backward agrees with central differences; a wrong backward is caught") {
  const int rows = 5, C = 19;
  auto x = test::randn(rows * C, 41), gamma = test::randn(C, 42), beta = test::randn(C, 43);
  const auto w = test::randn(rows * C, 44);
  std::vector<float> y(x.size()), mean(rows), rstd(rows);
  auto loss = [&] {
    layernorm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), rows,
                      C, 1e-5f);
    return test::weighted_sum(y, w);
  };
  loss();
  std::vector<float> dx(x.size(), 0.0f), dg(C, 0.0f), db(C, 0.0f);
  layernorm_backward(w.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx.data(),
                     dg.data(), db.data(), rows, C);
  CHECK(test::gradient_error(x, loss, dx, 1e-2f) < 3e-3);
  CHECK(test::gradient_error(gamma, loss, dg, 1e-2f) < 3e-3);
  CHECK(test::gradient_error(beta, loss, db, 1e-2f) < 3e-3);
  // Dropping the mean-of-g term (a classic slip) must be detected.
  std::vector<float> wrong(x.size());
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < C; ++c) wrong[r * C + c] = w[r * C + c] * gamma[c] * rstd[r];
  }
  CHECK(test::gradient_error(x, loss, wrong, 1e-2f) > 5e-2);
}
