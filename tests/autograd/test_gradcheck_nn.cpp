// Gradient checks for softmax (all mask kinds), layernorm, dropout, fused attention
// and the masked losses.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "attnfc/autograd/ops.hpp"
#include "gradcheck.hpp"

using namespace attnfc;
using ag::Shape;
using ag::Tensor;
using test::grad_check;
using test::leaf;

TEST_CASE("gradcheck: softmax plain, transposed input, additive mask with -inf") {
  ag::ParameterSet ps;
  const Tensor x = leaf(ps, {3, 7}, -2, 2, 60);
  const Tensor m = leaf(ps, {7}, -1, 1, 61);  // a learned additive bias, broadcast over rows
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return ag::softmax(x); });
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return ag::softmax(x.transpose(0, 1)); });
  CHECK_GRADS((std::vector<Tensor>{x, m}), [&] { return ag::softmax(x, m); });
  std::vector<float> mask(7, 0.0f);
  mask[2] = mask[5] = -std::numeric_limits<float>::infinity();
  CHECK_GRADS((std::vector<Tensor>{x}), [&] {
    const Tensor am = ag::from_data({1, 7}, mask.data());
    const Tensor y = ag::softmax(x, am);
    CHECK(y.at({1, 2}) == 0.0f);
    return y;
  });
}

TEST_CASE("gradcheck: softmax with causal / key-padding row masks and a boolean mask") {
  ag::ParameterSet ps;
  const Tensor x = leaf(ps, {2, 3, 3}, -2, 2, 62);  // 2 matrices of 3 x 3
  const uint8_t pad[2 * 3] = {0, 0, 1, 0, 0, 0};
  kernels::RowMask rm;
  rm.causal = true;
  rm.rows_per_matrix = 3;
  rm.key_padding = pad;
  rm.rows_per_group = 3;
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return ag::softmax_masked(x, rm); });
  // A fully masked row (row 0 sees only column 0, which is not padded here) stays finite.
  const uint8_t bm[3 * 3] = {0, 1, 1, 0, 0, 1, 1, 1, 1};  // last row fully masked -> zeros
  CHECK_GRADS((std::vector<Tensor>{x}), [&] {
    const Tensor y = ag::softmax_bool_mask(x, bm, Shape{3, 3});
    CHECK(y.at({0, 2, 1}) == 0.0f);
    CHECK(y.at({1, 0, 0}) == doctest::Approx(1.0f));
    return y;
  });
}

TEST_CASE("gradcheck: layernorm with and without beta, on a permuted input") {
  ag::ParameterSet ps;
  const Tensor x = leaf(ps, {3, 33}, -2, 2, 70);
  const Tensor xp = leaf(ps, {7, 2, 3}, -2, 2, 71);
  const Tensor g = leaf(ps, {33}, 0.5f, 1.5f, 72);
  const Tensor b = leaf(ps, {33}, -0.5f, 0.5f, 73);
  const Tensor g7 = leaf(ps, {7}, 0.5f, 1.5f, 74);
  CHECK_GRADS((std::vector<Tensor>{x, g, b}), [&] { return ag::layernorm(x, g, b); });
  CHECK_GRADS((std::vector<Tensor>{x, g}), [&] { return ag::layernorm(x, g, Tensor{}); });
  CHECK_GRADS((std::vector<Tensor>{xp, g7}), [&] {
    return ag::layernorm(xp.permute({2, 1, 0}), g7, Tensor{}, 1e-3f);
  });
}

TEST_CASE("gradcheck: dropout is a fixed linear mask per seed") {
  ag::ParameterSet ps;
  const Tensor x = leaf(ps, {7, 33}, -1, 1, 80);
  CHECK_GRADS((std::vector<Tensor>{x}), [&] { return ag::dropout(x, 0.3f, 99, true); });
  CHECK_GRADS((std::vector<Tensor>{x}),
              [&] { return ag::dropout(x.transpose(0, 1), 0.5f, 7, true); });
}

TEST_CASE("gradcheck: fused attention, causal and padded, from a packed projection") {
  ag::ParameterSet ps;
  const int B = 2, L = 3, H = 2, D = 7;
  // A packed [B, L, 3, H, D] projection viewed as q, k, v [B, H, L, D] without copies:
  // reshape to [B, L, 3 * H, D] (4-d), slice the H heads of each part, permute.
  const Tensor qkv = leaf(ps, {B, L, 3 * H, D}, -1, 1, 90);
  auto part = [&](int i) { return qkv.slice(2, i * H, (i + 1) * H).permute({0, 2, 1, 3}); };
  const uint8_t pad[B * L] = {0, 0, 1, 0, 0, 0};
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    ag::SdpaOptions opt;
    opt.causal = causal;
    CHECK_GRADS((std::vector<Tensor>{qkv}),
                [&] { return ag::scaled_dot_product_attention(part(0), part(1), part(2), opt); });
    opt.key_padding = pad;
    CHECK_GRADS((std::vector<Tensor>{qkv}),
                [&] { return ag::scaled_dot_product_attention(part(0), part(1), part(2), opt); });
    // Output written heads-last ([B, L, H, D] in memory), read through its permuted view.
    opt.heads_last_output = true;
    CHECK_GRADS((std::vector<Tensor>{qkv}), [&] {
      const Tensor o = ag::scaled_dot_product_attention(part(0), part(1), part(2), opt);
      CHECK(o.permute({0, 2, 1, 3}).is_contiguous());
      return o;
    });
  }
  // Cross attention with Lq != Lk, explicit scale, and only k, v requiring grads.
  const Tensor q = leaf(ps, {1, 1, 1, 33}, -1, 1, 91);
  const Tensor kv = leaf(ps, {1, 1, 7, 33}, -1, 1, 92);
  ag::SdpaOptions opt;
  opt.scale = 0.3f;
  CHECK_GRADS((std::vector<Tensor>{q, kv}),
              [&] { return ag::scaled_dot_product_attention(q, kv, ag::scale(kv, 0.5f), opt); });
}

TEST_CASE("gradcheck: losses with and without masks") {
  ag::ParameterSet ps;
  const Tensor pred = leaf(ps, {3, 7}, -2, 2, 100);
  const Tensor target = leaf(ps, {3, 7}, -2, 2, 101);
  // Keep |pred - target| away from the kinks (0 for MAE/pinball, delta for Huber).
  for (int64_t i = 0; i < pred.numel(); ++i) {
    float d = pred.data()[i] - target.data()[i];
    if (std::fabs(d) < 0.15f) pred.data()[i] += d >= 0 ? 0.3f : -0.3f;
    d = pred.data()[i] - target.data()[i];
    if (std::fabs(std::fabs(d) - 0.7f) < 0.15f) pred.data()[i] += d >= 0 ? 0.3f : -0.3f;
  }
  std::vector<float> mask(21);
  for (int i = 0; i < 21; ++i) mask[i] = (i % 3 == 1) ? 0.0f : 1.0f;
  for (bool masked : {false, true}) {
    CAPTURE(masked);
    auto m = [&] { return masked ? ag::from_data({3, 7}, mask.data()) : Tensor{}; };
    CHECK_GRADS((std::vector<Tensor>{pred, target}),
                [&] { return ag::mse_loss(pred, target, m()); });
    CHECK_GRADS((std::vector<Tensor>{pred, target}),
                [&] { return ag::mae_loss(pred, target, m()); });
    CHECK_GRADS((std::vector<Tensor>{pred, target}),
                [&] { return ag::huber_loss(pred, target, 0.7f, m()); });
    CHECK_GRADS((std::vector<Tensor>{pred, target}),
                [&] { return ag::quantile_loss(pred, target, 0.9f, m()); });
  }
  // A transposed prediction against a transposed target.
  CHECK_GRADS((std::vector<Tensor>{pred}),
              [&] { return ag::mse_loss(pred.transpose(0, 1), target.transpose(0, 1)); });
}

TEST_CASE("masked losses ignore masked elements and never divide by zero") {
  ag::Graph g;
  ag::GraphScope scope(g);
  const float p[4] = {1, 2, 3, 100}, t[4] = {0, 0, 0, 0}, m[4] = {1, 1, 1, 0};
  const Tensor pred = ag::from_data({4}, p), target = ag::from_data({4}, t);
  const Tensor mask = ag::from_data({4}, m);
  CHECK(ag::mse_loss(pred, target, mask).item() == doctest::Approx((1 + 4 + 9) / 3.0));
  CHECK(ag::mae_loss(pred, target, mask).item() == doctest::Approx(2.0));
  CHECK(ag::huber_loss(pred, target, 1.5f, mask).item() ==
        doctest::Approx((0.5 + 1.5 * (2 - 0.75) + 1.5 * (3 - 0.75)) / 3));
  // pinball, q = 0.9: prediction above the target costs (1 - q) * (pred - target)
  CHECK(ag::quantile_loss(pred, target, 0.9f, mask).item() == doctest::Approx(0.1 * 6 / 3));
  CHECK(ag::quantile_loss(target, pred, 0.9f, mask).item() == doctest::Approx(0.9 * 6 / 3));
  const float none[4] = {0, 0, 0, 0};
  CHECK(ag::mse_loss(pred, target, ag::from_data({4}, none)).item() == 0.0f);
}
