#pragma once
// The kernels of one instruction set as a table of function pointers. Each file in
// src/kernels/isa/ is compiled once per instruction set, inside the namespace
// attnfc::kernels::<isa> (so no inline function or template of one path can be picked
// by the linker for another), and isa/table.cpp fills that path's table. dispatch.cpp
// defines the public kernel functions as calls through the active table.
#include <cstdint>

#include "attnfc/kernels/activation.hpp"
#include "attnfc/kernels/adamw.hpp"
#include "attnfc/kernels/attention.hpp"
#include "attnfc/kernels/dropout.hpp"
#include "attnfc/kernels/gemm.hpp"
#include "attnfc/kernels/isa.hpp"
#include "attnfc/kernels/layernorm.hpp"
#include "attnfc/kernels/softmax.hpp"

namespace attnfc::kernels {

namespace gemm_detail {
// GEMM micro-kernel paths inside one instruction set (tests force each): Small is the
// unpacked path for tiny products; the packed paths exist where the set has them.
enum class Path : int { Auto = 0, Small = 1, Portable = 2, Avx2 = 3, Avx512 = 4, Neon = 5 };
}  // namespace gemm_detail

struct KernelTable {
  Isa isa;
  decltype(&kernels::gemm) gemm;
  decltype(&kernels::gemm_strided_batched) gemm_strided_batched;
  decltype(&kernels::softmax_forward) softmax_forward;
  decltype(&kernels::softmax_backward) softmax_backward;
  decltype(&kernels::layernorm_forward) layernorm_forward;
  decltype(&kernels::layernorm_backward) layernorm_backward;
  decltype(&kernels::gelu_forward) gelu_forward;
  decltype(&kernels::gelu_backward) gelu_backward;
  decltype(&kernels::dropout_forward) dropout_forward;
  decltype(&kernels::dropout_backward) dropout_backward;
  decltype(&kernels::adamw_update) adamw_update;
  decltype(&kernels::attention_forward) attention_forward;
  decltype(&kernels::attention_backward) attention_backward;
  // GEMM with a forced micro-kernel path; threaded says whether it may open a parallel
  // region. An unavailable path falls back to the set's best packed one.
  void (*gemm_with_path)(gemm_detail::Path path, bool threaded, bool transA, bool transB, int M,
                         int N, int K, float alpha, const float* A, int lda, const float* B,
                         int ldb, float beta, float* C, int ldc, const Epilogue& ep);
  bool (*gemm_path_available)(gemm_detail::Path path);
};

// Throws std::invalid_argument naming `who` unless the sizes are in range (head_dim 1..256).
// Common code, so that no instruction set's objects instantiate std::string.
void check_attention_params(const AttnParams& p, const char* who);

// The table of one compiled instruction set (null when it is not compiled in), and the
// active one.
const KernelTable* isa_table(Isa isa);
const KernelTable& active_table();

}  // namespace attnfc::kernels
