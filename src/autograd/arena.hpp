#pragma once
// The graph's memory (graph.cpp): bump-pointer arenas for activations and scratch, and
// the recycled gradient region. Internal to the autograd layer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#ifdef __GLIBC__  // defined by the headers above
#include <malloc.h>
#endif

namespace attnfc::ag::detail {

constexpr size_t kAlign = 64;
constexpr size_t kMinBlock = size_t{1} << 20;

// glibc serves blocks below its (adaptive, up to 32 MiB) mmap threshold from the heap
// and keeps them resident after free(); hand them back when an arena drops its blocks,
// so the consolidated step does not sit on top of the first step's memory.
inline void return_freed_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

// Blocks with a bump cursor. A step that outgrew one block (the first steps grow by
// doubling) is consolidated at reset() into a single block of its peak size, so the
// steady state holds exactly what a step needs in one block and allocates nothing.
class Arena {
 public:
  struct Mark {
    size_t current, offset, used;
  };
  ~Arena() { release(); }
  void* alloc(size_t bytes) {
    bytes = std::max<size_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
    used_ += bytes;
    peak_ = std::max(peak_, used_);
    // Same request sequence as the previous step -> the same blocks, in order.
    while (current_ < blocks_.size()) {
      Block& b = blocks_[current_];
      if (offset_ + bytes <= b.capacity) {
        void* p = b.ptr + offset_;
        offset_ += bytes;
        return p;
      }
      ++current_;
      offset_ = 0;
    }
    const size_t last = blocks_.empty() ? 0 : blocks_.back().capacity;
    add_block(std::max({bytes, kMinBlock, 2 * last}));
    offset_ = bytes;
    return blocks_.back().ptr;
  }
  Mark mark() const { return Mark{current_, offset_, used_}; }
  void rewind(const Mark& m) {
    current_ = m.current;
    offset_ = m.offset;
    used_ = m.used;
  }
  void reset() {
    if (blocks_.size() > 1) {
      // Every request of the last step (in order) fits in peak_ contiguous bytes.
      release();
      return_freed_memory();
      add_block(std::max(peak_, kMinBlock));
    }
    current_ = 0;
    offset_ = 0;
    used_ = 0;
    peak_ = 0;
  }
  size_t reserved() const {
    size_t total = 0;
    for (const Block& b : blocks_) total += b.capacity;
    return total;
  }

 private:
  struct Block {
    std::byte* ptr;
    size_t capacity;
  };
  void add_block(size_t capacity) {
    auto* ptr = static_cast<std::byte*>(::operator new(capacity, std::align_val_t(kAlign)));
    blocks_.push_back(Block{ptr, capacity});
    current_ = blocks_.size() - 1;
  }
  void release() {
    for (const Block& b : blocks_) ::operator delete(b.ptr, std::align_val_t(kAlign));
    blocks_.clear();
  }
  std::vector<Block> blocks_;
  size_t current_ = 0;
  size_t offset_ = 0;
  size_t used_ = 0;  // bytes handed out since reset (what one contiguous block would need)
  size_t peak_ = 0;  // the most used_ has been since reset (scratch rewinds)
};

// One buffer that only grows (at the start of a backward, when nothing lives in it).
class GradRegion {
 public:
  ~GradRegion() { ::operator delete(ptr_, std::align_val_t(kAlign)); }
  float* reserve(size_t floats) {
    if (floats > capacity_) {
      ::operator delete(ptr_, std::align_val_t(kAlign));
      if (ptr_) return_freed_memory();
      ptr_ = static_cast<float*>(::operator new(floats * sizeof(float), std::align_val_t(kAlign)));
      capacity_ = floats;
    }
    return ptr_;
  }
  size_t bytes() const { return capacity_ * sizeof(float); }

 private:
  float* ptr_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace attnfc::ag::detail
