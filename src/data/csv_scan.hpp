#pragma once
// The CSV tokenizer's field scan (first delimiter, '\n' or '\r'), one function per
// instruction set, picked at run time: the data layer is compiled for any x86-64 (or
// any architecture) and must not depend on src/kernels, so it asks the CPU itself
// (__builtin_cpu_supports) and reads ATTNFC_KERNELS itself (portable forces the
// scalar scan, avx2 caps it at AVX2). Every path returns the same pointer; the vector
// ones only find the first hit of a block faster. Not part of the public API.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ATTNFC_CSV_SCAN_X86 1
#endif

namespace attnfc::data::detail {

enum class ScanPath : int { Scalar = 0, Avx2 = 1, Avx512 = 2 };

using FieldEndFn = const char* (*)(const char* p, const char* end, char delim);

inline const char* find_field_end_scalar(const char* p, const char* end, char delim) {
  while (p < end && *p != delim && *p != '\n' && *p != '\r') ++p;
  return p;
}

#if defined(ATTNFC_CSV_SCAN_X86)
// Most cells are short, so one 32-byte compare usually finds the end; the scalar loop
// handles the last < 32 bytes.
__attribute__((target("avx2"))) inline const char* find_field_end_avx2(const char* p,
                                                                       const char* end,
                                                                       char delim) {
  const __m256i vd = _mm256_set1_epi8(delim), vn = _mm256_set1_epi8('\n'),
                vr = _mm256_set1_epi8('\r');
  while (end - p >= 32) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i hit =
        _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(x, vd), _mm256_cmpeq_epi8(x, vn)),
                        _mm256_cmpeq_epi8(x, vr));
    const uint32_t m = static_cast<uint32_t>(_mm256_movemask_epi8(hit));
    if (m) return p + __builtin_ctz(m);
    p += 32;
  }
  return find_field_end_scalar(p, end, delim);
}

// The same with 64-byte compares into a mask register.
__attribute__((target("avx512f,avx512bw"))) inline const char* find_field_end_avx512(
    const char* p, const char* end, char delim) {
  const __m512i vd = _mm512_set1_epi8(delim), vn = _mm512_set1_epi8('\n'),
                vr = _mm512_set1_epi8('\r');
  while (end - p >= 64) {
    const __m512i x = _mm512_loadu_si512(p);
    const uint64_t m = _mm512_cmpeq_epi8_mask(x, vd) | _mm512_cmpeq_epi8_mask(x, vn) |
                       _mm512_cmpeq_epi8_mask(x, vr);
    if (m) return p + __builtin_ctzll(m);
    p += 64;
  }
  return find_field_end_scalar(p, end, delim);
}
#endif

// Whether this CPU (and its operating system) runs the path.
inline bool scan_path_supported(ScanPath path) {
#if defined(ATTNFC_CSV_SCAN_X86)
  __builtin_cpu_init();  // harmless when done already; needed before main
#endif
  switch (path) {
    case ScanPath::Scalar:
      return true;
#if defined(ATTNFC_CSV_SCAN_X86)
    case ScanPath::Avx2:
      return __builtin_cpu_supports("avx2");
    case ScanPath::Avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
#else
    default:
      return false;
#endif
  }
  return false;
}

// The path's scan function; the scalar one when the CPU cannot run it.
inline FieldEndFn scan_function(ScanPath path) {
  if (!scan_path_supported(path)) return &find_field_end_scalar;
#if defined(ATTNFC_CSV_SCAN_X86)
  if (path == ScanPath::Avx512) return &find_field_end_avx512;
  if (path == ScanPath::Avx2) return &find_field_end_avx2;
#endif
  return &find_field_end_scalar;
}

// The best supported path, capped by ATTNFC_KERNELS (portable: scalar; avx2: at most
// AVX2). Other values, valid or not, are the kernels' business and leave the best.
inline ScanPath default_scan_path() {
  ScanPath best = ScanPath::Scalar;
  if (scan_path_supported(ScanPath::Avx512)) {
    best = ScanPath::Avx512;
  } else if (scan_path_supported(ScanPath::Avx2)) {
    best = ScanPath::Avx2;
  }
  const char* env = std::getenv("ATTNFC_KERNELS");
  if (env != nullptr && std::strcmp(env, "portable") == 0) return ScanPath::Scalar;
  if (env != nullptr && std::strcmp(env, "avx2") == 0 && best == ScanPath::Avx512) {
    return ScanPath::Avx2;
  }
  return best;
}

// The path CsvTable::parse uses (default_scan_path() on first use), and a way for tests
// and benchmarks to force one (an unsupported path falls back to the scalar scan).
// Defined in csv.cpp; not to be called while another thread parses.
ScanPath scan_path();
void set_scan_path(ScanPath path);

}  // namespace attnfc::data::detail
