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

ParameterSet::ParameterSet() = default;
ParameterSet::~ParameterSet() = default;

Tensor ParameterSet::create(const std::string& name, const Shape& shape) {
  if (name.empty()) throw std::invalid_argument("ParameterSet::create: empty parameter name");
  if (find(name).defined()) {
    throw std::invalid_argument("ParameterSet::create: duplicate parameter name '" + name + "'");
  }
  const int64_t n = shape.numel();
  // Value-initialised: data and grad both start at zero.
  auto block = std::make_unique<float[]>(static_cast<size_t>(2 * std::max<int64_t>(n, 1)));
  float* data = block.get();
  float* grad = block.get() + std::max<int64_t>(n, 1);
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
  for (const NamedTensor& p : params_) {
    std::memset(p.tensor.grad(), 0, static_cast<size_t>(p.tensor.numel()) * sizeof(float));
  }
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
