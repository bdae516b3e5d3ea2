#pragma once
// Moving golden fixture tensors into autograd tensors.
#include <doctest/doctest.h>

#include <cstring>

#include "attnfc/autograd/tensor.hpp"
#include "golden.hpp"

namespace golden {

inline attnfc::ag::Shape shape_of(const Tensor& t) {
  attnfc::ag::Shape s;
  s.ndim = static_cast<int>(t.shape.size());
  for (int i = 0; i < s.ndim; ++i) s.dims[i] = t.shape[i];
  return s;
}

// Copies src into dst, which must have src's shape and be contiguous.
inline void fill(const attnfc::ag::Tensor& dst, const Tensor& src) {
  REQUIRE(dst.shape() == shape_of(src));
  REQUIRE(dst.is_contiguous());
  const auto f = src.as_float();
  std::memcpy(dst.data(), f.data(), f.size() * sizeof(float));
}

}  // namespace golden
