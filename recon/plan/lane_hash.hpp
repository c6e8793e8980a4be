#pragma once
// LaneHash: the Q cache file's checksum (recon/plan/qcache.cpp), here so its
// tests can feed it in pieces. Host only, no dependencies.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace fhd {

// splitmix64's finalizer: a bijection of 64 bits that mixes every bit into every other.
inline std::uint64_t splitmix64_fin(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A 64-bit streaming hash at memory speed: 8-byte words go round-robin to eight
// independent multiply-xorshift lanes, so eight multiply chains run at once
// instead of one, and the lanes and the length are folded together by
// splitmix64's finalizer. The input is one stream of bytes: fed in pieces, it
// hashes their concatenation, so load_q hashes each chunk as it reads it
// (recon/plan/qcache.cpp: the Q cache file's checksum).
// Words are read in this machine's byte order, as the file is written.
// Each step is a bijection of its lane for a fixed word and of the word for a
// fixed lane, and the fold is a bijection of each lane: a change confined to
// one 8-byte word of the stream always changes u64(). Not cryptographic.
class LaneHash {
 public:
  static constexpr std::size_t kLanes = 8, kBlock = 8 * kLanes;

  void bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    length_ += n;
    const std::size_t used = complete_held(c, n);
    if (held_n_ > 0) return;  // all of it went into a word still unfinished
    c += used;
    n -= used;
    for (; n >= 8 && next_ != 0; c += 8, n -= 8) word(load(c));  // on to lane 0
    const std::size_t blocks = n / kBlock;
    mix_blocks(c, blocks);
    c += blocks * kBlock;
    n -= blocks * kBlock;
    for (; n >= 8; c += 8, n -= 8) word(load(c));
    std::memcpy(held_, c, n);
    held_n_ = n;
  }
  std::uint64_t u64() const {
    std::uint64_t h = 0x9216d5d98979fb1bULL ^ length_;
    for (std::uint64_t lane : lanes_now()) h = splitmix64_fin(h ^ lane);
    return h;
  }

 private:
  static std::uint64_t load(const unsigned char* c) {
    std::uint64_t w;
    std::memcpy(&w, c, 8);
    return w;
  }
  static std::uint64_t mix(std::uint64_t s, std::uint64_t w) {
    s = (s ^ w) * 0x9e3779b97f4a7c15ULL;
    return s ^ (s >> 29);
  }
  void word(std::uint64_t w) {
    lane_[next_] = mix(lane_[next_], w);
    next_ = (next_ + 1) % kLanes;
  }
  // Tops up the word an earlier piece left unfinished; returns the bytes taken.
  std::size_t complete_held(const unsigned char* c, std::size_t n) {
    if (held_n_ == 0) return 0;
    const std::size_t k = std::min(8 - held_n_, n);
    std::memcpy(held_ + held_n_, c, k);
    held_n_ += k;
    if (held_n_ == 8) {
      word(load(held_));
      held_n_ = 0;
    }
    return k;
  }
  // The hot loop: whole blocks from lane 0, the lanes in registers.
  void mix_blocks(const unsigned char* c, std::size_t blocks) {
    std::uint64_t s[kLanes];
    std::memcpy(s, lane_, sizeof s);
    for (std::size_t b = 0; b < blocks; ++b, c += kBlock)
      for (std::size_t j = 0; j < kLanes; ++j) s[j] = mix(s[j], load(c + 8 * j));
    std::memcpy(lane_, s, sizeof s);
  }
  // The lanes with an unfinished last word mixed in, zero-padded (the length
  // in the fold tells the padding from zero bytes).
  std::array<std::uint64_t, kLanes> lanes_now() const {
    std::array<std::uint64_t, kLanes> s;
    std::memcpy(s.data(), lane_, sizeof lane_);
    if (held_n_ > 0) {
      unsigned char last[8] = {};
      std::memcpy(last, held_, held_n_);
      s[next_] = mix(s[next_], load(last));
    }
    return s;
  }

  std::uint64_t lane_[kLanes] = {0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL, 0xa4093822299f31d0ULL,
                                 0x082efa98ec4e6c89ULL, 0x452821e638d01377ULL, 0xbe5466cf34e90c6cULL,
                                 0xc0ac29b7c97c50ddULL, 0x3f84d5b5b5470917ULL};
  unsigned char held_[8] = {};
  std::size_t held_n_ = 0, next_ = 0;
  std::uint64_t length_ = 0;
};

}  // namespace fhd
