// Bad input never takes the host down: 100 000 random and mutated Spec
// strings through the parser and the C API, null and misaligned pointers,
// zero and huge shapes. Each is a status with a message, or a kernel that
// matches the reference.
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "amarena/amarena.h"
#include "core/reference.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"

namespace amarena {
namespace {

// Valid texts to mutate, covering the grammar.
const char* const kSeeds[] = {
    "matmul 64x64x64 f32",
    "matmul 7x13x5 f32*f32->f32 a=col b=row c=col",
    "matmul 1x2048x16384 bf16*bf16->f32 b=col",
    "matmul accum 16x32x8 f32 a=l1 b=l1,p8 c=vrf,v8 serial",
    "zero 17x33 f32 out=l1",
    "move 8x8 f32 src=l1 dst=vrf,v8",
    "matmul 100x100x100 f32 budget=vrf:16,gpr:10,l1:512,l2:16384,l3:524288",
    "matmul 3x5x7 f32 b=l2,p16 budget=vrf:4,gpr:2,l1:8,l2:0,l3:0",
};
const char* const kTokens[] = {
    "matmul",     "zero",
    "move",       "accum",
    "serial",     "f32",
    "bf16",       "*",
    "->",         "x",
    "=",          ",",
    "a=",         "b=",
    "c=",         "out=",
    "src=",       "dst=",
    "col",        "row",
    "l1",         "l2",
    "l3",         "gl",
    "vrf",        "v8",
    "v16",        "p16",
    "p0",         "0",
    "1",          "-1",
    "65536",      "99999999999999999999",
    "2147483647", "budget=",
    "vrf:",       "gpr:",
    "l1:",        " ",
    "\t",         "\n",
    "\xff",       "\0",
};

std::string Mutate(std::string s, std::mt19937_64& rng) {
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 5) {
      case 0:  // flip a byte
        if (!s.empty() && at < s.size()) s[at] = static_cast<char>(rng() % 256);
        break;
      case 1:  // delete a run
        if (at < s.size()) s.erase(at, 1 + rng() % 6);
        break;
      case 2: {  // insert a token
        const char* t = kTokens[rng() % std::size(kTokens)];
        s.insert(at, std::string(t, t[0] == '\0' ? 1 : std::strlen(t)));
        break;
      }
      case 3:  // replace a digit run's digit
        for (size_t i = at; i < s.size(); ++i)
          if (s[i] >= '0' && s[i] <= '9') {
            s[i] = static_cast<char>('0' + rng() % 10);
            break;
          }
        break;
      default:  // splice with another seed
        s = s.substr(0, at) +
            std::string(kSeeds[rng() % std::size(kSeeds)]).substr(rng() % 8);
    }
  }
  return s;
}

TEST(BadInputTest, HundredThousandRandomAndMutatedSpecs) {
  std::mt19937_64 rng(2026);
  amarena_runtime* rt = nullptr;
  ASSERT_EQ(amarena_runtime_create(1, &rt), AMARENA_OK);
  int parsed = 0, refused = 0, compiled = 0;
  for (int i = 0; i < 100000; ++i) {
    std::string text;
    if (i % 10 == 0) {  // pure noise
      text.resize(rng() % 40);
      for (char& c : text) c = static_cast<char>(rng() % 256);
    } else {
      text = Mutate(kSeeds[rng() % std::size(kSeeds)], rng);
    }
    absl::StatusOr<Spec> s = ParseSpec(text);
    if (!s.ok()) {
      ++refused;
      ASSERT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
      ASSERT_TRUE(absl::StartsWith(s.status().message(), "cannot parse spec"))
          << s.status();
      continue;
    }
    ++parsed;
    // The canonical text parses back to the same Spec.
    absl::StatusOr<Spec> again = ParseSpec(PrintSpec(*s));
    ASSERT_TRUE(again.ok()) << PrintSpec(*s) << ": " << again.status();
    ASSERT_EQ(*again, *s) << text;
    // Small ones go all the way through the C API: a clear status, or a
    // kernel that is right. (Text with a NUL byte stops there in C.)
    if (text.find('\0') != std::string::npos || s->Macs() > 40 * 40 * 40)
      continue;
    amarena_kernel* k = nullptr;
    amarena_status st = amarena_kernel_get(rt, text.c_str(), &k);
    if (st != AMARENA_OK) {
      ASSERT_EQ(k, nullptr);
      ASSERT_STRNE(amarena_last_error(), "");
      ASSERT_TRUE(st == AMARENA_INVALID_ARGUMENT || st == AMARENA_UNIMPLEMENTED)
          << st << ": " << amarena_last_error();
      continue;
    }
    ++compiled;
    Spec spec = *ParseSpec(amarena_kernel_spec(k));
    Operands ops(spec);
    FillRandom(spec, ops, static_cast<uint64_t>(i));
    std::vector<uint8_t> before = ops.Snapshot(spec.OutputIndex());
    ASSERT_EQ(amarena_kernel_run(k, ops.ptrs()), AMARENA_OK);
    ASSERT_TRUE(CheckAgainstReference(spec, ops, before).ok) << text;
    amarena_kernel_release(k);
  }
  amarena_runtime_destroy(rt);
  // The mutations reach both sides of the parser and the generator.
  EXPECT_GT(refused, 50000);
  EXPECT_GT(parsed, 3000);
  EXPECT_GT(compiled, 100);
  RecordProperty("parsed", parsed);
  RecordProperty("compiled", compiled);
}

TEST(BadInputTest, ZeroAndHugeShapesAreClearErrors) {
  struct Case {
    const char* text;
    const char* names;
  } cases[] = {
      {"matmul 0x5x5 f32", "dimension M is 0"},
      {"matmul 5x0x5 f32", "dimension K is 0"},
      {"zero 5x0 f32", "is 0"},
      {"matmul 99999999999999x5x5 f32", "must be at most"},
      {"matmul 100000x100000x100000 f32", "bytes"},
      {"matmul 2147483647x2147483647x2147483647 f32", "bytes"},
      {"matmul -3x5x5 f32", ""},
      {"matmul 5x5x5 f64", "dtype"},
  };
  for (const Case& c : cases) {
    amarena_kernel* k = nullptr;
    amarena_status st = amarena_kernel_get(nullptr, c.text, &k);
    EXPECT_EQ(st, AMARENA_INVALID_ARGUMENT) << c.text;
    EXPECT_EQ(k, nullptr);
    EXPECT_NE(std::string(amarena_last_error()).find(c.names),
              std::string::npos)
        << c.text << " -> " << amarena_last_error();
  }
}

TEST(BadInputTest, NullAndMisalignedPointersAreRefused) {
  amarena_kernel* k = nullptr;
  EXPECT_EQ(amarena_kernel_get(nullptr, nullptr, &k), AMARENA_INVALID_ARGUMENT);
  EXPECT_EQ(amarena_kernel_get(nullptr, "matmul 4x4x4 f32", nullptr),
            AMARENA_INVALID_ARGUMENT);
  EXPECT_EQ(amarena_runtime_create(0, nullptr), AMARENA_INVALID_ARGUMENT);
  EXPECT_EQ(amarena_runtime_create(-1, nullptr), AMARENA_INVALID_ARGUMENT);
  EXPECT_EQ(amarena_kernel_run(nullptr, nullptr), AMARENA_INVALID_ARGUMENT);
  EXPECT_EQ(amarena_kernel_name(nullptr), nullptr);
  EXPECT_EQ(amarena_kernel_source(nullptr), nullptr);
  amarena_kernel_release(nullptr);
  amarena_runtime_destroy(nullptr);

  ASSERT_EQ(amarena_kernel_get(nullptr, "matmul 4x4x4 f32", &k), AMARENA_OK);
  EXPECT_EQ(amarena_kernel_run(k, nullptr), AMARENA_INVALID_ARGUMENT);
  alignas(64) float a[32] = {}, b[32] = {}, c[32] = {};
  for (int bad = 0; bad < 3; ++bad) {
    void* ops[3] = {a, b, c};
    ops[bad] = nullptr;
    EXPECT_EQ(amarena_kernel_run(k, ops), AMARENA_INVALID_ARGUMENT);
    EXPECT_NE(std::string(amarena_last_error()).find("is null"),
              std::string::npos);
    ops[bad] = reinterpret_cast<char*>(ops[(bad + 1) % 3]) + 2;
    EXPECT_EQ(amarena_kernel_run(k, ops), AMARENA_INVALID_ARGUMENT);
    EXPECT_NE(std::string(amarena_last_error()).find("aligned"),
              std::string::npos);
  }
  void* ops[3] = {a, b, c};
  EXPECT_EQ(amarena_kernel_run(k, ops), AMARENA_OK);
  amarena_kernel_release(k);
}

// Packing weights: a null kernel, null buffers, too little room and a kernel
// with no B are refused with a message; enough room packs.
TEST(BadInputTest, PackingWeightsRefusesBadArguments) {
  float b[4 * 40] = {};
  EXPECT_EQ(amarena_kernel_b_bytes(nullptr), 0u);
  EXPECT_EQ(amarena_kernel_pack_b(nullptr, b, b, sizeof b),
            AMARENA_INVALID_ARGUMENT);
  amarena_kernel* k = nullptr;
  ASSERT_EQ(amarena_kernel_get(nullptr, "matmul 3x4x40 f32 b=p32", &k),
            AMARENA_OK);
  const size_t need = amarena_kernel_b_bytes(k);
  EXPECT_EQ(need, 4u * 64 * sizeof(float));  // two panels of 32, padded
  std::vector<float> out(need / sizeof(float));
  EXPECT_EQ(amarena_kernel_pack_b(k, nullptr, out.data(), need),
            AMARENA_INVALID_ARGUMENT);
  EXPECT_EQ(amarena_kernel_pack_b(k, b, nullptr, need),
            AMARENA_INVALID_ARGUMENT);
  EXPECT_EQ(amarena_kernel_pack_b(k, b, out.data(), need - 4),
            AMARENA_INVALID_ARGUMENT);
  EXPECT_NE(std::string(amarena_last_error()).find("must have at least"),
            std::string::npos);
  EXPECT_EQ(amarena_kernel_pack_b(k, b, out.data(), need), AMARENA_OK);
  amarena_kernel_release(k);
  ASSERT_EQ(amarena_kernel_get(nullptr, "zero 4x4 f32", &k), AMARENA_OK);
  EXPECT_EQ(amarena_kernel_b_bytes(k), 0u);
  EXPECT_EQ(amarena_kernel_pack_b(k, b, b, sizeof b), AMARENA_INVALID_ARGUMENT);
  amarena_kernel_release(k);
}

}  // namespace
}  // namespace amarena
