#include <doctest/doctest.h>

#include <vector>

#include "attnfc/kernels/adamw.hpp"
#include "kernel_test_util.hpp"

using namespace attnfc;
using namespace attnfc::kernels;
using attnfc::test::ThreadCount;

TEST_CASE("AdamW matches the reference over several steps; 1 and 2 threads agree") {
  for (int64_t n : {1, 7, 33, 129, 257, 50003}) {
    for (float wd : {0.0f, 0.1f}) {
      CAPTURE(n);
      CAPTURE(wd);
      const auto p0 = test::randn(n, 1);
      auto pr = p0, p1 = p0, p2 = p0;
      std::vector<float> mr(n, 0.0f), vr(n, 0.0f), m1 = mr, v1 = vr, m2 = mr, v2 = vr;
      for (int64_t step = 1; step <= 4; ++step) {
        const auto g = test::randn(n, 100 + static_cast<uint32_t>(step));
        AdamWStep s;
        s.lr = 1e-2f;
        s.weight_decay = wd;
        s.step = step;
        adamw_update_reference(pr.data(), g.data(), mr.data(), vr.data(), n, s);
        {
          ThreadCount t(1);
          adamw_update(p1.data(), g.data(), m1.data(), v1.data(), n, s);
        }
        {
          ThreadCount t(2);
          adamw_update(p2.data(), g.data(), m2.data(), v2.data(), n, s);
        }
      }
      test::all_close(p1, pr, 1e-6, 1e-5, "param");
      test::all_close(m1, mr, 1e-7, 1e-5, "m");
      test::all_close(v1, vr, 1e-7, 1e-5, "v");
      CHECK(test::bit_equal(p1, p2));
      CHECK(test::bit_equal(m1, m2));
      CHECK(test::bit_equal(v1, v2));
    }
  }
}

TEST_CASE("AdamW's first step moves every parameter by about lr against its gradient") {
  // With bias correction, step 1 gives mhat / sqrt(vhat) = sign(g).
  std::vector<float> p = {1.0f, -2.0f, 0.5f}, g = {0.3f, -4.0f, 1e-3f}, m(3, 0.0f), v(3, 0.0f);
  AdamWStep s;
  s.lr = 0.1f;
  s.weight_decay = 0.5f;
  adamw_update(p.data(), g.data(), m.data(), v.data(), 3, s);
  CHECK(p[0] == doctest::Approx(1.0 - 0.1 * (1.0 + 0.5 * 1.0)).epsilon(1e-5));
  CHECK(p[1] == doctest::Approx(-2.0 - 0.1 * (-1.0 + 0.5 * -2.0)).epsilon(1e-5));
  CHECK(p[2] == doctest::Approx(0.5 - 0.1 * (1e-3 / (1e-3 + 1e-8) + 0.25)).epsilon(1e-5));
}
