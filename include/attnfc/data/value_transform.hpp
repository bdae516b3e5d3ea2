#pragma once
// The targets' power transform (data.transform): which values it takes is said here once,
// for the reader's check of every input (CsvOptions::domain) and for the Scaler that
// applies it.
#include <cstddef>

namespace attnfc::data {

// A power transform of the first `channels` value channels (the targets), applied before
// the z-score: lambda 0 is log(x) (needs x > 0), lambda in (0, 1] is x^lambda (needs
// x >= 0). It is Box-Cox up to an affine map, which the z-score absorbs. Inverted at the
// output: exp(t), or t^(1/lambda) with t below 0 (outside the transform's range) read as
// 0. lambda < 0 (kNone): no transform.
struct ValueTransform {
  static constexpr double kNone = -1.0;
  double lambda = kNone;
  size_t channels = 0;
  bool active() const { return lambda >= 0.0 && channels > 0; }
  // Whether x is in the transform's domain.
  bool accepts(double x) const { return lambda == 0.0 ? x > 0.0 : x >= 0.0; }
  // The domain as messages say it: "> 0" (log) or ">= 0" (a power).
  const char* domain() const { return lambda == 0.0 ? "> 0" : ">= 0"; }
};

}  // namespace attnfc::data
