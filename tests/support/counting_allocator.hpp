#pragma once
// Counting replacements for the global operator new / delete, for the tests that
// prove a steady-state training step makes no heap allocation. Include this from
// exactly ONE source file per test executable (it defines the replacements).
// They count only while g_armed is true and forward to malloc/aligned_alloc, so
// sanitizers still see every allocation.
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace attnfc_test {
inline std::atomic<bool> g_armed{false};
inline std::atomic<long> g_allocations{0};
// Of those, the over-aligned ones (the autograd arenas' 64-byte blocks).
inline std::atomic<long> g_aligned_allocations{0};

inline void* counted_alloc(std::size_t n, std::size_t align) {
  if (g_armed.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1);
    if (align > alignof(std::max_align_t)) g_aligned_allocations.fetch_add(1);
  }
  if (n == 0) n = 1;
  void* p = align > alignof(std::max_align_t)
                ? std::aligned_alloc(align, (n + align - 1) / align * align)
                : std::malloc(n);
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace attnfc_test

// noinline: GCC would otherwise inline these into callers and then report the
// new/free pairs as mismatched (-Wmismatched-new-delete under the sanitizer build).
[[gnu::noinline]] void* operator new(std::size_t n) {
  return attnfc_test::counted_alloc(n, 0);
}
[[gnu::noinline]] void* operator new[](std::size_t n) {
  return attnfc_test::counted_alloc(n, 0);
}
[[gnu::noinline]] void* operator new(std::size_t n, std::align_val_t a) {
  return attnfc_test::counted_alloc(n, static_cast<std::size_t>(a));
}
[[gnu::noinline]] void* operator new[](std::size_t n, std::align_val_t a) {
  return attnfc_test::counted_alloc(n, static_cast<std::size_t>(a));
}
[[gnu::noinline]] void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return attnfc_test::counted_alloc(n, 0);
  } catch (...) {
    return nullptr;
  }
}
[[gnu::noinline]] void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return attnfc_test::counted_alloc(n, 0);
  } catch (...) {
    return nullptr;
  }
}
[[gnu::noinline]] void operator delete(void* p) noexcept {
  std::free(p);
}
[[gnu::noinline]] void operator delete[](void* p) noexcept {
  std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
[[gnu::noinline]] void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
[[gnu::noinline]] void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
