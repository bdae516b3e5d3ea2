#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "attnfc/kernels/softmax.hpp"
#include "kernel_test_util.hpp"

using namespace attnfc;
using namespace attnfc::kernels;
using attnfc::test::ThreadCount;

namespace {
const int kSoftmaxSizes[] = {1, 7, 33, 129, 257};

struct MaskCase {
  const char* name;
  RowMask mask;
};

std::vector<MaskCase> mask_cases(int rows, int cols, const std::vector<uint8_t>& pad) {
  std::vector<MaskCase> cases;
  cases.push_back({"none", {}});
  cases.push_back({"causal", RowMask{true, rows, 0, nullptr, 0}});
  // 7-row matrices, offset -2: the first two rows of each matrix see nothing.
  cases.push_back({"causal-7/-2", RowMask{true, 7, -2, nullptr, 0}});
  cases.push_back({"causal+offset", RowMask{true, rows, cols - rows, nullptr, 0}});
  const int per_group = (rows + 2) / 3;  // three groups; group 2 is fully padded
  cases.push_back({"padding", RowMask{false, 0, 0, pad.data(), per_group}});
  cases.push_back({"both", RowMask{true, 5, 1, pad.data(), per_group}});
  return cases;
}

std::vector<uint8_t> padding_for(int cols) {
  auto pad = test::random_mask(3 * static_cast<size_t>(cols), 17 + cols, 0.3);
  for (int j = 0; j < cols; ++j) pad[2 * cols + j] = 1;
  return pad;
}
}  // namespace

TEST_CASE("softmax forward matches the reference; masked rows are zeros; 1 and 2 threads agree") {
  for (int rows : kSoftmaxSizes) {
    for (int cols : kSoftmaxSizes) {
      auto x = test::randn(static_cast<size_t>(rows) * cols, rows * 1000 + cols, 3.0f);
      x[0] = -INFINITY;  // an explicit -inf entry behaves like a masked one
      const auto pad = padding_for(cols);
      for (const auto& mc : mask_cases(rows, cols, pad)) {
        CAPTURE(rows);
        CAPTURE(cols);
        CAPTURE(mc.name);
        std::vector<float> want(x.size()), y1(x.size()), y2(x.size(), 123.0f);
        softmax_forward_reference(x.data(), want.data(), rows, cols, mc.mask);
        {
          ThreadCount t(1);
          softmax_forward(x.data(), y1.data(), rows, cols, mc.mask);
        }
        {
          ThreadCount t(2);
          softmax_forward(x.data(), y2.data(), rows, cols, mc.mask);
        }
        test::all_close(y1, want, 2e-7, 4e-6, "softmax");
        CHECK(test::bit_equal(y1, y2));
        for (int r = 0; r < rows; ++r) {  // rows the reference zeroes must be exact zeros
          bool empty = true;
          for (int j = 0; j < cols; ++j) empty = empty && want[r * cols + j] == 0.0f;
          for (int j = 0; empty && j < cols; ++j) REQUIRE(y1[r * cols + j] == 0.0f);
        }
      }
    }
  }
}

TEST_CASE("softmax forward works in place and on all -inf rows") {
  const int rows = 33, cols = 129;
  auto x = test::randn(rows * cols, 5, 2.0f);
  for (int j = 0; j < cols; ++j) x[4 * cols + j] = -INFINITY;
  std::vector<float> want(x.size());
  softmax_forward_reference(x.data(), want.data(), rows, cols);
  softmax_forward(x.data(), x.data(), rows, cols);
  test::all_close(x, want, 2e-7, 4e-6, "in place");
  for (int j = 0; j < cols; ++j) CHECK(x[4 * cols + j] == 0.0f);
}

TEST_CASE("softmax backward matches the reference and accumulates; 1 and 2 threads agree") {
  for (int rows : kSoftmaxSizes) {
    for (int cols : kSoftmaxSizes) {
      CAPTURE(rows);
      CAPTURE(cols);
      const size_t n = static_cast<size_t>(rows) * cols;
      auto x = test::randn(n, 7 + rows, 2.0f), dy = test::randn(n, 9 + cols);
      const auto pad = padding_for(cols);
      const RowMask mask{true, rows, 3, pad.data(), (rows + 2) / 3};
      std::vector<float> y(n);
      softmax_forward_reference(x.data(), y.data(), rows, cols, mask);
      const auto init = test::randn(n, 11);
      auto want = init, d1 = init, d2 = init;
      softmax_backward_reference(y.data(), dy.data(), want.data(), rows, cols);
      {
        ThreadCount t(1);
        softmax_backward(y.data(), dy.data(), d1.data(), rows, cols);
      }
      {
        ThreadCount t(2);
        softmax_backward(y.data(), dy.data(), d2.data(), rows, cols);
      }
      test::all_close(d1, want, 2e-6, 1e-5, "softmax backward");
      CHECK(test::bit_equal(d1, d2));
    }
  }
}

TEST_CASE("softmax backward agrees with central differences, and a wrong backward is caught") {
  const int rows = 7, cols = 33;
  auto x = test::randn(rows * cols, 21);
  const auto w = test::randn(rows * cols, 22);
  const RowMask mask{true, rows, 20, nullptr, 0};
  std::vector<float> y(x.size());
  auto loss = [&] {
    softmax_forward(x.data(), y.data(), rows, cols, mask);
    return test::weighted_sum(y, w);
  };
  loss();
  std::vector<float> dx(x.size(), 0.0f), wrong(x.size(), 0.0f);
  softmax_backward(y.data(), w.data(), dx.data(), rows, cols);
  for (size_t i = 0; i < x.size(); ++i) wrong[i] = y[i] * w[i];  // forgets -<y, dy>
  CHECK(test::gradient_error(x, loss, dx, 1e-2f) < 2e-3);
  CHECK(test::gradient_error(x, loss, wrong, 1e-2f) > 5e-2);
}
