#pragma once
// Which instruction set the kernels run on. Every kernel (GEMM, softmax, layernorm,
// GELU, dropout, AdamW, fused attention) is compiled once per instruction set in this
// build; the best one the CPU supports is picked at run time (cpuid), unless the
// environment variable ATTNFC_KERNELS names one (avx512 | avx2 | portable on x86-64,
// neon | portable on aarch64).
// All paths compute the same bits: the same FMAs in the same order, the same
// polynomials, the same fixed reduction trees (docs/ARCHITECTURE.md, "Kernel paths").
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnfc/base/enum_names.hpp"

namespace attnfc::kernels {

enum class Isa : int { Portable = 0, Avx2 = 1, Avx512 = 2, Neon = 3 };

const char* isa_name(Isa isa);  // "portable", "avx2", "avx512", "neon"
std::optional<Isa> isa_from_name(std::string_view name);

// Paths compiled into this binary, best first.
std::vector<Isa> compiled_isas();
// Compiled in and supported by this CPU (and its operating system), best first.
std::vector<Isa> supported_isas();
bool isa_supported(Isa isa);

// The path the kernels use now. On first use it is chosen from ATTNFC_KERNELS or, when
// that is unset or empty, the best supported path.
Isa active_isa();
// Forces a path (tests, benchmarks); throws std::invalid_argument naming the choices when
// the name is unknown or this CPU cannot run it. Not to be called while kernels run.
void set_isa(Isa isa);
void set_isa(std::string_view name);
// Applies ATTNFC_KERNELS now (the CLI calls it at start so a bad value is reported as an
// input error before any work); throws std::invalid_argument like set_isa.
void select_isa_from_environment();

// One line for --version, e.g.
//   kernels: avx2 (the best this cpu runs); compiled: avx512 avx2 portable; this cpu runs: avx2
//   portable
std::string isa_report();

}  // namespace attnfc::kernels

template <>
struct attnfc::EnumNames<attnfc::kernels::Isa> {
  static constexpr std::array<const char*, 4> words{"portable", "avx2", "avx512", "neon"};
};
