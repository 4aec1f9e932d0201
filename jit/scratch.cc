#include "jit/scratch.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>

namespace amarena::jit {

namespace {

std::atomic<ScratchPlacement> placement{ScratchPlacement::kBack};

size_t PageBytes() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// A mapping of `usable` bytes (whole pages) between two guard pages.
class GuardedArea {
 public:
  ~GuardedArea() { Release(); }
  bool Reserve(size_t bytes) {
    const size_t page = PageBytes();
    const size_t usable = (bytes + page - 1) / page * page;
    void* m = mmap(nullptr, usable + 2 * page, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return false;
    char* inner = static_cast<char*>(m) + page;
    if (mprotect(inner, usable, PROT_READ | PROT_WRITE) != 0) {
      munmap(m, usable + 2 * page);
      return false;
    }
    Release();
    map_ = static_cast<char*>(m);
    usable_ = usable;
    return true;
  }
  size_t usable() const { return usable_; }
  char* begin() const { return map_ + PageBytes(); }

 private:
  void Release() {
    if (map_ != nullptr) munmap(map_, usable_ + 2 * PageBytes());
    map_ = nullptr;
    usable_ = 0;
  }
  char* map_ = nullptr;
  size_t usable_ = 0;
};

}  // namespace

void* ThreadScratch(int64_t bytes) {
  thread_local GuardedArea area;
  const size_t want = static_cast<size_t>(bytes);
  if (area.usable() < want && !area.Reserve(want)) return nullptr;
  if (placement.load(std::memory_order_relaxed) == ScratchPlacement::kFront)
    return area.begin();
  return area.begin() + (area.usable() - want);
}

void SetScratchPlacementForTesting(ScratchPlacement p) { placement.store(p); }

}  // namespace amarena::jit
