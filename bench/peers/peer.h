// One f32 matmul implementation to compare: amarena itself or a peer library
// (OpenBLAS, BLIS, oneDNN, libxsmm, Eigen, XNNPACK). The problem is always
// C[m,n] = A[m,k] . B[k,n], dense, row-major, C overwritten (no accumulation),
// i.e. the Spec `matmul MxKxN f32`.
//
//   std::unique_ptr<Peer> p = MakePeer("openblas");
//   absl::Status s = p->Init(IsaCap::kAvx2);  // loads the library, fixes its
//                                              // CPU choice; once per process
//   std::printf("%s\n", p->CpuChoice().c_str());
//   absl::StatusOr<std::unique_ptr<PreparedGemm>> g =
//       p->Prepare({m, k, n}, /*threads=*/2, a, b, c);
//   (*g)->Run();                               // c = a . b
//
// A configuration a library cannot do (a thread count, an ISA cap, a shape)
// is an `Unimplemented` status whose message says why: the benchmark shows it
// as a skipped row, never a made-up number. Anything else that goes wrong is
// an error row.
//
// Peers are loaded with dlopen from exact paths (dl.h), so nothing
// here links against them and a missing library is a status, not a failure to
// start. Eigen (header-only) and libxsmm (Debian ships only a static archive)
// are compiled in when CMake finds them.
#ifndef AMARENA_BENCH_PEERS_PEER_H_
#define AMARENA_BENCH_PEERS_PEER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace amarena::bench {

// Which instruction sets a library may use: AVX2+FMA only, or the best the CPU
// offers (AVX-512 on this machine).
enum class IsaCap { kAvx2, kBest };
absl::string_view Name(IsaCap cap);  // "avx2", "best"

struct Problem {
  int64_t m = 0, k = 0, n = 0;
  double Flops() const { return 2.0 * m * k * n; }
};

// A matmul bound to one problem, thread count and set of operands: a created
// oneDNN primitive, an XNNPACK operator with its packed weights, a libxsmm
// kernel, an amarena kernel. Creation is not timed; Run is.
class PreparedGemm {
 public:
  virtual ~PreparedGemm() = default;
  virtual void Run() = 0;
  // What this instance runs, when it is more than the library's CPU choice
  // (amarena: the kernel name). Empty by default.
  virtual std::string Detail() const { return ""; }
  // Extra figures about this instance, reported next to its speed (amarena:
  // search_ms and jit_ms of its kernel).
  virtual std::vector<std::pair<std::string, double>> Extra() const {
    return {};
  }
};

class Peer {
 public:
  virtual ~Peer() = default;
  // The name in tables and on the command line ("openblas", "onednn_matmul").
  virtual std::string name() const = 0;
  // Loads the library and fixes the instruction sets it may use. Call once per
  // process, before any Prepare (several libraries read their CPU choice once,
  // at load time).
  virtual absl::Status Init(IsaCap cap) = 0;
  // After a successful Init: the CPU choice the library reports (or, where it
  // cannot be asked, what was requested and why that is all we know).
  virtual std::string CpuChoice() const = 0;
  // Sets the library's thread count to `threads` and binds the operands.
  // `c` is overwritten by Run.
  virtual absl::StatusOr<std::unique_ptr<PreparedGemm>> Prepare(
      const Problem& p, int threads, const float* a, const float* b,
      float* c) = 0;
};

// Every peer name MakePeer knows, amarena first, in table order.
const std::vector<std::string>& PeerNames();
// nullptr for an unknown name. "wrong" is a deliberately wrong implementation
// (it drops the last term of the reduction), there only so a test can show
// that a wrong result stops its row; it is not in PeerNames().
std::unique_ptr<Peer> MakePeer(absl::string_view name);

// Factories, one per file.
std::unique_ptr<Peer> MakeAmarenaPeer();
std::unique_ptr<Peer> MakeOpenBlasPeer();
std::unique_ptr<Peer> MakeBlisPeer();
std::unique_ptr<Peer> MakeOneDnnSgemmPeer();
std::unique_ptr<Peer> MakeOneDnnMatmulPeer();
std::unique_ptr<Peer> MakeLibxsmmPeer();
std::unique_ptr<Peer> MakeEigenPeer();
std::unique_ptr<Peer> MakeXnnpackPeer();
std::unique_ptr<Peer> MakeWrongPeer();

}  // namespace amarena::bench

#endif  // AMARENA_BENCH_PEERS_PEER_H_
