#include "alloc_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace jas::test {
namespace {

std::atomic<int64_t> live{0};
std::atomic<int64_t> fail_countdown{0};

// Null when the armed failure is due (or malloc fails).
void* Allocate(std::size_t size) {
  for (int64_t n = fail_countdown.load(); n > 0;) {
    if (fail_countdown.compare_exchange_weak(n, n - 1)) {
      if (n == 1) return nullptr;
      break;
    }
  }
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p != nullptr) live.fetch_add(1);
  return p;
}

void Release(void* p) {
  if (p == nullptr) return;
  live.fetch_sub(1);
  std::free(p);
}

}  // namespace

int64_t LiveAllocations() { return live.load(); }
void FailAllocation(int64_t n) { fail_countdown.store(n); }

}  // namespace jas::test

void* operator new(std::size_t size) {
  if (void* p = jas::test::Allocate(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return jas::test::Allocate(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return jas::test::Allocate(size); }
void operator delete(void* p) noexcept { jas::test::Release(p); }
void operator delete[](void* p) noexcept { jas::test::Release(p); }
void operator delete(void* p, std::size_t) noexcept { jas::test::Release(p); }
void operator delete[](void* p, std::size_t) noexcept { jas::test::Release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { jas::test::Release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { jas::test::Release(p); }
