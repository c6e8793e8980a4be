// The CPU NUFFT's inner loops (see nufft_spread.hpp), included by
// nufft_spread.cpp (baseline target) and nufft_spread_avx2.cpp (AVX2 + FMA)
// inside a namespace of their own, after every standard header: what is
// defined here gets that file's instruction set, and nothing here may be an
// inline function or template visible to another file (the linker could pick
// the AVX2 copy for a caller on a CPU without AVX2).
//
// Vectors are GCC's: 8 floats, lowered to two SSE registers on the baseline
// target and to one YMM register with AVX2. A row of the kernel's x extent is
// NV vectors = 4 NV complex cells (w <= 4 NV), the Horner lanes NK = ceil(NV/2)
// vectors; lanes past w have zero coefficients, so their values are exact zeros.

namespace {

typedef float v8 __attribute__((vector_size(32)));
typedef float v8u __attribute__((vector_size(32), aligned(4), may_alias));
typedef int i8 __attribute__((vector_size(32)));

inline v8 load8(const float* p) { return *reinterpret_cast<const v8u*>(p); }
inline void store8(float* p, v8 v) { *reinterpret_cast<v8u*>(p) = v; }
inline v8 splat(float f) { return v8{f, f, f, f, f, f, f, f}; }

inline int wrap_once(int i, int n) { return i < 0 ? i + n : (i >= n ? i - n : i); }

// Points are visited in sorted order, their values sit in trajectory order:
// each access is a cache miss that stalled the spreader for half its time
// (64^3, 192,000 uniform points). Asking kAhead points early hides it.
const std::size_t kAhead = 8;
inline void prefetch_value(const PointRun& r, std::size_t p, const cfloat* base, bool write) {
  if (p + kAhead >= r.end) return;
  const cfloat* v = base + r.perm[p + kAhead];
  if (write)
    __builtin_prefetch(v, 1);
  else
    __builtin_prefetch(v, 0);
}

// Offsets (floats) of the rows of one axis: index i0 + d - lo (a subgrid), or
// i0 + d wrapped by n (the fine grid).
inline void row_offsets(int i0, int w, int lo, int n, std::ptrdiff_t stride2, std::ptrdiff_t* off) {
  for (int d = 0; d < w; ++d) off[d] = stride2 * (n ? wrap_once(i0 + d, n) : i0 + d - lo);
}

// The kernel's values at one point along one axis: NK vectors by Horner.
template <int NK>
inline void horner(const HornerTable& t, float s, v8* k) {
  const float* c = t.coef.data();
  for (int h = 0; h < NK; ++h) k[h] = load8(c + 8 * h);
  for (int j = 1; j <= t.degree; ++j) {
    const float* cj = c + std::size_t(j) * t.lanes;
    for (int h = 0; h < NK; ++h) k[h] = k[h] * s + load8(cj + 8 * h);
  }
}

// Values of an axis as plain floats (y and z: one factor per row).
inline void axis_values(const HornerTable& t, int w, float s, float* out) {
  if (w == 1) {
    out[0] = 1.f;
    return;
  }
  v8 k[2];
  if (t.lanes == 8) {
    horner<1>(t, s, k);
  } else {
    horner<2>(t, s, k);
    store8(out + 8, k[1]);
  }
  store8(out, k[0]);
}

// x values duplicated for interleaved complex: vector q holds cells 4q .. 4q + 3.
template <int NV>
inline void x_values(const HornerTable& t, float s, v8* kxc) {
  constexpr int NK = (NV + 1) / 2;
  v8 k[NK];
  horner<NK>(t, s, k);
  const i8 lo = {0, 0, 1, 1, 2, 2, 3, 3}, hi = {4, 4, 5, 5, 6, 6, 7, 7};
  for (int q = 0; q < NV; ++q) kxc[q] = __builtin_shuffle(k[q / 2], q % 2 ? hi : lo);
}

// One point's kernel: x values (duplicated for complex cells), y and z
// factors, and the offsets (floats) of its rows and planes.
template <int NV>
struct PointKernel {
  v8 kxc[NV];
  alignas(32) float ky[16], kz[16];
  std::ptrdiff_t yoff[16], zoff[16];
  // lo: the grid's first cell (subgrid), n: the lengths to wrap by (0: none).
  void at(const HornerTable& t, const KernelShape& k, const PointPos& pt, const int* lo, const int* n,
          std::ptrdiff_t row2, std::ptrdiff_t plane2) {
    x_values<NV>(t, pt.s[0], kxc);
    axis_values(t, k.wy, pt.s[1], ky);
    axis_values(t, k.wz, pt.s[2], kz);
    row_offsets(pt.i0[1], k.wy, lo[1], n[1], row2, yoff);
    row_offsets(pt.i0[2], k.wz, lo[2], n[2], plane2, zoff);
  }
};

template <int NV>
void spread_nv(const SpreadJob& j) {
  const HornerTable& t = *j.k.table;
  const PointRun& r = j.pts;
  const std::ptrdiff_t row2 = 2 * std::ptrdiff_t(j.row_stride), plane2 = 2 * std::ptrdiff_t(j.plane_stride);
  const int wy = j.k.wy, wz = j.k.wz, no_wrap[3] = {0, 0, 0};
  PointKernel<NV> pk;
  for (std::size_t p = r.begin; p < r.end; ++p) {
    prefetch_value(r, p, j.c, false);
    const PointPos& pt = r.pos[p];
    pk.at(t, j.k, pt, j.lo, no_wrap, row2, plane2);
    const cfloat v = j.c[r.perm[p]];
    const v8 vv = {v.real(), v.imag(), v.real(), v.imag(), v.real(), v.imag(), v.real(), v.imag()};
    float* base = j.grid + 2 * std::ptrdiff_t(pt.i0[0] - j.lo[0]);
    for (int dz = 0; dz < wz; ++dz) {
      v8 a[NV];  // the x row of this plane: v kx kz, added w_y times
      for (int q = 0; q < NV; ++q) a[q] = pk.kxc[q] * (vv * pk.kz[dz]);
      float* plane = base + pk.zoff[dz];
      for (int dy = 0; dy < wy; ++dy) {
        const v8 f = splat(pk.ky[dy]);
        float* row = plane + pk.yoff[dy];
        for (int q = 0; q < NV; ++q) store8(row + 8 * q, load8(row + 8 * q) + a[q] * f);
      }
    }
  }
}

// One transform's sum at one point: the rows of plane dz start at
// g + zoff[dz] + yoff[dy] (floats, the first kernel cell).
template <int NV>
inline cfloat interp_one(const float* g, const std::ptrdiff_t* yoff, const std::ptrdiff_t* zoff, const float* ky,
                         const float* kz, int wy, int wz, const v8* kxc) {
  v8 acc[NV];
  for (int q = 0; q < NV; ++q) acc[q] = splat(0.f);
  for (int dz = 0; dz < wz; ++dz) {
    const float* plane = g + zoff[dz];
    v8 t[NV];
    for (int q = 0; q < NV; ++q) t[q] = splat(0.f);
    for (int dy = 0; dy < wy; ++dy) {
      const v8 f = splat(ky[dy]);
      const float* row = plane + yoff[dy];
      for (int q = 0; q < NV; ++q) t[q] += load8(row + 8 * q) * f;
    }
    for (int q = 0; q < NV; ++q) acc[q] += t[q] * kz[dz];
  }
  v8 sum = acc[0] * kxc[0];
  for (int q = 1; q < NV; ++q) sum += acc[q] * kxc[q];
  return {sum[0] + sum[2] + sum[4] + sum[6], sum[1] + sum[3] + sum[5] + sum[7]};
}

template <int NV>
void interp_nv(const InterpJob& j) {
  const HornerTable& t = *j.k.table;
  const PointRun& r = j.pts;
  const std::ptrdiff_t row2 = 2 * std::ptrdiff_t(j.row_stride), plane2 = 2 * std::ptrdiff_t(j.plane_stride);
  const int origin[3] = {0, 0, 0};
  PointKernel<NV> pk;
  for (std::size_t p = r.begin; p < r.end; ++p) {
    prefetch_value(r, p, j.out, true);
    const PointPos& pt = r.pos[p];
    pk.at(t, j.k, pt, origin, j.nf, row2, plane2);
    j.out[r.perm[p]] = interp_one<NV>(j.grid + 2 * std::ptrdiff_t(pt.i0[0]), pk.yoff, pk.zoff, pk.ky, pk.kz, j.k.wy,
                                      j.k.wz, pk.kxc);
  }
}

// Plain loops the compiler vectorizes (with AVX, floor and ceil are one
// instruction each; the baseline target has no rounding instruction).
void locate(const LocateJob& j) {
  const double nf = j.nf, inv = 1.0 / j.nf, half = 0.5 * j.w, shift = j.w - 1;
  for (std::size_t i = 0; i < j.n; ++i) {
    double u = double(j.k[i]) * j.scale;
    u -= nf * __builtin_floor(u * inv);
    u = u >= nf || u < 0.0 ? 0.0 : u;  // rounding at the fold
    const double first = __builtin_ceil(u - half);
    j.i0[i] = std::int32_t(first);
    j.s[i] = float(2.0 * (first - u) + shift);
  }
}

int vectors_per_row(const HornerTable& t) { return (t.width + 3) / 4; }

void spread(const SpreadJob& j) {
  switch (vectors_per_row(*j.k.table)) {
    case 1: return spread_nv<1>(j);
    case 2: return spread_nv<2>(j);
    case 3: return spread_nv<3>(j);
    case 4: return spread_nv<4>(j);
  }
}

void interp(const InterpJob& j) {
  switch (vectors_per_row(*j.k.table)) {
    case 1: return interp_nv<1>(j);
    case 2: return interp_nv<2>(j);
    case 3: return interp_nv<3>(j);
    case 4: return interp_nv<4>(j);
  }
}

}  // namespace
