// linear and matmul: every product, forward and backward, is a GEMM call.
#include <algorithm>
#include <climits>
#include <string>

#include "attnfc/autograd/engine.hpp"
#include "attnfc/autograd/ops.hpp"
#include "attnfc/kernels/activation.hpp"
#include "linear_internal.hpp"
#include "strided.hpp"

namespace attnfc::ag {

namespace {

int checked_int(int64_t v, const char* op) {
  if (v > INT_MAX) op_error(op, "dimension " + std::to_string(v) + " exceeds the GEMM limit");
  return static_cast<int>(v);
}

// A [rows, cols] matrix stored either row-major (trans = false: element (i, j) at
// i * ld + j) or column-major (trans = true: at j * ld + i), as GEMM reads it.
struct MatrixLayout {
  bool ok = false;
  bool trans = false;
  int64_t ld = 0;
};

MatrixLayout matrix_layout(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  MatrixLayout m;
  if ((cols == 1 || col_stride == 1) && (rows == 1 || row_stride >= cols)) {
    m = {true, false, rows == 1 ? cols : row_stride};
  } else if ((rows == 1 || row_stride == 1) && (cols == 1 || col_stride >= rows)) {
    m = {true, true, cols == 1 ? rows : col_stride};
  }
  return m;
}

// Leading dims [0, nd-2) collapse into one batch index with a single stride.
bool batch_collapsible(const Tensor& t, int64_t* batch_stride) {
  const int nd = t.ndim();
  int64_t stride = 0, expected = -1;
  for (int d = nd - 3; d >= 0; --d) {
    if (t.size(d) == 1) continue;
    if (expected >= 0 && t.stride(d) != expected) return false;
    if (expected < 0) stride = t.stride(d);
    expected = t.stride(d) * t.size(d);
  }
  *batch_stride = stride;
  return true;
}

// Leading dims as outer x inner batches, each with one stride per operand: all in
// `inner` when they collapse, else (4-d only) dim 0 outer and dim 1 inner. The
// latter covers head-split views ([B, L, H, D] permuted to [B, H, L, D]) with no copy.
struct Batches {
  int outer = 1, inner = 1;
  int64_t outer_stride = 0, inner_stride = 0;
};

void split_batches(const Tensor& A, const Tensor& B, const Tensor& C, Batches* ba, Batches* bb,
                   Batches* bc) {
  const int nd = C.ndim();
  int64_t lead = 1;
  for (int d = 0; d < nd - 2; ++d) lead *= C.size(d);
  int64_t sa = 0, sb = 0;
  const bool ca = batch_collapsible(A, &sa), cb = batch_collapsible(B, &sb);
  if (ca && cb) {
    const int n = static_cast<int>(lead);
    *ba = {1, n, 0, sa};
    *bb = {1, n, 0, sb};
    *bc = {1, n, 0, C.size(-2) * C.size(-1)};
    return;
  }
  // Only 4-d tensors have two leading dims that can fail to collapse.
  auto two_level = [](const Tensor& t) {
    return Batches{static_cast<int>(t.size(0)), static_cast<int>(t.size(1)), t.stride(0),
                   t.stride(1)};
  };
  *ba = two_level(A);
  *bb = two_level(B);
  *bc = two_level(C);
}

// C[o, i] = beta C + op(A[o, i]) . op(B[o, i]) over all batches.
void batched_gemm(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const Batches& ba,
                  const float* B, int ldb, const Batches& bb, float beta, float* C, int ldc,
                  const Batches& bc) {
  for (int o = 0; o < bc.outer; ++o) {
    kernels::gemm_strided_batched(ta, tb, M, N, K, 1.0f, A + o * ba.outer_stride, lda,
                                  ba.inner_stride, B + o * bb.outer_stride, ldb, bb.inner_stride,
                                  beta, C + o * bc.outer_stride, ldc, bc.inner_stride, bc.inner);
  }
}

// ---------------------------------------------------------------- linear
// Forward:  Z[M, out] = X[M, in] . W^T + b;  Y = act(Z)
// Backward: dZ = dY * act'(Z);  dX += dZ . W (NN);  dW += dZ^T . X (TN);  db += colsum(dZ)
// iarg: 0 act, 1 W stored transposed (W^T row-major), 2 ldw, 3 ldx.  saved[0]: Z (GELU only).
void linear_backward(const TensorNode& n) {
  const Tensor& x = n.in[0];
  const Tensor& W = n.in[1];
  const Tensor& b = n.in[2];
  const auto act = static_cast<kernels::Activation>(n.iarg[0]);
  const bool w_is_wt = n.iarg[1] != 0;
  const int ldw = static_cast<int>(n.iarg[2]), ldx = static_cast<int>(n.iarg[3]);
  const int out_f = static_cast<int>(W.size(0)), in_f = static_cast<int>(W.size(1));
  const int M = static_cast<int>(x.numel() / in_f);
  const float* dY = n.out.grad();
  const float* dZ = dY;
  if (act == kernels::Activation::Relu) {
    float* t = scratch_floats(static_cast<int64_t>(M) * out_f);
    const float* y = n.out.data();
    detail::flat_loop(static_cast<int64_t>(M) * out_f,
                      [&](int64_t i) { t[i] = y[i] > 0.0f ? dY[i] : 0.0f; });
    dZ = t;
  } else if (act == kernels::Activation::GeluTanh || act == kernels::Activation::GeluErf) {
    float* t = scratch_zeros(static_cast<int64_t>(M) * out_f);
    kernels::gelu_backward(n.saved[0], dY, t, static_cast<int64_t>(M) * out_f,
                           act == kernels::Activation::GeluTanh);
    dZ = t;
  }
  // W as stored: [out, in] row-major (w_is_wt = false) or W^T [in, out] row-major.
  if (x.requires_grad()) {
    kernels::gemm(false, w_is_wt, M, in_f, out_f, 1.0f, dZ, out_f, W.data(), ldw, 1.0f, x.grad(),
                  ldx);
  }
  if (W.requires_grad()) {
    if (!w_is_wt) {
      kernels::gemm(true, false, out_f, in_f, M, 1.0f, dZ, out_f, x.data(), ldx, 1.0f, W.grad(),
                    ldw);
    } else {
      kernels::gemm(true, false, in_f, out_f, M, 1.0f, x.data(), ldx, dZ, out_f, 1.0f, W.grad(),
                    ldw);
    }
  }
  if (b.defined() && b.requires_grad()) detail::bias_grad(dZ, M, out_f, b.grad());
}

// ---------------------------------------------------------------- matmul
// C[b] = op(A[b]) . op(B[b]), with A, B read through their physical layouts.
// iarg: 0 ta (physical), 1 tb (physical), 2 lda, 3 ldb; farg unused.
// Backward (P = physical storage, t = its transpose flag):
//   tA = 0: dP_A[M, K] += dC . op(B)^T          tA = 1: dP_A[K, M] += op(B) . dC^T
//   tB = 0: dP_B[K, N] += op(A)^T . dC          tB = 1: dP_B[N, K] += dC^T . op(A)
void matmul_backward(const TensorNode& n) {
  const Tensor& A = n.in[0];
  const Tensor& B = n.in[1];
  const bool ta = n.iarg[0] != 0, tb = n.iarg[1] != 0;
  const int lda = static_cast<int>(n.iarg[2]), ldb = static_cast<int>(n.iarg[3]);
  const int M = static_cast<int>(n.out.size(-2)), N = static_cast<int>(n.out.size(-1));
  const int K = static_cast<int>(n.farg[0]);  // exact: K < 2^24 is checked in matmul()
  if (n.out.numel() == 0 || K == 0) return;
  Batches ba, bb, bc;
  split_batches(A, B, n.out, &ba, &bb, &bc);
  const float* dC = n.out.grad();
  if (A.requires_grad()) {
    if (!ta) {
      batched_gemm(false, !tb, M, K, N, dC, N, bc, B.data(), ldb, bb, 1.0f, A.grad(), lda, ba);
    } else {
      batched_gemm(tb, true, K, M, N, B.data(), ldb, bb, dC, N, bc, 1.0f, A.grad(), lda, ba);
    }
  }
  if (B.requires_grad()) {
    if (!tb) {
      batched_gemm(!ta, false, K, N, M, A.data(), lda, ba, dC, N, bc, 1.0f, B.grad(), ldb, bb);
    } else {
      batched_gemm(true, ta, N, K, M, dC, N, bc, A.data(), lda, ba, 1.0f, B.grad(), ldb, bb);
    }
  }
}

}  // namespace

void detail::bias_grad(const float* dZ, int M, int out_f, float* db) {
  // Column sums, each column in row order: a fixed order at any thread count.
  // Threads take disjoint column blocks (parallel over outputs).
  constexpr int kBlock = 64;
  const int blocks = (out_f + kBlock - 1) / kBlock;
  auto column_block = [&](int blk) {
    const int j0 = blk * kBlock, j1 = std::min(out_f, j0 + kBlock);
    for (int r = 0; r < M; ++r) {
      const float* row = dZ + static_cast<int64_t>(r) * out_f;
      for (int j = j0; j < j1; ++j) db[j] += row[j];
    }
  };
  if (static_cast<int64_t>(M) * out_f < detail::kParallelMin || blocks < 2) {
    for (int blk = 0; blk < blocks; ++blk) column_block(blk);
  } else {
#pragma omp parallel
    {
      kernels::enable_flush_to_zero();
#pragma omp for schedule(static)
      for (int blk = 0; blk < blocks; ++blk) column_block(blk);
    }
  }
}

Tensor linear(const Tensor& x_in, const Tensor& W_in, const Tensor& b_in, kernels::Activation act) {
  if (W_in.ndim() != 2)
    op_error("linear", "weight must be 2-d [out, in], got " + W_in.shape().str());
  const int64_t out_f = W_in.size(0), in_f = W_in.size(1);
  if (x_in.ndim() < 1 || x_in.size(-1) != in_f) {
    op_error("linear", "input " + x_in.shape().str() + " does not end in in_features = " +
                           std::to_string(in_f) + " of weight " + W_in.shape().str());
  }
  if (b_in.defined() && (b_in.ndim() != 1 || b_in.size(0) != out_f)) {
    op_error("linear", "bias must be [" + std::to_string(out_f) + "], got " + b_in.shape().str());
  }
  // X must be a row-strided matrix [M, in]; anything else gets a (taped) copy.
  Tensor x = x_in;
  int64_t batch_stride = 0;
  if (x.ndim() >= 2) {
    MatrixLayout l = matrix_layout(x.size(-2), in_f, x.stride(-2), x.stride(-1));
    const bool rows_collapse =
        l.ok && !l.trans && batch_collapsible(x, &batch_stride) &&
        (x.ndim() == 2 || x.numel() == 0 || batch_stride == 0 || batch_stride == x.size(-2) * l.ld);
    if (!rows_collapse) x = x.contiguous();
  } else if (x.stride(0) != 1 && in_f > 1) {
    x = x.contiguous();
  }
  const int64_t ldx_wide = x.ndim() >= 2 && x.size(-2) > 1 ? x.stride(-2) : in_f;
  Tensor W = W_in;
  MatrixLayout wl = matrix_layout(out_f, in_f, W.stride(0), W.stride(1));
  if (!wl.ok) {
    W = W.contiguous();
    wl = {true, false, in_f};
  }
  Tensor b = b_in;
  if (b.defined() && b.stride(0) != 1 && out_f > 1) b = b.contiguous();

  const int M = checked_int(x.numel() / std::max<int64_t>(in_f, 1), "linear");
  const int N = checked_int(out_f, "linear"), K = checked_int(in_f, "linear");
  const int ldx = checked_int(ldx_wide, "linear"), ldw = checked_int(wl.ld, "linear");
  Shape ys = x_in.shape();
  ys.dims[ys.ndim - 1] = out_f;
  TensorNode* node;
  Tensor y = make_output(ys, "linear", linear_backward, {&x, &W, &b}, &node);
  const bool gelu = act == kernels::Activation::GeluTanh || act == kernels::Activation::GeluErf;
  // op(B) = W^T: W stored [out, in] row-major needs transB; stored as W^T does not.
  const bool transB = !wl.trans;
  if (node && gelu) {
    // The backward needs the pre-activation, so GELU is applied after the GEMM here.
    float* z = arena_floats(static_cast<int64_t>(M) * N);
    kernels::gemm(false, transB, M, N, K, 1.0f, x.data(), ldx, W.data(), ldw, 0.0f, z, N,
                  kernels::Epilogue{b.defined() ? b.data() : nullptr, kernels::Activation::None});
    kernels::gelu_forward(z, y.data(), static_cast<int64_t>(M) * N,
                          act == kernels::Activation::GeluTanh);
    node->saved[0] = z;
  } else {
    kernels::gemm(false, transB, M, N, K, 1.0f, x.data(), ldx, W.data(), ldw, 0.0f, y.data(), N,
                  kernels::Epilogue{b.defined() ? b.data() : nullptr, act});
  }
  if (node) {
    node->in[0] = x;
    node->in[1] = W;
    node->in[2] = b;
    node->iarg[0] = static_cast<int64_t>(act);
    node->iarg[1] = wl.trans ? 1 : 0;
    node->iarg[2] = ldw;
    node->iarg[3] = ldx;
  }
  return y;
}

Tensor matmul(const Tensor& a_in, const Tensor& b_in, bool ta_user, bool tb_user) {
  if (a_in.ndim() < 2 || a_in.ndim() != b_in.ndim()) {
    op_error("matmul", "operands must have the same rank >= 2, got " + a_in.shape().str() +
                           " and " + b_in.shape().str());
  }
  const int nd = a_in.ndim();
  for (int d = 0; d < nd - 2; ++d) {
    if (a_in.size(d) != b_in.size(d)) {
      op_error("matmul",
               "leading dims differ: " + a_in.shape().str() + " vs " + b_in.shape().str());
    }
  }
  const int64_t M = ta_user ? a_in.size(-1) : a_in.size(-2);
  const int64_t K = ta_user ? a_in.size(-2) : a_in.size(-1);
  const int64_t Kb = tb_user ? b_in.size(-1) : b_in.size(-2);
  const int64_t N = tb_user ? b_in.size(-2) : b_in.size(-1);
  if (K != Kb) {
    op_error("matmul", "inner dims differ: " + a_in.shape().str() + (ta_user ? "^T" : "") + " . " +
                           b_in.shape().str() + (tb_user ? "^T" : ""));
  }
  if (K >= (int64_t{1} << 24)) op_error("matmul", "inner dimension too large");
  // Physical layouts: the user's transpose flag composes with the storage order.
  // Only a matrix without a unit stride needs a (taped) copy; leading dims are handled
  // by split_batches whatever their strides.
  auto prepare = [&](const Tensor& t, bool user_t, MatrixLayout* l) {
    Tensor u = t;
    *l = matrix_layout(u.size(-2), u.size(-1), u.stride(-2), u.stride(-1));
    if (!l->ok) {
      u = u.contiguous();
      *l = {true, false, u.size(-1)};
    }
    l->trans = l->trans != user_t;
    return u;
  };
  MatrixLayout la, lb;
  const Tensor A = prepare(a_in, ta_user, &la);
  const Tensor B = prepare(b_in, tb_user, &lb);
  Shape cs = a_in.shape();
  cs.dims[nd - 2] = M;
  cs.dims[nd - 1] = N;
  TensorNode* node;
  Tensor c = make_output(cs, "matmul", matmul_backward, {&A, &B}, &node);
  checked_int(cs.numel() / std::max<int64_t>(M * N, 1), "matmul");
  if (cs.numel() > 0) {
    Batches ba, bb, bc;
    split_batches(A, B, c, &ba, &bb, &bc);
    batched_gemm(la.trans, lb.trans, checked_int(M, "matmul"), checked_int(N, "matmul"),
                 checked_int(K, "matmul"), A.data(), checked_int(la.ld, "matmul"), ba, B.data(),
                 checked_int(lb.ld, "matmul"), bb, 0.0f, c.data(), static_cast<int>(N), bc);
  }
  if (node) {
    node->in[0] = A;
    node->in[1] = B;
    node->iarg[0] = la.trans;
    node->iarg[1] = lb.trans;
    node->iarg[2] = la.ld;
    node->iarg[3] = lb.ld;
    node->farg[0] = static_cast<float>(K);
  }
  return c;
}

}  // namespace attnfc::ag
