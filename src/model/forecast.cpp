// Inference: forecasts from the last position, autoregressive rollout beyond the
// trained horizon, and attention maps for inspection.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "attnfc/autograd/graph.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/model/patch_transformer.hpp"
#include "inference_graph.hpp"
#include "inputs.hpp"

namespace attnfc::model {

namespace {

// Copies the last `L` steps of each of `count` windows into ctx/obs [count, L, C]
// (front-padded with unobserved zeros when length < L) and checks them.
void gather_context(const float* context, const uint8_t* observed, int64_t first, int64_t count,
                    int64_t length, int64_t L, int64_t C, float* ctx, uint8_t* obs) {
  for (int64_t b = 0; b < count; ++b) {
    const int64_t w = first + b;
    int64_t seen = 0;
    for (int64_t t = 0; t < L; ++t) {
      const int64_t src = length - L + t;  // may be negative: padding
      for (int64_t c = 0; c < C; ++c) {
        float& v = ctx[(b * L + t) * C + c];
        uint8_t& m = obs[(b * L + t) * C + c];
        if (src < 0) {
          v = 0.0f;
          m = 0;
          continue;
        }
        const int64_t k = (w * length + src) * C + c;
        const bool is_obs = observed ? observed[k] != 0 : true;
        if (is_obs && !std::isfinite(context[k])) {
          throw InputError("forecast: window " + std::to_string(w) + ", step " +
                           std::to_string(src) + ", channel " + std::to_string(c) +
                           ": found a non-finite value (" + std::to_string(context[k]) +
                           "), expected a number or a missing-value mark");
        }
        v = is_obs ? context[k] : 0.0f;
        m = is_obs ? 1 : 0;
        seen += is_obs;
      }
    }
    if (seen == 0) {
      throw UnobservedContext(w, L);
    }
  }
}

// Steps [0, take) of windows [first, first + count) of one forecast pass, p [count, Q, H, C]
// (level-major, as the head writes it), into levels [batch, want, Q, C] at step `done`.
void copy_levels(const float* p, const detail::LevelMajor& at, int64_t first, int64_t count,
                 int64_t done, int64_t take, int64_t want, float* levels) {
  const int64_t Q = at.Q, C = at.C;
  for (int64_t b = 0; b < count; ++b)
    for (int64_t h = 0; h < take; ++h)
      for (int64_t j = 0; j < Q; ++j) {
        const float* from = p + at.at(b, j, h);
        if (!std::all_of(from, from + C, [](float v) { return std::isfinite(v); }))
          throw NonFiniteForecast(first + b);
        std::copy_n(from, C, levels + (((first + b) * want + done + h) * Q + j) * C);
      }
}

// Contexts [count, L, C] as the model's series view (no target).
detail::SeriesView context_view(int64_t count, int64_t L, int64_t C, const float* ctx,
                                const uint8_t* obs) {
  detail::SeriesView view;
  view.batch = count;
  view.length = view.split = L;
  view.channels = C;
  view.head = ctx;
  view.head_observed = obs;
  return view;
}

}  // namespace

std::vector<float> PatchTransformer::forecast(const float* context, const uint8_t* observed,
                                              int64_t batch, int64_t length, int horizon,
                                              const KnownInputs& known,
                                              std::vector<float>* levels) const {
  const int64_t L = config_.context_length, H = config_.horizon, C = config_.token_channels();
  if (horizon < 0) throw std::invalid_argument("forecast: negative horizon");
  const int64_t want = horizon == 0 ? H : horizon;
  if (config_.known_features > 0 && want > H) {
    // A rollout would need the known features of steps the model has no queries for.
    throw InputError("forecast: found a horizon of " + std::to_string(want) +
                     ", but the model reads known future features for its " + std::to_string(H) +
                     " steps, so it forecasts at most " + std::to_string(H) +
                     " steps (no rollout); expected a horizon of " + std::to_string(H) +
                     " or less");
  }
  if (batch < 0 || length < 1) {
    throw InputError("forecast: expected at least one context step, got " + std::to_string(length));
  }
  std::vector<float> result(static_cast<size_t>(batch * want * C));
  const int64_t Q = config_.levels(), m = config_.median_level();
  const detail::LevelMajor at{Q, H, C};  // where each pass's predictions sit
  if (levels) levels->assign(static_cast<size_t>(batch * want * Q * C), 0.0f);
  // Chunks bound the arena: 128 windows of M4's d_model 192 fault in about 115 MB for the
  // whole predict, 256 took 152 MB and were slower (bits do not depend on the chunk).
  constexpr int64_t kChunk = 128;
  ag::NoGradScope no_grad;
  detail::InferenceGraph inference;
  ag::Graph& graph = inference.get();
  ag::GraphScope scope(graph);
  std::vector<float> ctx;
  std::vector<uint8_t> obs;
  for (int64_t first = 0; first < batch; first += kChunk) {
    const int64_t count = std::min(kChunk, batch - first);
    ctx.resize(static_cast<size_t>(count * L * C));
    obs.resize(ctx.size());
    gather_context(context, observed, first, count, length, L, C, ctx.data(), obs.data());
    for (int64_t done = 0; done < want;) {
      graph.reset();
      detail::SeriesView view = context_view(count, L, C, ctx.data(), obs.data());
      view.known = known.from(first, H);
      const ag::Tensor pred = predict_positions(view, ForwardOptions{}, true, nullptr);
      const float* p = pred.data();  // [count, 1, Q * H, C]: level m is the point forecast
      const int64_t take = std::min(H, want - done);
      if (levels) copy_levels(p, at, first, count, done, take, want, levels->data());
      for (int64_t b = 0; b < count; ++b) {
        for (int64_t h = 0; h < take; ++h) {
          for (int64_t c = 0; c < C; ++c) {
            const float v = p[at.at(b, m, h) + c];
            if (!std::isfinite(v)) throw NonFiniteForecast(first + b);
            result[((first + b) * want + done + h) * C + c] = v;
          }
        }
      }
      done += take;
      if (done >= want) break;
      // Rollout: append the H predictions as observed steps, keep the last L.
      const int64_t shift = std::min(H, L);
      for (int64_t b = 0; b < count; ++b) {
        float* cb = ctx.data() + b * L * C;
        uint8_t* ob = obs.data() + b * L * C;
        std::move(cb + shift * C, cb + L * C, cb);
        std::move(ob + shift * C, ob + L * C, ob);
        for (int64_t t = 0; t < shift; ++t) {
          for (int64_t c = 0; c < C; ++c) {
            cb[(L - shift + t) * C + c] = p[at.at(b, m, H - shift + t) + c];
            ob[(L - shift + t) * C + c] = 1;
          }
        }
      }
    }
  }
  return result;
}

std::vector<float> PatchTransformer::forecast(std::span<const float> context, int horizon) const {
  if (config_.token_channels() != 1) {
    throw std::invalid_argument("forecast(span): the model is mixed-channel; use the batch form");
  }
  return forecast(context.data(), nullptr, 1, static_cast<int64_t>(context.size()), horizon);
}

std::vector<std::vector<float>> PatchTransformer::attention_maps(const float* context,
                                                                 const uint8_t* observed,
                                                                 int64_t length) const {
  const int64_t L = config_.context_length, C = config_.token_channels();
  ag::NoGradScope no_grad;
  ag::Graph graph;
  ag::GraphScope scope(graph);
  std::vector<float> ctx(static_cast<size_t>(L * C));
  std::vector<uint8_t> obs(ctx.size());
  gather_context(context, observed, 0, 1, length, L, C, ctx.data(), obs.data());
  // The encoder's maps do not depend on what the decoder reads, so a decoder gets zeros
  // (code 0: "unseen") of the widths it was built for.
  const int64_t K = config_.known_features, S = config_.static_numeric;
  const auto G = static_cast<int64_t>(config_.static_categories.size());
  const std::vector<float> zeros(static_cast<size_t>(std::max<int64_t>(config_.horizon * K, S)));
  const std::vector<int32_t> codes(static_cast<size_t>(G), 0);
  detail::SeriesView view = context_view(1, L, C, ctx.data(), obs.data());
  view.known = KnownInputs{K, K ? zeros.data() : nullptr, S, S ? zeros.data() : nullptr,
                           G, G ? codes.data() : nullptr};
  std::vector<ag::Tensor> weights;
  predict_positions(view, ForwardOptions{}, false, &weights);
  std::vector<std::vector<float>> maps;
  for (const ag::Tensor& w : weights) {
    const ag::Tensor c = w.contiguous();  // [1, heads, N, N]
    maps.emplace_back(c.data(), c.data() + c.numel());
  }
  return maps;
}

}  // namespace attnfc::model
