/* fhdrecon's NUFFT plan for C users (and Julia, MATLAB, Python through ctypes),
 * in the shape of FINUFFT's guru interface (finufftf_makeplan / setpts /
 * execute / destroy) and in FINUFFT's conventions, so code written for
 * finufftf (CPU) or cufinufftf (GPU) maps one call to one call (docs/python.md,
 * "The C interface"). Single precision: points float, data complex float stored
 * as interleaved (re, im) pairs. Types 1 and 2, dimensions 2 and 3.
 *
 *   type 1: f[k] = sum_j c[j] exp(isign i k . x_j)      isign default +1
 *   type 2: c[j] = sum_k f[k] exp(isign i k . x_j)      isign default -1
 *
 * Points x_j in radians (FINUFFT's [-pi, pi), any real value taken modulo
 * 2 pi); modes k_d in -floor(N_d/2) .. ceil(N_d/2) - 1 (FINUFFT's modeord 0);
 * f stored with the first dimension fastest (FINUFFT's C order:
 * f[k1 + N1 (k2 + N2 k3)], mode k_d at index k_d + floor(N_d/2)). No
 * normalization. n_trans vectors are stored one after another (c: n_trans x M,
 * f: n_trans x N1 N2 N3), as FINUFFT does.
 *
 * device FHD_NUFFT_CPU: host pointers, OpenMP threads. device >= 0: that CUDA
 * GPU (when the library was built with CUDA); every pointer given to setpts and
 * execute is then device memory of that GPU, and execute is asynchronous on the
 * plan's stream (opts.stream, default the legacy default stream), as cuFINUFFT
 * is. Points are copied (converted) by setpts: the caller may free them after.
 *
 * Threads: separate plans may be used by separate threads at once; one plan
 * may not (its points and work buffers are its own, as in FINUFFT): calls on
 * one plan from several threads must be serialized by the caller (the Python
 * package's Plan takes a lock per plan).
 *
 * Every function returns 0 or an FHD_NUFFT_ERR_* code; fhd_nufft_error_message
 * names a code, fhd_nufft_last_error says what went wrong last on this thread
 * (e.g. "n_modes[1] = 0: must be >= 1").
 */
#ifndef FHDRECON_NUFFT_H
#define FHDRECON_NUFFT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FHD_NUFFT_CPU (-1)

enum fhd_nufft_error {
  FHD_NUFFT_OK = 0,
  FHD_NUFFT_ERR_ARGUMENT = 1,   /* type, dim, n_modes, n_trans, isign, option or pointer out of range */
  FHD_NUFFT_ERR_TOLERANCE = 2,  /* tol not in (0, 1e-1]; below 1e-7 is taken as 1e-7 (single precision) */
  FHD_NUFFT_ERR_NO_POINTS = 3,  /* execute before setpts */
  FHD_NUFFT_ERR_NO_GPU = 4,     /* device >= 0 but the library has no CUDA, or no such GPU */
  FHD_NUFFT_ERR_DEVICE = 5,     /* a CUDA call failed */
  FHD_NUFFT_ERR_MEMORY = 6,     /* out of host or device memory */
  FHD_NUFFT_ERR_INTERNAL = 7
};

typedef struct fhd_nufft_opts {
  int modeord;      /* 0: -N/2 .. N/2-1 (the only order supported; 1 is refused) */
  double upsampfac; /* fine-grid factor: 2.0 or 1.25; 0 = 2.0; 1.25 is taken as 2.0 below tol 1e-4 */
  void* stream;     /* GPU: the cudaStream_t to run on; NULL = the default stream */
} fhd_nufft_opts;

typedef struct fhd_nufft_plan_s* fhd_nufft_plan;

void fhd_nufft_default_opts(fhd_nufft_opts* opts);

/* n_modes: dim values (N1, N2[, N3]), first fastest, each 1..65536. An axis of
 * 1 mode (k = 0 alone) is taken as FINUFFT takes it, and its points are not read;
 * at least two axes need 2 or more modes. isign: +1 or -1 (0 takes the default
 * of the type). opts may be NULL (defaults). */
int fhd_nufft_makeplan(int type, int dim, const int64_t* n_modes, int isign, int n_trans, double tol, int device,
                       fhd_nufft_plan* plan, const fhd_nufft_opts* opts);

/* M points; z is ignored (may be NULL) when dim = 2. */
int fhd_nufft_setpts(fhd_nufft_plan plan, int64_t M, const float* x, const float* y, const float* z);

/* type 1: c (n_trans x M) in, f (n_trans x N) out; type 2: f in, c out. */
int fhd_nufft_execute(fhd_nufft_plan plan, float* c, float* f);

int fhd_nufft_destroy(fhd_nufft_plan plan);

const char* fhd_nufft_error_message(int code);
const char* fhd_nufft_last_error(void);

/* 1 when the library was built with CUDA, else 0. */
int fhd_nufft_has_cuda(void);

#ifdef __cplusplus
}
#endif

#endif /* FHDRECON_NUFFT_H */
