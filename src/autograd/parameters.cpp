// ParameterSet: weights and their gradients, allocated once per parameter (data and
// grad in one block) so their addresses never change while the set lives.
#include "attnfc/autograd/parameters.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "attnfc/kernels/random.hpp"
#include "strided.hpp"

namespace attnfc::ag {

ParameterSet::ParameterSet(Gradients gradients) : gradients_(gradients) {}
ParameterSet::~ParameterSet() = default;

Tensor ParameterSet::create(const std::string& name, const Shape& shape) {
  if (name.empty()) throw std::invalid_argument("ParameterSet::create: empty parameter name");
  if (find(name).defined()) {
    throw std::invalid_argument("ParameterSet::create: duplicate parameter name '" + name + "'");
  }
  const int64_t n = std::max<int64_t>(shape.numel(), 1);
  const bool with_grad = gradients_ == Gradients::kStored;
  // Value-initialised: data and grad both start at zero.
  auto block = std::make_unique<float[]>(static_cast<size_t>(with_grad ? 2 * n : n));
  float* data = block.get();
  float* grad = with_grad ? block.get() + n : nullptr;
  storage_.push_back(std::move(block));
  Tensor t(shape, contiguous_strides(shape), data, grad, nullptr);
  params_.push_back(NamedTensor{name, t});
  return t;
}

Tensor ParameterSet::find(const std::string& name) const {
  for (const NamedTensor& p : params_) {
    if (p.name == name) return p.tensor;
  }
  return Tensor{};
}

void ParameterSet::zero_grad() {
  if (gradients_ == Gradients::kNone) return;
  for (const NamedTensor& p : params_) {
    std::memset(p.tensor.grad(), 0, static_cast<size_t>(p.tensor.numel()) * sizeof(float));
  }
}

namespace {
thread_local const GradientRedirect* t_redirect = nullptr;
thread_local float* t_packed = nullptr;
}  // namespace

namespace detail {
float* parameter_grad(float* grad) {
  return t_redirect ? t_redirect->map(grad, t_packed) : grad;
}
}  // namespace detail

GradientRedirect::GradientRedirect(const ParameterSet& params) {
  for (const NamedTensor& p : params.all()) {
    const auto n = static_cast<size_t>(p.tensor.numel());
    const float* g = p.tensor.grad();
    ranges_.push_back({g, g + n, floats_});
    floats_ += n;
  }
  std::sort(ranges_.begin(), ranges_.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
}

float* GradientRedirect::map(float* grad, float* packed) const {
  // The last range starting at or before `grad`.
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), grad,
                             [](const float* g, const Range& r) { return g < r.begin; });
  if (it == ranges_.begin() || grad >= (--it)->end)
    throw std::logic_error(
        "GradientRedirect: a gradient outside the redirected parameter set was written");
  return packed + it->offset + static_cast<size_t>(grad - it->begin);
}

GradientRedirectScope::GradientRedirectScope(const GradientRedirect& redirect, float* packed)
    : previous_(t_redirect), previous_packed_(t_packed) {
  t_redirect = &redirect;
  t_packed = packed;
}

GradientRedirectScope::~GradientRedirectScope() {
  t_redirect = previous_;
  t_packed = previous_packed_;
}

int64_t ParameterSet::numel() const {
  int64_t n = 0;
  for (const NamedTensor& p : params_) n += p.tensor.numel();
  return n;
}

namespace {
// Writes value(i) to element i (i counts in row-major logical order), for any strides,
// so initialising a view (e.g. one third of a packed projection) is well defined.
template <class F>
void fill_logical(const Tensor& t, F&& value) {
  if (!t.defined()) throw std::invalid_argument("init: undefined tensor");
  const detail::Dims4 d = detail::pad_dims(t.shape());
  const detail::Dims4 st = detail::pad_strides(t.shape(), t.strides());
  int64_t i = 0;
  detail::loop4(d, [&](int64_t a, int64_t b, int64_t c, int64_t e) {
    t.data()[detail::offset4(st, a, b, c, e)] = value(i++);
  });
}
}  // namespace

void init_uniform(const Tensor& t, float bound, uint64_t seed) {
  fill_logical(t, [&](int64_t i) {
    return (2.0f * kernels::random_uniform(seed, static_cast<uint64_t>(i)) - 1.0f) * bound;
  });
}

void init_normal(const Tensor& t, float std, uint64_t seed) {
  fill_logical(
      t, [&](int64_t i) { return std * kernels::random_normal(seed, static_cast<uint64_t>(i)); });
}

void init_constant(const Tensor& t, float value) {
  fill_logical(t, [&](int64_t) { return value; });
}

}  // namespace attnfc::ag
