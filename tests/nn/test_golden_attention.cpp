// nn attention against PyTorch: outputs, attention weights and gradients of
// sum(out * dout) match the fixtures in tests/golden/ (docs/GOLDEN.md) to 1e-5 relative.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/autograd/parameters.hpp"
#include "attnfc/nn/attention.hpp"
#include "golden.hpp"
#include "golden_tensors.hpp"

using namespace attnfc;

namespace {

using golden::fill;
using golden::shape_of;

ag::Tensor param(ag::ParameterSet& ps, const golden::Case& c, const std::string& name) {
  ag::Tensor t = ps.create(name, shape_of(c.at(name)));
  fill(t, c.at(name));
  return t;
}

// Asserts that `got` (contiguous data or grad) matches reference tensor `ref_name`.
double expect_match(const golden::Case& c, const std::string& ref_name, const ag::Tensor& shape,
                    const float* got) {
  const golden::Tensor& ref = c.at(ref_name);
  CHECK_MESSAGE(shape.shape() == shape_of(ref), c.name << ": " << ref_name);
  REQUIRE(got != nullptr);
  const double m = golden::mismatch(got, ref);
  CHECK_MESSAGE(m <= 1.0, c.name << ": " << ref_name << " off by " << m << " x tolerance");
  return m;
}

ag::Tensor loss_against(const golden::Case& c, const ag::Tensor& out) {
  const auto dout = c.at("dout").as_float();
  REQUIRE(out.shape() == shape_of(c.at("dout")));
  const ag::Tensor seed = ag::from_data(out.shape(), dout.data());
  return ag::sum_all(ag::mul(out, seed));
}

const char* kSdpaCases[] = {"sdpa_self",         "sdpa_cross",       "sdpa_causal",
                            "sdpa_causal_cross", "sdpa_padding",     "sdpa_causal_padding",
                            "sdpa_odd",          "sdpa_fully_masked"};
const char* kMhaCases[] = {"mha_self_bias",
                           "mha_self_nobias",
                           "mha_self_causal",
                           "mha_self_padding",
                           "mha_self_causal_padding",
                           "mha_cross_bias",
                           "mha_cross_nobias_padding",
                           "mha_cross_causal_padding",
                           "mha_cross_single_query",
                           "mha_odd",
                           "mha_fully_masked"};

// Worst mismatch (in units of the tolerance) over one run of a case.
double run_sdpa(const golden::Case& c, bool with_weights) {
  ag::Graph g;
  ag::GraphScope scope(g);
  ag::ParameterSet ps;
  const ag::Tensor q = param(ps, c, "q"), k = param(ps, c, "k"), v = param(ps, c, "v");
  std::vector<uint8_t> pad;
  nn::AttentionMask mask;
  mask.causal = c.attr("causal") != 0;
  if (c.has("key_padding")) {
    pad = c.at("key_padding").as_bytes();
    mask.key_padding = pad.data();
  }
  ag::Tensor w;
  const ag::Tensor out =
      nn::scaled_dot_product_attention(q, k, v, mask, with_weights ? &w : nullptr);
  g.backward(loss_against(c, out));
  REQUIRE(out.is_contiguous());
  double worst = expect_match(c, "out", out, out.data());
  if (with_weights) {
    REQUIRE(w.is_contiguous());
    worst = std::max(worst, expect_match(c, "weights", w, w.data()));
  }
  worst = std::max(worst, expect_match(c, "dq", q, q.grad()));
  worst = std::max(worst, expect_match(c, "dk", k, k.grad()));
  worst = std::max(worst, expect_match(c, "dv", v, v.grad()));
  return worst;
}

struct MhaRun {
  bool with_weights = false;
  bool packed_self = true;   // self cases: forward(x) (packed) or forward(x, x) (cross path)
  int heads_override = 0;    // > 0: a deliberately wrong head count
  int causal_override = -1;  // 0/1: a deliberately wrong mask
};

double run_mha(const golden::Case& c, const MhaRun& run) {
  ag::Graph g;
  ag::GraphScope scope(g);
  ag::ParameterSet ps;
  const bool self = c.attr("self") != 0, bias = c.attr("bias") != 0;
  const int d = static_cast<int>(c.attr("d_model"));
  const int heads = run.heads_override > 0 ? run.heads_override : static_cast<int>(c.attr("heads"));
  nn::MultiHeadAttention mha(ps, "attn", d, heads, bias, 7);
  REQUIRE(ps.find("attn.in_proj_weight").defined());
  REQUIRE(ps.find("attn.out_proj.weight").defined());
  CHECK(ps.find("attn.in_proj_bias").defined() == bias);
  CHECK(ps.find("attn.out_proj.bias").defined() == bias);
  fill(mha.in_proj_weight, c.at("in_proj_weight"));
  fill(mha.out_proj_weight, c.at("out_proj.weight"));
  if (bias) {
    fill(mha.in_proj_bias, c.at("in_proj_bias"));
    fill(mha.out_proj_bias, c.at("out_proj.bias"));
  }
  const ag::Tensor query = param(ps, c, "query");
  const ag::Tensor kv = self ? query : param(ps, c, "key_value");
  std::vector<uint8_t> pad;
  nn::AttentionMask mask;
  mask.causal = run.causal_override >= 0 ? run.causal_override != 0 : c.attr("causal") != 0;
  if (c.has("key_padding")) {
    pad = c.at("key_padding").as_bytes();
    mask.key_padding = pad.data();
  }
  ag::Tensor w;
  ag::Tensor* wp = run.with_weights ? &w : nullptr;
  const ag::Tensor out =
      self && run.packed_self ? mha.forward(query, mask, wp) : mha.forward(query, kv, mask, wp);
  g.backward(loss_against(c, out));
  REQUIRE(out.is_contiguous());
  double worst = golden::mismatch(out.data(), c.at("out"));
  if (run.with_weights) worst = std::max(worst, golden::mismatch(w.data(), c.at("weights")));
  worst = std::max(worst, golden::mismatch(query.grad(), c.at("dquery")));
  if (!self) worst = std::max(worst, golden::mismatch(kv.grad(), c.at("dkey_value")));
  worst = std::max(worst, golden::mismatch(mha.in_proj_weight.grad(), c.at("din_proj_weight")));
  worst = std::max(worst, golden::mismatch(mha.out_proj_weight.grad(), c.at("dout_proj.weight")));
  if (bias) {
    worst = std::max(worst, golden::mismatch(mha.in_proj_bias.grad(), c.at("din_proj_bias")));
    worst = std::max(worst, golden::mismatch(mha.out_proj_bias.grad(), c.at("dout_proj.bias")));
  }
  if (run.with_weights) CHECK(w.shape() == shape_of(c.at("weights")));
  CHECK(out.shape() == shape_of(c.at("out")));
  return worst;
}

// ATTNFC_GOLDEN_REPORT=1 prints each case's worst error in units of the tolerance.
void report(const std::string& name, const std::string& path, double worst) {
  if (std::getenv("ATTNFC_GOLDEN_REPORT"))
    std::printf("%-28s %-22s worst %.3f x tolerance\n", name.c_str(), path.c_str(), worst);
}

}  // namespace

TEST_CASE("scaled_dot_product_attention matches torch on every fixture, fused and materialising") {
  for (const char* name : kSdpaCases) {
    const golden::Case c = golden::load(name);
    CHECK(c.op == "sdpa");
    for (bool with_weights : {false, true}) {
      CAPTURE(name);
      CAPTURE(with_weights);
      const double worst = run_sdpa(c, with_weights);
      report(name, with_weights ? "materialising" : "fused", worst);
      CHECK(worst <= 1.0);
    }
  }
}

TEST_CASE("MultiHeadAttention matches torch.nn.MultiheadAttention on every fixture") {
  for (const char* name : kMhaCases) {
    const golden::Case c = golden::load(name);
    CHECK(c.op == "mha");
    const bool self = c.attr("self") != 0;
    for (bool with_weights : {false, true}) {
      for (bool packed : {true, false}) {
        if (!self && packed) continue;
        CAPTURE(name);
        CAPTURE(with_weights);
        CAPTURE(packed);
        MhaRun run;
        run.with_weights = with_weights;
        run.packed_self = packed;
        const double worst = run_mha(c, run);
        report(name,
               std::string(with_weights ? "weights" : "fused") + (packed ? " packed" : " cross"),
               worst);
        CHECK(worst <= 1.0);
      }
    }
  }
}

TEST_CASE("the golden comparison catches a wrong mask, a wrong head split and a dropped row") {
  const golden::Case causal = golden::load("mha_self_causal");
  MhaRun no_mask;
  no_mask.causal_override = 0;
  CHECK(run_mha(causal, no_mask) > 10.0);
  const golden::Case multi = golden::load("mha_self_bias");  // 3 heads of width 4
  MhaRun one_head;
  one_head.heads_override = 1;
  CHECK(run_mha(multi, one_head) > 10.0);
  // The tolerance itself: a single perturbed gradient entry is noticed.
  golden::Tensor ref = golden::load("sdpa_self").at("dq");
  std::vector<float> got = ref.as_float();
  CHECK(golden::mismatch(got.data(), ref) <= 1.0);
  got[3] += 1e-3f * static_cast<float>(std::abs(ref.values[3]) + 1.0);
  CHECK(golden::mismatch(got.data(), ref) > 1.0);
  got[3] = NAN;
  CHECK(std::isinf(golden::mismatch(got.data(), ref)));
}

TEST_CASE("a query row with nothing to attend to yields zeros, never NaN") {
  {
    const golden::Case c = golden::load("sdpa_fully_masked");  // batch 0 pads keys 0 and 1
    for (bool with_weights : {false, true}) {
      ag::Graph g;
      ag::GraphScope scope(g);
      ag::ParameterSet ps;
      const ag::Tensor q = param(ps, c, "q"), k = param(ps, c, "k"), v = param(ps, c, "v");
      const std::vector<uint8_t> pad = c.at("key_padding").as_bytes();
      ag::Tensor w;
      const ag::Tensor out = nn::scaled_dot_product_attention(q, k, v, {true, pad.data()},
                                                              with_weights ? &w : nullptr);
      g.backward(loss_against(c, out));
      const int64_t H = q.size(1), L = q.size(2), D = q.size(3);
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < 2; ++i)  // queries 0 and 1 of batch 0 see only padded keys
          for (int64_t j = 0; j < D; ++j) CHECK(out.at({0, h, i, j}) == 0.0f);
      if (with_weights)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < L; ++j) CHECK(w.at({0, 0, i, j}) == 0.0f);
      for (const ag::Tensor* t : {&q, &k, &v})
        for (int64_t i = 0; i < t->numel(); ++i) CHECK(std::isfinite(t->grad()[i]));
      // Those queries receive no gradient at all.
      for (int64_t j = 0; j < D; ++j) CHECK(q.grad()[j] == 0.0f);
    }
  }
  {
    // MHA: a zero attention row becomes exactly out_proj.bias after the output projection.
    const golden::Case c = golden::load("mha_fully_masked");  // batch 0, query 0 is empty
    ag::Graph g;
    ag::GraphScope scope(g);
    ag::ParameterSet ps;
    nn::MultiHeadAttention mha(ps, "attn", 6, 2, true, 1);
    fill(mha.in_proj_weight, c.at("in_proj_weight"));
    fill(mha.in_proj_bias, c.at("in_proj_bias"));
    fill(mha.out_proj_weight, c.at("out_proj.weight"));
    fill(mha.out_proj_bias, c.at("out_proj.bias"));
    const ag::Tensor x = param(ps, c, "query");
    const std::vector<uint8_t> pad = c.at("key_padding").as_bytes();
    const ag::Tensor out = mha.forward(x, {true, pad.data()});
    for (int64_t j = 0; j < 6; ++j) CHECK(out.at({0, 0, j}) == mha.out_proj_bias.data()[j]);
    for (int64_t i = 0; i < out.numel(); ++i) CHECK(std::isfinite(out.data()[i]));
  }
}
