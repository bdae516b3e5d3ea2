// The gradient checker must be able to fail: ops with deliberately wrong backwards
// (a missing transpose, a factor of 2, an error of only 1%) are all rejected, while
// the same ops with the correct backward pass. Written with the public engine API
// (attnfc/autograd/engine.hpp), the way any custom op is.
#include <doctest/doctest.h>

#include <vector>

#include "attnfc/autograd/engine.hpp"
#include "attnfc/kernels/gemm.hpp"
#include "gradcheck.hpp"

using namespace attnfc;
using ag::Tensor;

namespace {

// C[M, N] = A[M, K] . B[K, N] for contiguous 2-d tensors.
// iarg[0] selects the backward: 0 correct, 1 dA misses the transpose of B (square B).
void product_backward(const ag::TensorNode& n) {
  const Tensor &A = n.in[0], &B = n.in[1];
  const int M = static_cast<int>(A.size(0)), K = static_cast<int>(A.size(1));
  const int N = static_cast<int>(B.size(1));
  const bool wrong = n.iarg[0] == 1;
  // dA = dC . B^T  (the buggy version uses B itself: same shape when B is square)
  kernels::gemm(false, !wrong, M, K, N, 1.0f, n.out.grad(), N, B.data(), N, 1.0f, A.grad(), K);
  kernels::gemm(true, false, K, N, M, 1.0f, A.data(), K, n.out.grad(), N, 1.0f, B.grad(), N);
}

Tensor product(const Tensor& A, const Tensor& B, int variant) {
  ag::TensorNode* node;
  Tensor C = ag::make_output(ag::Shape{A.size(0), B.size(1)}, "test_product", product_backward,
                             {&A, &B}, &node);
  kernels::gemm(false, false, static_cast<int>(A.size(0)), static_cast<int>(B.size(1)),
                static_cast<int>(A.size(1)), 1.0f, A.data(), static_cast<int>(A.size(1)), B.data(),
                static_cast<int>(B.size(1)), 0.0f, C.data(), static_cast<int>(B.size(1)));
  if (node) {
    node->in[0] = A;
    node->in[1] = B;
    node->iarg[0] = variant;
  }
  return C;
}

// y = x^3 elementwise; backward 3 x^2 dy * farg[0] (1 is correct).
void cube_backward(const ag::TensorNode& n) {
  const Tensor& x = n.in[0];
  for (int64_t i = 0; i < x.numel(); ++i) {
    x.grad()[i] += n.farg[0] * 3.0f * x.data()[i] * x.data()[i] * n.out.grad()[i];
  }
}

Tensor cube(const Tensor& x, float backward_factor) {
  ag::TensorNode* node;
  Tensor y = ag::make_output(x.shape(), "test_cube", cube_backward, {&x}, &node);
  for (int64_t i = 0; i < x.numel(); ++i) y.data()[i] = x.data()[i] * x.data()[i] * x.data()[i];
  if (node) {
    node->in[0] = x;
    node->farg[0] = backward_factor;
  }
  return y;
}

}  // namespace

TEST_CASE("gradcheck catches a missing transpose") {
  ag::ParameterSet ps;
  const Tensor A = test::leaf(ps, {3, 7}, -1, 1, 1);
  const Tensor B = test::leaf(ps, {7, 7}, -1, 1, 2);
  const auto good = test::grad_check({A, B}, [&] { return product(A, B, 0); });
  CHECK(good.ok);
  const auto bad = test::grad_check({A, B}, [&] { return product(A, B, 1); });
  CHECK_FALSE(bad.ok);
  CHECK(bad.worst_ratio > 10.0);
}

TEST_CASE("gradcheck catches a factor of 2 and a 1% error") {
  ag::ParameterSet ps;
  const Tensor x = test::leaf(ps, {33}, -1.5f, 1.5f, 3);
  test::keep_away(x, 0.0f, 0.25f);  // keep 3x^2 well above the absolute tolerance
  const auto good = test::grad_check({x}, [&] { return cube(x, 1.0f); });
  INFO(good.worst);
  CHECK(good.ok);
  CHECK(good.worst_ratio < 0.5);  // the correct backward passes with margin
  CHECK_FALSE(test::grad_check({x}, [&] { return cube(x, 2.0f); }).ok);
  CHECK_FALSE(test::grad_check({x}, [&] { return cube(x, 1.01f); }).ok);
  CHECK_FALSE(test::grad_check({x}, [&] { return cube(x, 0.99f); }).ok);
}
