// A small deterministic random number generator (SplitMix64) for the scale suite.
//
// The standard distributions are implementation-defined, so the dataset would differ
// between standard libraries; this generator and its unbiased Below() give the same
// sequence everywhere. Not thread-safe: one Rng per thread.
#pragma once

#include <cstdint>

namespace mentat::scale {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n). REQUIRES: n > 0.
  uint64_t Below(uint64_t n) {
    // Reject the lowest 2^64 mod n values so every residue is equally likely.
    uint64_t threshold = (0 - n) % n;
    uint64_t x;
    do {
      x = Next();
    } while (x < threshold);
    return x % n;
  }

  // Uniform in [lo, hi]. REQUIRES: lo <= hi.
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Below(static_cast<uint64_t>(hi - lo) + 1));
  }

 private:
  uint64_t state_;
};

}  // namespace mentat::scale
