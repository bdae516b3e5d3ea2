// An ensemble whose members read contexts of different lengths (train.ensemble_contexts):
// the file lists the lengths, each member comes back at its own, and a damaged list, or a
// member that differs in anything else, is refused.
#include <doctest/doctest.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/model/checkpoint.hpp"
#include "model_test_util.hpp"

using namespace attnfc;
using model::Checkpoint;
using model::ModelConfig;
using model::PatchTransformer;
namespace st = attnfc::safetensors;

TEST_CASE("checkpoint: members at their own context lengths come back as themselves") {
  ModelConfig c = model_test::micro_config();
  c.linear_lookback = 8;
  const ModelConfig short_c = model::with_context(c, 4);
  CHECK(short_c.linear_lookback == 4);
  ag::ParameterSet p1, p2;
  PatchTransformer m1(c, p1, 1), m2(short_c, p2, 2);
  model_test::randomize(p1, 11);
  model_test::randomize(p2, 12);
  const std::string path = "test_checkpoint_contexts.safetensors";
  model::save_ensemble_checkpoint(path, {&m1, &m2});
  const Checkpoint ck = Checkpoint::read(path);
  CHECK(ck.meta(model::kMemberContextsKey) == "[8,4]");
  CHECK(ck.config().context_length == 8);
  CHECK(ck.member_config(1).context_length == 4);
  ag::ParameterSet q1, q2;
  PatchTransformer n1(ck.member_config(0), q1, 0), n2(ck.member_config(1), q2, 0);
  ck.load_members({&n1, &n2});
  const std::vector<float> s = model_test::make_series(8 * 2, 1, 5);
  CHECK(m2.forecast(s.data(), nullptr, 2, 8, 3) == n2.forecast(s.data(), nullptr, 2, 8, 3));
  CHECK(m1.forecast(s.data(), nullptr, 2, 8, 3) == n1.forecast(s.data(), nullptr, 2, 8, 3));

  // One config throughout writes no list (the bytes of files before the key).
  model::save_ensemble_checkpoint(path, {&m1, &m1});
  CHECK(Checkpoint::read(path).meta(model::kMemberContextsKey).empty());

  // A damaged list is named; so is a member 1 shorter than model_config.
  model::save_ensemble_checkpoint(path, {&m1, &m2});
  const st::File f = st::read(path);
  const std::string bad = "test_checkpoint_contexts_bad.safetensors";
  for (const char* lengths : {"[8]", "[8,4,4]", "[4,4]", "[8,16]", "[8,\"4\"]", "{}", "[8,"}) {
    st::File g = f;
    g.metadata[model::kMemberContextsKey] = lengths;
    st::write(bad, g);
    CHECK_THROWS_WITH_AS(Checkpoint::read(bad), doctest::Contains("metadata 'member_contexts'"),
                         InputError);
  }
  st::File g = f;
  g.metadata[model::kMemberContextsKey] = "[8,6]";  // its linear_skip is [3, 4], not [3, 6]
  st::write(bad, g);
  CHECK_THROWS_WITH_AS(Checkpoint::read(bad), doctest::Contains("member2.linear_skip.weight"),
                       InputError);
  g.metadata.erase(model::kMemberContextsKey);  // member 2 read at model_config's length
  st::write(bad, g);
  CHECK_THROWS_WITH_AS(Checkpoint::read(bad),
                       doctest::Contains("has shape [3, 4], expected [3, 8]"), InputError);

  // Members that differ in anything but their context are not an ensemble of one model.
  ModelConfig wider = c;
  wider.d_model = 16;
  ag::ParameterSet p3;
  PatchTransformer m3(wider, p3, 3);
  CHECK_THROWS_AS(model::save_ensemble_checkpoint(bad, {&m1, &m3}), std::logic_error);
  CHECK_THROWS_AS(model::save_ensemble_checkpoint(bad, {&m2, &m1}), std::logic_error);
  CHECK_THROWS_WITH_AS(model::save_checkpoint(bad, m1, {{"member_contexts", "[8]"}}),
                       doctest::Contains("reserved"), InputError);
  std::remove(path.c_str());
  std::remove(bad.c_str());
}
