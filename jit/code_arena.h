// Executable memory for every kernel in the process, carved out of a few large
// mappings instead of one mapping per kernel (the OS caps a process's
// mappings: vm.max_map_count, 65530 by default).
//
// Memory is never writable and executable at once: a kernel's pages are made
// read-write, filled, then flipped to read-execute. Each kernel starts on a
// page of its own, so a page some thread may be executing is never made
// writable. Freed pages go back to PROT_NONE (stale code cannot run) and are
// reused; adjacent read-execute pages merge into one mapping.
//
//   absl::StatusOr<CodeBlock> b = CodeArena::Global().Publish(bytes, size);
//   auto fn = reinterpret_cast<void (*)(void* const*)>(b->data());
#ifndef AMARENA_JIT_CODE_ARENA_H_
#define AMARENA_JIT_CODE_ARENA_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"

namespace amarena::jit {

class CodeArena;

// A kernel's code in the arena; gives its pages back when destroyed.
class CodeBlock {
 public:
  CodeBlock() = default;
  CodeBlock(CodeBlock&& o) noexcept { *this = std::move(o); }
  CodeBlock& operator=(CodeBlock&& o) noexcept;
  ~CodeBlock();

  const void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  friend class CodeArena;
  CodeArena* arena_ = nullptr;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;   // bytes of code
  size_t pages_ = 0;  // pages held
};

struct CodeArenaStats {
  int64_t chunks = 0;       // large reservations made
  int64_t blocks = 0;       // kernels' code live now
  int64_t pages_used = 0;   // pages those hold
  int64_t pages_total = 0;  // pages reserved
};

class CodeArena {
 public:
  static CodeArena& Global();

  // Copies `size` bytes of position-independent code into executable memory.
  // ResourceExhausted if no memory can be had.
  absl::StatusOr<CodeBlock> Publish(const void* code, size_t size);
  CodeArenaStats Stats() const;

  CodeArena() = default;
  ~CodeArena();
  CodeArena(const CodeArena&) = delete;
  CodeArena& operator=(const CodeArena&) = delete;

 private:
  friend class CodeBlock;
  void Free(uint8_t* p, size_t pages);

  struct Chunk {
    uint8_t* base = nullptr;
    size_t pages = 0;
    std::map<size_t, size_t> free;  // first page -> pages, coalesced
  };
  mutable std::mutex mu_;
  std::vector<Chunk> chunks_;
  int64_t blocks_ = 0, pages_used_ = 0;
};

}  // namespace amarena::jit

#endif  // AMARENA_JIT_CODE_ARENA_H_
