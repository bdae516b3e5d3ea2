// This instruction set's KernelTable (isa_table.hpp), which dispatch.cpp selects at run time.
#include "isa.hpp"

#include "gemm_internal.hpp"

namespace attnfc::kernels::ATTNFC_ISA {

extern const KernelTable kTable;
const KernelTable kTable = {
    kIsa,
    &gemm,
    &gemm_strided_batched,
    &softmax_forward,
    &softmax_backward,
    &layernorm_forward,
    &layernorm_backward,
    &gelu_forward,
    &gelu_backward,
    &dropout_forward,
    &dropout_backward,
    &adamw_update,
    &attention_forward,
    &attention_backward,
    &gemm_detail::gemm_with_path,
    &gemm_detail::path_available,
};

}  // namespace attnfc::kernels::ATTNFC_ISA
