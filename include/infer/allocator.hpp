// Memory for Mats: an aligned allocator (the default), a pooled one that hands freed blocks back
// out, and a counting wrapper that tests use to prove what a code path allocates.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

namespace infer {

/// Every allocation is aligned to this many bytes: the widest SIMD load (AVX-512, 64 bytes) and a
/// cache line.
inline constexpr std::size_t kAlignment = 64;

constexpr std::size_t align_up(std::size_t n, std::size_t a = kAlignment) {
  return (n + a - 1) / a * a;
}

/// Where Mats get their memory. Implementations must return kAlignment-aligned blocks and be
/// thread-safe.
class Allocator {
 public:
  virtual ~Allocator() = default;
  /// Returns a block of at least `bytes` bytes, or nullptr when out of memory.
  virtual void* allocate(std::size_t bytes) = 0;
  /// Returns a block obtained from allocate(bytes) on this allocator.
  virtual void deallocate(void* p, std::size_t bytes) = 0;
};

/// Plain aligned operator new/delete.
class AlignedAllocator final : public Allocator {
 public:
  void* allocate(std::size_t bytes) override {
    return ::operator new (align_up(bytes), std::align_val_t{kAlignment}, std::nothrow);
  }
  void deallocate(void* p, std::size_t) override {
    ::operator delete (p, std::align_val_t{kAlignment});
  }
};

/// The allocator used when an Option names none.
inline Allocator* default_allocator() {
  static AlignedAllocator instance;
  return &instance;
}

/// Keeps freed blocks and reuses one for a later request of at most its size and at least half
/// of it, so steady-state inference stops calling the system allocator.
class PoolAllocator final : public Allocator {
 public:
  explicit PoolAllocator(Allocator* upstream = default_allocator()) : upstream_(upstream) {}
  PoolAllocator(const PoolAllocator&) = delete;
  PoolAllocator& operator=(const PoolAllocator&) = delete;
  ~PoolAllocator() override { clear(); }

  void* allocate(std::size_t bytes) override {
    bytes = align_up(bytes);
    {
      std::lock_guard lock(mutex_);
      auto best = free_.end();
      for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->bytes >= bytes && it->bytes / 2 <= bytes &&
            (best == free_.end() || it->bytes < best->bytes))
          best = it;
      }
      if (best != free_.end()) {
        Block b = *best;
        free_.erase(best);
        used_.push_back(b);
        return b.ptr;
      }
    }
    void* p = upstream_->allocate(bytes);
    if (p) {
      std::lock_guard lock(mutex_);
      used_.push_back({p, bytes});
    }
    return p;
  }

  void deallocate(void* p, std::size_t) override {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(used_.begin(), used_.end(), [p](const Block& b) { return b.ptr == p; });
    if (it == used_.end()) return;  // not ours: a caller bug, but never a double free here
    free_.push_back(*it);
    used_.erase(it);
  }

  /// Returns every free block to the upstream allocator.
  void clear() {
    std::lock_guard lock(mutex_);
    for (const Block& b : free_) upstream_->deallocate(b.ptr, b.bytes);
    free_.clear();
  }

  std::size_t free_blocks() const {
    std::lock_guard lock(mutex_);
    return free_.size();
  }

 private:
  struct Block {
    void* ptr;
    std::size_t bytes;
  };
  Allocator* upstream_;
  mutable std::mutex mutex_;
  std::vector<Block> free_;
  std::vector<Block> used_;
};

/// Counts what passes through it; tests use it to prove that a path allocates nothing, or
/// exactly what it should, and that everything is given back.
class CountingAllocator final : public Allocator {
 public:
  explicit CountingAllocator(Allocator* upstream = default_allocator()) : upstream_(upstream) {}

  void* allocate(std::size_t bytes) override {
    void* p = upstream_->allocate(bytes);
    if (p) {
      ++allocations_;
      std::size_t live = live_bytes_ += bytes;
      std::size_t peak = peak_bytes_.load();
      while (live > peak && !peak_bytes_.compare_exchange_weak(peak, live)) {
      }
    }
    return p;
  }
  void deallocate(void* p, std::size_t bytes) override {
    ++deallocations_;
    live_bytes_ -= bytes;
    upstream_->deallocate(p, bytes);
  }

  std::size_t allocations() const { return allocations_; }
  std::size_t deallocations() const { return deallocations_; }
  std::size_t live_bytes() const { return live_bytes_; }
  std::size_t peak_bytes() const { return peak_bytes_; }

 private:
  Allocator* upstream_;
  std::atomic<std::size_t> allocations_{0}, deallocations_{0}, live_bytes_{0}, peak_bytes_{0};
};

}  // namespace infer
