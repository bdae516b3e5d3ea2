// The static-category embedding lookup (see model_ops.hpp): forward and backward side by side.
#include <cstring>
#include <string>

#include "attnfc/autograd/engine.hpp"
#include "attnfc/autograd/ops.hpp"
#include "model_ops.hpp"

namespace attnfc::model::detail {

namespace {

// in[0] = table [V, d]; aux = the count codes (an arena copy); iarg[0] = count.
void gather_rows_backward(const ag::TensorNode& node) {
  const ag::Tensor& table = node.in[0];
  if (!table.requires_grad()) return;
  const int64_t count = node.iarg[0], d = table.size(1);
  const auto* codes = static_cast<const int32_t*>(node.aux);
  const float* dy = node.out.grad();
  float* dt = table.grad();
  // Serial in b: rows shared by several samples sum in one fixed order (same bits anywhere).
  for (int64_t b = 0; b < count; ++b) {
    float* row = dt + static_cast<int64_t>(codes[b]) * d;
    for (int64_t j = 0; j < d; ++j) row[j] += dy[b * d + j];
  }
}

}  // namespace

ag::Tensor gather_rows(const ag::Tensor& table, const int32_t* codes, int64_t count,
                       int64_t stride) {
  if (table.ndim() != 2 || !table.is_contiguous() || count < 1 || stride < 1 || !codes) {
    ag::op_error("gather_rows", "expected a contiguous table [V, d] and count >= 1 codes, got " +
                                    table.shape().str());
  }
  const int64_t V = table.size(0), d = table.size(1);
  ag::TensorNode* node = nullptr;
  ag::Tensor y = ag::make_output({count, d}, "gather_rows", gather_rows_backward, {&table}, &node);
  auto* kept = static_cast<int32_t*>(ag::arena_alloc(sizeof(int32_t) * count));
  float* yd = y.data();
  for (int64_t b = 0; b < count; ++b) {
    const int32_t c = codes[b * stride];
    if (c < 0 || c >= V) {
      ag::op_error("gather_rows", "code " + std::to_string(c) + " of sample " + std::to_string(b) +
                                      " is outside the table's " + std::to_string(V) + " rows");
    }
    kept[b] = c;
    std::memcpy(yd + b * d, table.data() + static_cast<int64_t>(c) * d, sizeof(float) * d);
  }
  if (node) {
    node->in[0] = table;
    node->aux = kept;
    node->iarg[0] = count;
  }
  return y;
}

}  // namespace attnfc::model::detail
