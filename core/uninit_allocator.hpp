#pragma once
// An allocator that leaves the elements a container makes without a value
// uninitialised: std::vector<T, UninitAllocator<T>>(n) and resize(n) only
// allocate. For buffers that are about to be overwritten whole (a file read
// into them, a device's values downloaded), where std::vector<T> would first
// write zeros over all of them: a pass over 134 MB for a 128^3 image's Q
// (std::complex's own constructor zeroes too, so a default-initialising
// allocator would not do). Every element must be written before it is read.
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace fhd {

template <class T>
struct UninitAllocator {
  // Objects of such a type exist in the allocated memory without a constructor
  // run (an implicit-lifetime type), and need no destructor.
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "UninitAllocator is for plain values only");
  using value_type = T;

  UninitAllocator() noexcept = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) { return std::allocator<T>().allocate(n); }
  void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>().deallocate(p, n); }

  // No value given: nothing to do (the caller writes the element later).
  template <class U>
  void construct(U*) noexcept {}
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <class U>
  bool operator==(const UninitAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const UninitAllocator<U>&) const noexcept {
    return false;
  }
};

}  // namespace fhd
