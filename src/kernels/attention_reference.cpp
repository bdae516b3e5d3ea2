// Materialising attention: builds the Lq x Lk score matrix per (batch, head).
// O(L^2) memory; kept as the ground truth the fused kernel is tested against.
#include <cmath>
#include <limits>
#include <vector>

#include "attnfc/kernels/attention.hpp"

namespace attnfc::kernels {

AttnLayout contiguous_layout(int heads, int L, int D) {
  return AttnLayout{static_cast<int64_t>(heads) * L * D, static_cast<int64_t>(L) * D, D};
}

namespace {
const float* at(const float* base, const AttnLayout& l, int b, int h, int i) {
  return base + b * l.batch_stride + h * l.head_stride + i * l.row_stride;
}
float* at(float* base, const AttnLayout& l, int b, int h, int i) {
  return base + b * l.batch_stride + h * l.head_stride + i * l.row_stride;
}
bool visible(const AttnParams& p, int b, int i, int j) {
  if (p.causal && j > i) return false;
  if (p.key_padding && p.key_padding[static_cast<int64_t>(b) * p.Lk + j]) return false;
  return true;
}

// P[i, j] = softmax_j(scale * q_i . k_j) in double; returns false for empty rows.
void probabilities(const AttnParams& p, const float* Q, const float* K, int b, int h,
                   std::vector<double>& P, std::vector<double>& lse) {
  const double ninf = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < p.Lq; ++i) {
    const float* q = at(Q, p.q, b, h, i);
    double mx = ninf;
    for (int j = 0; j < p.Lk; ++j) {
      double s = ninf;
      if (visible(p, b, i, j)) {
        const float* k = at(K, p.k, b, h, j);
        double dot = 0.0;
        for (int d = 0; d < p.head_dim; ++d) dot += static_cast<double>(q[d]) * k[d];
        s = dot * p.scale;
      }
      P[static_cast<size_t>(i) * p.Lk + j] = s;
      if (s > mx) mx = s;
    }
    if (mx == ninf) {
      for (int j = 0; j < p.Lk; ++j) P[static_cast<size_t>(i) * p.Lk + j] = 0.0;
      lse[i] = ninf;
      continue;
    }
    double sum = 0.0;
    for (int j = 0; j < p.Lk; ++j) {
      double& e = P[static_cast<size_t>(i) * p.Lk + j];
      e = std::exp(e - mx);
      sum += e;
    }
    for (int j = 0; j < p.Lk; ++j) P[static_cast<size_t>(i) * p.Lk + j] /= sum;
    lse[i] = mx + std::log(sum);
  }
}
}  // namespace

void attention_forward_reference(const AttnParams& p, const float* Q, const float* K,
                                 const float* V, float* O, float* lse) {
  std::vector<double> P(static_cast<size_t>(p.Lq) * p.Lk), l(p.Lq);
  for (int b = 0; b < p.batch; ++b) {
    for (int h = 0; h < p.heads; ++h) {
      probabilities(p, Q, K, b, h, P, l);
      for (int i = 0; i < p.Lq; ++i) {
        float* o = at(O, p.o, b, h, i);
        for (int d = 0; d < p.head_dim; ++d) {
          double acc = 0.0;
          for (int j = 0; j < p.Lk; ++j) acc += P[static_cast<size_t>(i) * p.Lk + j] * at(V, p.v, b, h, j)[d];
          o[d] = static_cast<float>(acc);
        }
        lse[(static_cast<int64_t>(b) * p.heads + h) * p.Lq + i] = static_cast<float>(l[i]);
      }
    }
  }
}

void attention_backward_reference(const AttnParams& p, const float* Q, const float* K,
                                  const float* V, const float* /*O*/, const float* /*lse*/,
                                  const float* dO, float* dQ, float* dK, float* dV) {
  std::vector<double> P(static_cast<size_t>(p.Lq) * p.Lk), l(p.Lq), dP(p.Lk);
  for (int b = 0; b < p.batch; ++b) {
    for (int h = 0; h < p.heads; ++h) {
      probabilities(p, Q, K, b, h, P, l);
      for (int i = 0; i < p.Lq; ++i) {
        const float* dout = at(dO, p.o, b, h, i);
        const double* Pi = &P[static_cast<size_t>(i) * p.Lk];
        double dot = 0.0;
        for (int j = 0; j < p.Lk; ++j) {
          const float* v = at(V, p.v, b, h, j);
          double s = 0.0;
          for (int d = 0; d < p.head_dim; ++d) s += static_cast<double>(dout[d]) * v[d];
          dP[j] = s;
          dot += Pi[j] * s;
        }
        const float* q = at(Q, p.q, b, h, i);
        float* dq = at(dQ, p.q, b, h, i);
        for (int j = 0; j < p.Lk; ++j) {
          if (Pi[j] == 0.0) continue;
          const double dS = Pi[j] * (dP[j] - dot) * p.scale;  // gradient of the scaled score
          const float* k = at(K, p.k, b, h, j);
          float* dk = at(dK, p.k, b, h, j);
          float* dv = at(dV, p.v, b, h, j);
          for (int d = 0; d < p.head_dim; ++d) {
            dq[d] += static_cast<float>(dS * k[d]);
            dk[d] += static_cast<float>(dS * q[d]);
            dv[d] += static_cast<float>(Pi[j] * dout[d]);
          }
        }
      }
    }
  }
}

}  // namespace attnfc::kernels
