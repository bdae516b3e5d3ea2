// Optimisers. Buffers are sized once in the constructor, so step() allocates nothing.
#include "attnfc/autograd/optim.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "attnfc/base/error.hpp"
#include "attnfc/kernels/adamw.hpp"
#include "attnfc/kernels/threading.hpp"

namespace attnfc::ag {

namespace {
std::vector<std::vector<float>> zeros_like(const ParameterSet& params) {
  std::vector<std::vector<float>> v;
  for (const NamedTensor& p : params.all()) v.emplace_back(static_cast<size_t>(p.tensor.numel()));
  return v;
}

// The step count is stored as two floats holding 24 bits each: exact up to 2^48 steps.
StateTensor step_state(const std::string& name, int64_t steps) {
  return StateTensor{name, {static_cast<float>(steps >> 24), static_cast<float>(steps & 0xFFFFFF)}};
}

// Parameters created after the optimiser get zero state on the next step (a one-time
// allocation; the steady state allocates nothing).
void cover_new_params(const ParameterSet& params, std::vector<std::vector<float>>& buf) {
  const auto& all = params.all();
  for (size_t k = buf.size(); k < all.size(); ++k) {
    buf.emplace_back(static_cast<size_t>(all[k].tensor.numel()));
  }
}

// Looks up every expected name exactly once; throws InputError naming the problem.
class StateReader {
 public:
  StateReader(const std::vector<StateTensor>& state, const char* who) : state_(state), who_(who) {}
  const std::vector<float>& get(const std::string& name, size_t size) {
    for (const StateTensor& s : state_) {
      if (s.name != name) continue;
      if (s.values.size() != size) {
        throw InputError(std::string(who_) + " state '" + name + "' has " +
                         std::to_string(s.values.size()) + " values, expected " +
                         std::to_string(size));
      }
      ++found_;
      return s.values;
    }
    throw InputError(std::string(who_) + " state is missing '" + name +
                     "' (was it saved by a different optimiser or model?)");
  }
  int64_t steps(const std::string& name) {
    const std::vector<float>& v = get(name, 2);
    const double hi = v[0], lo = v[1];
    if (!(hi >= 0 && lo >= 0 && lo < 16777216.0 && hi == std::floor(hi) && lo == std::floor(lo))) {
      throw InputError(std::string(who_) + " state '" + name + "' is not a valid step count");
    }
    return (static_cast<int64_t>(hi) << 24) + static_cast<int64_t>(lo);
  }
  void expect_all_used() const {
    if (found_ != state_.size()) {
      throw InputError(std::string(who_) + " state has " + std::to_string(state_.size()) +
                       " entries, expected " + std::to_string(found_) +
                       " (it belongs to a different model or optimiser)");
    }
  }

 private:
  const std::vector<StateTensor>& state_;
  const char* who_;
  size_t found_ = 0;
};
}  // namespace

// ---------------------------------------------------------------- SGD
// PyTorch's SGD: g' = g + wd * p;  v = momentum * v + g';  p -= lr * v  (v = g' when momentum 0)
SGD::SGD(ParameterSet& params, float momentum, float weight_decay)
    : params_(params),
      momentum_(momentum),
      weight_decay_(weight_decay),
      velocity_(zeros_like(params)) {}

void SGD::step(float lr) {
  cover_new_params(params_, velocity_);
  const auto& all = params_.all();
  for (size_t k = 0; k < all.size(); ++k) {
    float* p = all[k].tensor.data();
    const float* g = all[k].tensor.grad();
    float* v = velocity_[k].data();
    const int64_t n = all[k].tensor.numel();
    const float mom = momentum_, wd = weight_decay_;
    for (int64_t i = 0; i < n; ++i) {
      const float gi = g[i] + wd * p[i];
      v[i] = mom * v[i] + gi;
      p[i] -= lr * v[i];
    }
  }
  ++steps_;
}

std::vector<StateTensor> SGD::state() const {
  std::vector<StateTensor> s;
  const auto& all = params_.all();
  for (size_t k = 0; k < all.size(); ++k) {
    s.push_back(StateTensor{"sgd.velocity." + all[k].name, velocity_[k]});
  }
  s.push_back(step_state("sgd.step", steps_));
  return s;
}

void SGD::load_state(const std::vector<StateTensor>& state) {
  StateReader r(state, "SGD");
  const auto& all = params_.all();
  std::vector<std::vector<float>> vel;
  for (size_t k = 0; k < all.size(); ++k) {
    vel.push_back(r.get("sgd.velocity." + all[k].name, static_cast<size_t>(all[k].tensor.numel())));
  }
  const int64_t steps = r.steps("sgd.step");
  r.expect_all_used();
  velocity_ = std::move(vel);  // only after everything validated
  steps_ = steps;
}

// ---------------------------------------------------------------- Adam / AdamW
AdamW::AdamW(ParameterSet& params, float beta1, float beta2, float eps, float weight_decay,
             bool decoupled)
    : params_(params),
      beta1_(beta1),
      beta2_(beta2),
      eps_(eps),
      weight_decay_(weight_decay),
      decoupled_(decoupled),
      m_(zeros_like(params)),
      v_(zeros_like(params)) {}

int AdamW::set_lr_scale(const std::string& name_prefix, float scale) {
  if (!(scale >= 0.0f) || !std::isfinite(scale))
    throw std::invalid_argument("AdamW::set_lr_scale: scale must be finite and >= 0");
  const auto& all = params_.all();
  if (lr_scale_.size() < all.size()) lr_scale_.resize(all.size(), 1.0f);
  int matched = 0;
  for (size_t k = 0; k < all.size(); ++k) {
    if (all[k].name.compare(0, name_prefix.size(), name_prefix) != 0) continue;
    lr_scale_[k] = scale;
    ++matched;
  }
  return matched;
}

// The update is elementwise and the kernel treats every element alike (masked
// tails), so how the parameters are cut and which thread runs a piece changes nothing.
void AdamW::update_decoupled(float base_lr) {
  const auto& all = params_.all();
  if (grads_.size() != all.size()) {  // pieces_ covers grads_.size() parameters
    constexpr int64_t kPieceSize = 1 << 14;
    pieces_.clear();  // a one-time allocation, redone only when parameters are added
    for (size_t k = 0; k < all.size(); ++k) {
      const int64_t n = all[k].tensor.numel();
      for (int64_t b = 0; b < n; b += kPieceSize)
        pieces_.push_back({k, b, std::min(n, b + kPieceSize)});
    }
    grads_.resize(all.size());
  }
  // Gradient addresses as this thread sees them (a GradientRedirectScope is per thread).
  for (size_t k = 0; k < all.size(); ++k) grads_[k] = all[k].tensor.grad();
  const float decay = decoupled_ ? weight_decay_ : 0.0f;
  const auto count = static_cast<int64_t>(pieces_.size());
  const bool parallel = count > 1 && params_.numel() >= (int64_t{1} << 15) && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t i = 0; i < count; ++i) {
    kernels::enable_flush_to_zero();
    const Piece& piece = pieces_[static_cast<size_t>(i)];
    const size_t k = piece.param;
    const float scale = k < lr_scale_.size() ? lr_scale_[k] : 1.0f;
    if (scale == 0.0f) continue;  // frozen: no update, no decay
    const int64_t b = piece.begin;
    kernels::adamw_update(all[k].tensor.data() + b, grads_[k] + b, m_[k].data() + b,
                          v_[k].data() + b, piece.end - b,
                          kernels::AdamWStep{base_lr * scale, beta1_, beta2_, eps_, decay, steps_});
  }
}

void AdamW::step(float base_lr) {
  cover_new_params(params_, m_);
  cover_new_params(params_, v_);
  ++steps_;
  if (decoupled_ || weight_decay_ == 0.0f) {
    update_decoupled(base_lr);
    return;
  }
  const auto& all = params_.all();
  for (size_t k = 0; k < all.size(); ++k) {
    const float scale = k < lr_scale_.size() ? lr_scale_[k] : 1.0f;
    if (scale == 0.0f) continue;  // frozen: no update, no decay
    const float lr = base_lr * scale;
    float* p = all[k].tensor.data();
    const float* g = all[k].tensor.grad();
    const int64_t n = all[k].tensor.numel();
    // Adam with L2 regularisation: the decay joins the gradient before the moments.
    const double bc1 = 1.0 - std::pow(static_cast<double>(beta1_), static_cast<double>(steps_));
    const double bc2 = 1.0 - std::pow(static_cast<double>(beta2_), static_cast<double>(steps_));
    float* m = m_[k].data();
    float* v = v_[k].data();
    for (int64_t i = 0; i < n; ++i) {
      const float gi = g[i] + weight_decay_ * p[i];
      m[i] = beta1_ * m[i] + (1.0f - beta1_) * gi;
      v[i] = beta2_ * v[i] + (1.0f - beta2_) * gi * gi;
      const double mhat = m[i] / bc1, vhat = v[i] / bc2;
      p[i] -= static_cast<float>(lr * (mhat / (std::sqrt(vhat) + eps_)));
    }
  }
}

std::vector<StateTensor> AdamW::state() const {
  std::vector<StateTensor> s;
  const auto& all = params_.all();
  for (size_t k = 0; k < all.size(); ++k) {
    s.push_back(StateTensor{"adamw.m." + all[k].name, m_[k]});
    s.push_back(StateTensor{"adamw.v." + all[k].name, v_[k]});
  }
  s.push_back(step_state("adamw.step", steps_));
  return s;
}

void AdamW::load_state(const std::vector<StateTensor>& state) {
  StateReader r(state, "AdamW");
  const auto& all = params_.all();
  std::vector<std::vector<float>> m, v;
  for (size_t k = 0; k < all.size(); ++k) {
    const size_t n = static_cast<size_t>(all[k].tensor.numel());
    m.push_back(r.get("adamw.m." + all[k].name, n));
    v.push_back(r.get("adamw.v." + all[k].name, n));
  }
  const int64_t steps = r.steps("adamw.step");
  r.expect_all_used();
  m_ = std::move(m);
  v_ = std::move(v);
  steps_ = steps;
}

// ---------------------------------------------------------------- clipping
float clip_grad_norm(ParameterSet& params, float max_norm) {
  // Sum of squares in double with 8 interleaved partial sums (vectorisable), combined
  // in a fixed order: the same bits at any thread count.
  double total = 0.0;
  for (const NamedTensor& p : params.all()) {
    const float* g = p.tensor.grad();
    const int64_t n = p.tensor.numel();
    double part[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (int j = 0; j < 8; ++j) part[j] += static_cast<double>(g[i + j]) * g[i + j];
    }
    for (; i < n; ++i) part[0] += static_cast<double>(g[i]) * g[i];
    total +=
        ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  }
  const double norm = std::sqrt(total);
  if (!std::isfinite(norm)) return static_cast<float>(norm);
  // PyTorch's rule: scale by max_norm / (norm + 1e-6) when that is below 1.
  const double coef = static_cast<double>(max_norm) / (norm + 1e-6);
  if (coef < 1.0) {
    const float c = static_cast<float>(coef);
    for (const NamedTensor& p : params.all()) {
      float* g = p.tensor.grad();
      const int64_t n = p.tensor.numel();
      for (int64_t i = 0; i < n; ++i) g[i] *= c;
    }
  }
  return static_cast<float>(norm);
}

}  // namespace attnfc::ag
