/* A C program against the installed C interface (include/fhdrecon/fhdrecon_nufft.h):
 * a 2D type 1 of 40 points onto 12 x 10 modes, checked against the direct sum
 * in double in FINUFFT's conventions, then the type 2 of the result against
 * its direct sum, and one refused argument. Exit 0 when all hold. */
#include <fhdrecon/fhdrecon_nufft.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define M 40
#define N1 12
#define N2 10

static double rel_err(const float* a, const double* ref, int n) {
  double num = 0, den = 0;
  for (int i = 0; i < 2 * n; ++i) {
    num += (a[i] - ref[i]) * (a[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return sqrt(num / den);
}

int main(void) {
  float x[M], y[M], c[2 * M], f[2 * N1 * N2], c2[2 * M];
  double ref[2 * N1 * N2], ref2[2 * M];
  srand(7);
  for (int j = 0; j < M; ++j) {
    x[j] = (float)(6.283185307 * rand() / RAND_MAX - 3.14159265);
    y[j] = (float)(6.283185307 * rand() / RAND_MAX - 3.14159265);
    c[2 * j] = (float)rand() / RAND_MAX - 0.5f;
    c[2 * j + 1] = (float)rand() / RAND_MAX - 0.5f;
  }
  fhd_nufft_plan plan;
  int64_t n[2] = {N1, N2};
  int ier = fhd_nufft_makeplan(1, 2, n, +1, 1, 1e-6, FHD_NUFFT_CPU, &plan, NULL);
  if (!ier) ier = fhd_nufft_setpts(plan, M, x, y, NULL);
  if (!ier) ier = fhd_nufft_execute(plan, c, f);
  if (ier) {
    printf("consumer_c: error %d: %s (%s)\n", ier, fhd_nufft_error_message(ier), fhd_nufft_last_error());
    return 1;
  }
  fhd_nufft_destroy(plan);
  /* f[k1 + N1 k2] = sum_j c_j exp(+i (k1 x_j + k2 y_j)), k_d from -N_d/2. */
  for (int i2 = 0; i2 < N2; ++i2)
    for (int i1 = 0; i1 < N1; ++i1) {
      double re = 0, im = 0;
      for (int j = 0; j < M; ++j) {
        double ph = (i1 - N1 / 2) * (double)x[j] + (i2 - N2 / 2) * (double)y[j];
        re += c[2 * j] * cos(ph) - c[2 * j + 1] * sin(ph);
        im += c[2 * j] * sin(ph) + c[2 * j + 1] * cos(ph);
      }
      ref[2 * (i1 + N1 * i2)] = re;
      ref[2 * (i1 + N1 * i2) + 1] = im;
    }
  double e1 = rel_err(f, ref, N1 * N2);
  ier = fhd_nufft_makeplan(2, 2, n, 0, 1, 1e-6, FHD_NUFFT_CPU, &plan, NULL);
  if (!ier) ier = fhd_nufft_setpts(plan, M, x, y, NULL);
  if (!ier) ier = fhd_nufft_execute(plan, c2, f);
  fhd_nufft_destroy(plan);
  for (int j = 0; j < M; ++j) {
    double re = 0, im = 0;
    for (int i2 = 0; i2 < N2; ++i2)
      for (int i1 = 0; i1 < N1; ++i1) {
        double ph = -((i1 - N1 / 2) * (double)x[j] + (i2 - N2 / 2) * (double)y[j]);
        const float* v = f + 2 * (i1 + N1 * i2);
        re += v[0] * cos(ph) - v[1] * sin(ph);
        im += v[0] * sin(ph) + v[1] * cos(ph);
      }
    ref2[2 * j] = re;
    ref2[2 * j + 1] = im;
  }
  double e2 = rel_err(c2, ref2, M);
  int64_t bad[2] = {N1, 0};
  int refused = fhd_nufft_makeplan(1, 2, bad, 1, 1, 1e-6, FHD_NUFFT_CPU, &plan, NULL);
  printf("consumer_c: type 1 rel. error %.2e, type 2 %.2e, n_modes[1] = 0 gives %d (%s)\n", e1, e2, refused,
         fhd_nufft_last_error());
  /* No GPU 1000 on any host (and none at all without a driver or CUDA): the
     header's "no such GPU", on which a caller falls back to the CPU. */
  int no_gpu = fhd_nufft_makeplan(1, 2, n, 1, 1, 1e-6, 1000, &plan, NULL);
  printf("consumer_c: device 1000 gives %d (%s)\n", no_gpu, fhd_nufft_last_error());
  return (ier == 0 && e1 < 1e-5 && e2 < 1e-5 && refused == FHD_NUFFT_ERR_ARGUMENT && no_gpu == FHD_NUFFT_ERR_NO_GPU)
             ? 0
             : 1;
}
