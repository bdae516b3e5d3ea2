// Materialising attention: builds the Lq x Lk score matrix per (batch, head).
// O(L^2) memory; kept as the ground truth the fused kernel is tested against.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attnfc/kernels/attention.hpp"

namespace attnfc::kernels {

AttnLayout contiguous_layout(int heads, int L, int D) {
  return AttnLayout{static_cast<int64_t>(heads) * L * D, static_cast<int64_t>(L) * D, D};
}

namespace {
template <class T>
T* at(T* base, const AttnLayout& l, int b, int h, int i) {
  return base + b * l.batch_stride + h * l.head_stride + static_cast<int64_t>(i) * l.row_stride;
}
bool visible(const AttnParams& p, int b, int i, int j) {
  if (p.causal && j > i) return false;
  if (p.key_padding && p.key_padding[static_cast<int64_t>(b) * p.Lk + j]) return false;
  return true;
}

// P[i, j] = softmax_j(scale * q_i . k_j) in double; returns false for empty rows.
template <class T>
void probabilities(const AttnParams& p, const T* Q, const T* K, int b, int h,
                   std::vector<double>& P, std::vector<double>& lse) {
  const double ninf = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < p.Lq; ++i) {
    const T* q = at(Q, p.q, b, h, i);
    double mx = ninf;
    for (int j = 0; j < p.Lk; ++j) {
      double s = ninf;
      if (visible(p, b, i, j)) {
        const T* k = at(K, p.k, b, h, j);
        double dot = 0.0;
        for (int d = 0; d < p.head_dim; ++d) dot += static_cast<double>(q[d]) * k[d];
        s = dot * static_cast<double>(p.scale);
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
template <class T>
void forward_impl(const AttnParams& p, const T* Q, const T* K, const T* V, T* O, T* lse) {
  std::vector<double> P(static_cast<size_t>(p.Lq) * p.Lk), l(p.Lq);
  for (int b = 0; b < p.batch; ++b) {
    for (int h = 0; h < p.heads; ++h) {
      probabilities(p, Q, K, b, h, P, l);
      for (int i = 0; i < p.Lq; ++i) {
        T* o = at(O, p.o, b, h, i);
        for (int d = 0; d < p.head_dim; ++d) {
          double acc = 0.0;
          for (int j = 0; j < p.Lk; ++j)
            acc += P[static_cast<size_t>(i) * p.Lk + j] * at(V, p.v, b, h, j)[d];
          o[d] = static_cast<T>(acc);
        }
        lse[(static_cast<int64_t>(b) * p.heads + h) * p.Lq + i] = static_cast<T>(l[i]);
      }
    }
  }
}

// Gradients are summed in double per (batch, head) and added to dQ/dK/dV once.
template <class T>
void backward_impl(const AttnParams& p, const T* Q, const T* K, const T* V, const T* dO, T* dQ,
                   T* dK, T* dV) {
  const size_t D = static_cast<size_t>(p.head_dim);
  std::vector<double> P(static_cast<size_t>(p.Lq) * p.Lk), l(p.Lq), dP(p.Lk);
  std::vector<double> gq(p.Lq * D), gk(p.Lk * D), gv(p.Lk * D);
  for (int b = 0; b < p.batch; ++b) {
    for (int h = 0; h < p.heads; ++h) {
      probabilities(p, Q, K, b, h, P, l);
      std::fill(gq.begin(), gq.end(), 0.0);
      std::fill(gk.begin(), gk.end(), 0.0);
      std::fill(gv.begin(), gv.end(), 0.0);
      for (int i = 0; i < p.Lq; ++i) {
        const T* dout = at(dO, p.o, b, h, i);
        const double* Pi = P.data() + static_cast<size_t>(i) * p.Lk;
        double dot = 0.0;  // sum_j P_ij dP_ij = <dO_i, O_i>
        for (int j = 0; j < p.Lk; ++j) {
          const T* v = at(V, p.v, b, h, j);
          double s = 0.0;
          for (size_t d = 0; d < D; ++d) s += static_cast<double>(dout[d]) * v[d];
          dP[j] = s;
          dot += Pi[j] * s;
        }
        const T* q = at(Q, p.q, b, h, i);
        for (int j = 0; j < p.Lk; ++j) {
          if (Pi[j] == 0.0) continue;
          // gradient of the unscaled score q_i . k_j
          const double dS = Pi[j] * (dP[j] - dot) * static_cast<double>(p.scale);
          const T* k = at(K, p.k, b, h, j);
          for (size_t d = 0; d < D; ++d) {
            gq[i * D + d] += dS * k[d];
            gk[j * D + d] += dS * q[d];
            gv[j * D + d] += Pi[j] * dout[d];
          }
        }
      }
      for (int i = 0; i < p.Lq; ++i)
        for (size_t d = 0; d < D; ++d) at(dQ, p.q, b, h, i)[d] += static_cast<T>(gq[i * D + d]);
      for (int j = 0; j < p.Lk; ++j)
        for (size_t d = 0; d < D; ++d) {
          at(dK, p.k, b, h, j)[d] += static_cast<T>(gk[j * D + d]);
          at(dV, p.v, b, h, j)[d] += static_cast<T>(gv[j * D + d]);
        }
    }
  }
}
}  // namespace

void attention_forward_reference(const AttnParams& p, const float* Q, const float* K,
                                 const float* V, float* O, float* lse) {
  forward_impl(p, Q, K, V, O, lse);
}
void attention_forward_reference(const AttnParams& p, const double* Q, const double* K,
                                 const double* V, double* O, double* lse) {
  forward_impl(p, Q, K, V, O, lse);
}

void attention_backward_reference(const AttnParams& p, const float* Q, const float* K,
                                  const float* V, const float* /*O*/, const float* /*lse*/,
                                  const float* dO, float* dQ, float* dK, float* dV) {
  backward_impl(p, Q, K, V, dO, dQ, dK, dV);
}
void attention_backward_reference(const AttnParams& p, const double* Q, const double* K,
                                  const double* V, const double* dO, double* dQ, double* dK,
                                  double* dV) {
  backward_impl(p, Q, K, V, dO, dQ, dK, dV);
}

}  // namespace attnfc::kernels
