#include "jit/code_arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace amarena::jit {

namespace {

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Address space reserved at a time (no memory until pages are written).
constexpr size_t kChunkBytes = size_t{64} << 20;

}  // namespace

CodeBlock& CodeBlock::operator=(CodeBlock&& o) noexcept {
  if (this != &o) {
    if (arena_) arena_->Free(data_, pages_);
    arena_ = o.arena_;
    data_ = o.data_;
    size_ = o.size_;
    pages_ = o.pages_;
    o.arena_ = nullptr;
    o.data_ = nullptr;
    o.size_ = o.pages_ = 0;
  }
  return *this;
}

CodeBlock::~CodeBlock() {
  if (arena_) arena_->Free(data_, pages_);
}

CodeArena& CodeArena::Global() {
  // Never destroyed: kernels may outlive static destruction.
  static CodeArena* arena = new CodeArena;
  return *arena;
}

CodeArena::~CodeArena() {
  for (Chunk& c : chunks_) munmap(c.base, c.pages * PageSize());
}

absl::StatusOr<CodeBlock> CodeArena::Publish(const void* code, size_t size) {
  const size_t page = PageSize();
  const size_t pages = std::max<size_t>(1, (size + page - 1) / page);
  std::lock_guard<std::mutex> lock(mu_);
  Chunk* chunk = nullptr;
  size_t first = 0;
  for (Chunk& c : chunks_) {
    for (auto it = c.free.begin(); it != c.free.end(); ++it) {
      if (it->second < pages) continue;
      chunk = &c;
      first = it->first;
      size_t left = it->second - pages;
      c.free.erase(it);
      if (left) c.free.emplace(first + pages, left);
      break;
    }
    if (chunk) break;
  }
  if (!chunk) {
    size_t bytes = std::max(kChunkBytes, pages * page);
    void* base = mmap(nullptr, bytes, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot reserve ", bytes,
                       " bytes for kernel code: ", std::strerror(errno)));
    Chunk c;
    c.base = static_cast<uint8_t*>(base);
    c.pages = bytes / page;
    if (c.pages > pages) c.free.emplace(pages, c.pages - pages);
    chunks_.push_back(std::move(c));
    chunk = &chunks_.back();
    first = 0;
  }
  uint8_t* p = chunk->base + first * page;
  auto undo = [&](const char* what) {
    int err = errno;
    mprotect(p, pages * page, PROT_NONE);
    chunk->free.emplace(first, pages);  // not coalesced: harmless
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot ", what, " kernel code pages: ", std::strerror(err)));
  };
  if (mprotect(p, pages * page, PROT_READ | PROT_WRITE) != 0)
    return undo("write");
  std::memcpy(p, code, size);
  if (mprotect(p, pages * page, PROT_READ | PROT_EXEC) != 0)
    return undo("seal");
  ++blocks_;
  pages_used_ += static_cast<int64_t>(pages);
  CodeBlock b;
  b.arena_ = this;
  b.data_ = p;
  b.size_ = size;
  b.pages_ = pages;
  return b;
}

void CodeArena::Free(uint8_t* p, size_t pages) {
  const size_t page = PageSize();
  // Stale code must not run, and its memory goes back to the OS.
  mprotect(p, pages * page, PROT_NONE);
  madvise(p, pages * page, MADV_DONTNEED);
  std::lock_guard<std::mutex> lock(mu_);
  --blocks_;
  pages_used_ -= static_cast<int64_t>(pages);
  for (Chunk& c : chunks_) {
    if (p < c.base || p >= c.base + c.pages * page) continue;
    size_t first = static_cast<size_t>(p - c.base) / page;
    auto next = c.free.lower_bound(first);
    if (next != c.free.end() && next->first == first + pages) {
      pages += next->second;
      next = c.free.erase(next);
    }
    if (next != c.free.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == first) {
        prev->second += pages;
        return;
      }
    }
    c.free.emplace(first, pages);
    return;
  }
  AMARENA_CHECK(false);  // not ours
}

CodeArenaStats CodeArena::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  CodeArenaStats s;
  s.chunks = static_cast<int64_t>(chunks_.size());
  s.blocks = blocks_;
  s.pages_used = pages_used_;
  for (const Chunk& c : chunks_) s.pages_total += static_cast<int64_t>(c.pages);
  return s;
}

}  // namespace amarena::jit
