// FFTs along one axis (cuda/fft/line_fft.hpp).
//
// A line of length L is held by T = L/16 threads, 16 values each: thread j
// holds positions j + T e, e = 0..15, before and after every stage. A stage
// of radix R (16, or less for the last one) runs Q = 16/R butterflies per
// thread in registers, in Stockham's self-sorting form (Govindaraju et al.,
// "High performance discrete Fourier transforms on graphics processors",
// 2008): butterfly b reads b + r L/R, twiddles by its offset in the current
// sub-transform of Ns points, and writes (b/Ns) Ns R + b%Ns + r Ns. With the
// thread's butterflies b = j + T q, the first stage reads and the last writes
// exactly positions j + T e, so loads, stores and a Convolve pass's spectrum
// multiply touch registers only; shared memory carries the stages between.
#include "cuda/fft/line_fft.hpp"

#include <string>
#include <type_traits>

#include "cuda/device/check.hpp"
#include "cuda/device/complex.cuh"

namespace fhd::gpu::lines {
namespace {

constexpr int kThreads = 256;

// exp(dir 2 pi i m / 16): the roots a radix-16 (or smaller) DFT needs. The
// conditionals fold away once the unrolled loops make m a constant.
__device__ __forceinline__ float quarter_cos(int r) {  // cos(2 pi r / 16), r = 0..4
  return r == 0 ? 1.0f : r == 1 ? 0.92387953251128674f : r == 2 ? 0.70710678118654752f
                                : r == 3 ? 0.38268343236508977f : 0.0f;
}
__device__ __forceinline__ float2 root16(int m, int dir) {
  const int k = m & 15, quad = k >> 2, r = k & 3;
  const float c = quarter_cos(r), s = quarter_cos(4 - r);
  const float x = quad == 0 ? c : quad == 1 ? -s : quad == 2 ? -c : s;
  const float y = quad == 0 ? s : quad == 1 ? c : quad == 2 ? -s : -c;
  return make_float2(x, float(dir) * y);
}

// a exp(dir 2 pi i m / 16). Most of a radix-16 DFT's twiddles are 1, -1,
// +-i or 45-degree turns: without fast-math the compiler may not drop the
// multiplications by 0 and 1 of a general complex product, and these
// kernels are bound by the instructions they issue, not by memory.
template <int M, int kDir>
__device__ __forceinline__ float2 rotate(float2 a) {
  constexpr int m = M & 15;
  if constexpr (m == 0) {
    return a;
  } else if constexpr (m == 8) {
    return make_float2(-a.x, -a.y);
  } else if constexpr (m == 4 || m == 12) {  // times +-i
    constexpr int d = (m == 4 ? 1 : -1) * kDir;
    return d > 0 ? make_float2(-a.y, a.x) : make_float2(a.y, -a.x);
  } else if constexpr (m % 2 == 0) {  // (c + i s) with |c| = |s| = sqrt(1/2)
    constexpr float r = 0.70710678118654752f;
    constexpr float c = (m == 2 || m == 14) ? 1.f : -1.f, s = float((m == 2 || m == 6) ? 1 : -1) * float(kDir);
    return make_float2(r * (c * a.x - s * a.y), r * (s * a.x + c * a.y));
  } else {
    return cmul(a, root16(m, kDir));
  }
}

template <int R>
__host__ __device__ constexpr int bit_reverse(int i) {
  int r = 0;
  for (int b = 1; b < R; b <<= 1) r = (r << 1) | ((i & b) ? 1 : 0);
  return r;
}

__host__ __device__ constexpr int log2_of(int n) { return n > 1 ? 1 + log2_of(n / 2) : 0; }

// Calls f(std::integral_constant<int, I>) for I = 0..N-1: indices that must
// be constants (a register array indexed by a computed value would go to
// local memory).
template <int I, int N, class F>
__device__ __forceinline__ void static_for(F&& f) {
  if constexpr (I < N) {
    f(std::integral_constant<int, I>{});
    static_for<I + 1, N>(f);
  }
}

// In-place DFT of R points (R a power of two up to 16), natural order in and
// out: radix-2 decimation in time on registers.
template <int R, int kDir>
__device__ __forceinline__ void dft(float2 (&a)[R]) {
  static_for<0, R>([&](auto i) {
    constexpr int k = decltype(i)::value, r = bit_reverse<R>(k);
    if constexpr (k < r) {
      const float2 t = a[k];
      a[k] = a[r];
      a[r] = t;
    }
  });
  // Butterfly spans len = 2, 4, .., R, groups and offsets all compile-time
  // constants, so each twiddle is rotate<m>'s special case where it has one.
  static_for<1, log2_of(R) + 1>([&](auto stage) {
    constexpr int len = 1 << decltype(stage)::value, half = len / 2;
    static_for<0, R / len>([&](auto group) {
      constexpr int i = decltype(group)::value * len;
      static_for<0, half>([&](auto offset) {
        constexpr int k = decltype(offset)::value;
        const float2 t = rotate<k * (16 / len), kDir>(a[i + k + half]);
        const float2 u = a[i + k];
        a[i + k] = make_float2(u.x + t.x, u.y + t.y);
        a[i + k + half] = make_float2(u.x - t.x, u.y - t.y);
      });
    });
  });
}

// Shared index of line position p: one pad word per 16 keeps the stages'
// strided writes off a single bank.
__device__ __forceinline__ int padded(int p) { return p + (p >> 4); }

// The stages from sub-transform size Ns on; see the file's comment.
// roots[m] = exp(2 pi i m / L), filled once per block: computing the
// twiddles in place held 15 sine-cosine pairs in registers at once and
// spilled.
template <int L, int Ns, int kDir>
__device__ __forceinline__ void fft_stages(float2 (&v)[16], int j, float2* line, const float2* roots) {
  constexpr int R = L / Ns >= 16 ? 16 : L / Ns, Q = 16 / R, T = L / 16;
#pragma unroll
  for (int q = 0; q < Q; ++q) {
    const int k = (j + T * q) % Ns;
    float2 a[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      a[r] = v[q + r * Q];
      if (Ns > 1 && r > 0) {  // exp(dir 2 pi i r k / (Ns R))
        const float2 w = roots[r * k * (L / (Ns * R))];
        a[r] = cmul(a[r], make_float2(w.x, kDir * w.y));
      }
    }
    dft<R, kDir>(a);
#pragma unroll
    for (int r = 0; r < R; ++r) v[q + r * Q] = a[r];
  }
  if constexpr (Ns * R < L) {
    __syncthreads();  // the previous exchange's reads are done
#pragma unroll
    for (int e = 0; e < 16; ++e) {
      const int q = e % Q, r = e / Q, b = j + T * q;
      line[padded(b / Ns * Ns * R + b % Ns + r * Ns)] = v[e];
    }
    __syncthreads();
#pragma unroll
    for (int e = 0; e < 16; ++e) v[e] = line[padded(j + T * e)];
    fft_stages<L, Ns * R, kDir>(v, j, line, roots);
  }
}

// Index of the value at position pos of a line of L (-1: none; reads zero,
// not written).
template <bool kCentered>
__device__ __forceinline__ int index_at(int pos, int n, int L) {
  if constexpr (!kCentered) return pos < n ? pos : -1;
  const int i = (pos < (L + 1) / 2 ? pos : pos - L) + n / 2;  // the signed frequency, plus n/2
  return i >= 0 && i < n ? i : -1;
}

// Blocks per SM the registers must allow: 3 (768 threads in flight to hide
// the memory's latency); 2 for Convolve, whose two FFTs and spectrum spill
// at 3's 80 registers.
// kCentered: the NUFFT's instances. The modes' side (Forward's input,
// Inverse's output) is Centered and may be deapodized; the other side is
// always Low. The Toeplitz's instances (kCentered false) take the coil map
// and accumulation instead, and compile none of the NUFFT's work: tested at
// run time in every instance, it cost the Toeplitz product a third.
// The Pass fields are read once into locals: used in the unrolled loops
// directly, each use became a parameter load of its own.
template <int L, bool kContiguous, Mode kMode, bool kCentered>
__global__ void __launch_bounds__(kThreads, kMode == Mode::Convolve ? 2 : 3) line_pass(Pass p) {
  constexpr int T = L / 16, kLines = kThreads / T, kPitch = L + L / 16 + 1;
  __shared__ float2 shared[kLines * kPitch];
  __shared__ float2 roots[L];
  const int t = threadIdx.x;
  // Ready before the first twiddle: the first stage has none, and the
  // exchange after it synchronises.
  for (int m = t; m < L; m += kThreads) sincospif(float(2 * m) / float(L), &roots[m].y, &roots[m].x);
  const float2* const src = p.src;
  float2* const dst = p.dst;
  const long long in_sp = p.in.sp, out_sp = p.out.sp;
  const int n_in = p.n_in, n_out = p.n_out;
  const float2* const map = kCentered ? nullptr : p.map;
  const bool accumulate = !kCentered && p.accumulate;
  const float* const deapod = kCentered ? p.deapod[0] : nullptr;
  // Contiguous lines give each line's T threads consecutive positions;
  // strided lines give a warp's threads consecutive lines (consecutive x):
  // either way every load and store is coalesced.
  const int line = kContiguous ? t / T : t % kLines, j = kContiguous ? t % T : t / kLines;
  const long long l = (long long)blockIdx.x * kLines + line;
  const bool live = l < (long long)p.nu * p.nw;
  const long long u = live ? l % p.nu : 0, w = live ? l / p.nu : 0;
  const long long src0 = u * p.in.su + w * p.in.sw, dst0 = u * p.out.su + w * p.out.sw;
  float line_deapod = 1.f;
  if constexpr (kCentered)
    if (deapod) line_deapod = p.deapod[1][u] * p.deapod[2][w];
  float2 v[16];
#pragma unroll
  for (int e = 0; e < 16; ++e) {
    const int i = index_at<kCentered && kMode == Mode::Forward>(j + T * e, n_in, L);
    float2 a = make_float2(0.f, 0.f);
    if (live && i >= 0) {
      const long long at = src0 + i * in_sp;
      a = src[at];
      if constexpr (kMode == Mode::Forward && !kCentered)
        if (map) a = cmul(map[at], a);
      if constexpr (kMode == Mode::Forward && kCentered)
        if (deapod) a = scale(a, deapod[i] * line_deapod);
    }
    v[e] = a;
  }
  float2* mine = shared + line * kPitch;
  if constexpr (kMode == Mode::Inverse) {
    fft_stages<L, 1, +1>(v, j, mine, roots);
  } else {
    fft_stages<L, 1, -1>(v, j, mine, roots);
  }
  if constexpr (kMode == Mode::Convolve) {
    // One test for the line, then its 16 loads back to back: tested per
    // value, each load waited for its multiply (the pass ran 1.5x longer).
    const float* const spectrum_re = p.spectrum.real;
    const float2* const spectrum_c = p.spectrum.complex;
    if (live) {
      if (spectrum_re) {
        float r[16];
#pragma unroll
        for (int e = 0; e < 16; ++e) r[e] = spectrum_re[src0 + (j + T * e) * in_sp];
#pragma unroll
        for (int e = 0; e < 16; ++e) v[e] = scale(v[e], r[e]);
      } else {
        float2 c[16];
#pragma unroll
        for (int e = 0; e < 16; ++e) c[e] = spectrum_c[src0 + (j + T * e) * in_sp];
#pragma unroll
        for (int e = 0; e < 16; ++e) v[e] = cmul(v[e], c[e]);
      }
    }
    fft_stages<L, 1, +1>(v, j, mine, roots);
  }
#pragma unroll
  for (int e = 0; e < 16; ++e) {
    const int i = index_at<kCentered && kMode == Mode::Inverse>(j + T * e, n_out, L);
    if (!live || i < 0) continue;
    const long long at = dst0 + i * out_sp;
    float2 a = v[e];
    if constexpr (kMode == Mode::Inverse && !kCentered)
      if (map) a = cmulc(map[at], a);
    if constexpr (kMode == Mode::Inverse && kCentered)
      if (deapod) a = scale(a, deapod[i] * line_deapod);
    if (accumulate) {
      const float2 b = dst[at];
      a = make_float2(a.x + b.x, a.y + b.y);
    }
    dst[at] = a;
  }
}

template <int L, bool kContiguous, Mode kMode, bool kCentered>
void launch_for(const Pass& p, cudaStream_t s) {
  constexpr int kLines = kThreads / (L / 16);
  const long long lines = (long long)p.nu * p.nw;
  line_pass<L, kContiguous, kMode, kCentered><<<unsigned((lines + kLines - 1) / kLines), kThreads, 0, s>>>(p);
  CUDA_CHECK_LAUNCH();
}

template <bool kContiguous, Mode kMode, bool kCentered>
void launch(int len, const Pass& p, cudaStream_t s) {
  switch (len) {
    case 16: return launch_for<16, kContiguous, kMode, kCentered>(p, s);
    case 32: return launch_for<32, kContiguous, kMode, kCentered>(p, s);
    case 64: return launch_for<64, kContiguous, kMode, kCentered>(p, s);
    case 128: return launch_for<128, kContiguous, kMode, kCentered>(p, s);
    case 256: return launch_for<256, kContiguous, kMode, kCentered>(p, s);
    case 512: return launch_for<512, kContiguous, kMode, kCentered>(p, s);
    default: throw DeviceError("line FFT: unsupported length " + std::to_string(len));
  }
}

template <Mode kMode>
void launch(bool contiguous, bool centered, int len, const Pass& p, cudaStream_t s) {
  if (contiguous)
    return centered ? launch<true, kMode, true>(len, p, s) : launch<true, kMode, false>(len, p, s);
  return centered ? launch<false, kMode, true>(len, p, s) : launch<false, kMode, false>(len, p, s);
}

}  // namespace

bool supported_length(int len) { return len >= 16 && len <= 512 && (len & (len - 1)) == 0; }

void run(Mode mode, bool contiguous, int len, const Pass& p, cudaStream_t s) {
  if (p.nu < 1 || p.nw < 1) return;
  const bool in = p.place_in == Place::Centered, out = p.place_out == Place::Centered;
  // Centered placement is the modes' side: a forward transform's input, an
  // inverse's output; a convolution is Low on both (what the kernels take).
  if ((mode != Mode::Forward && in) || (mode != Mode::Inverse && out))
    throw DeviceError("line FFT: centered placement only on a forward input or an inverse output");
  // The NUFFT's (centered) instances compile no map or accumulation, the
  // Toeplitz's no deapodization: see line_pass.
  if ((in || out) && (p.map || p.accumulate))
    throw DeviceError("line FFT: a centered pass takes no coil map and does not accumulate");
  if (!in && !out && p.deapod[0]) throw DeviceError("line FFT: deapodization only on a centered pass");
  switch (mode) {
    case Mode::Forward: return launch<Mode::Forward>(contiguous, in, len, p, s);
    case Mode::Inverse: return launch<Mode::Inverse>(contiguous, out, len, p, s);
    case Mode::Convolve:
      // Only the last axis convolves, and it is never the fastest.
      if (contiguous) throw DeviceError("line FFT: Convolve runs on strided lines only");
      return launch<false, Mode::Convolve, false>(len, p, s);
  }
}

}  // namespace fhd::gpu::lines
