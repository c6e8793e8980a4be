#include "cuda/device/staged_upload.hpp"

#include <algorithm>
#include <cstring>

#include "cuda/device/check.hpp"
#include "cuda/device/host_copy.hpp"

namespace fhd::gpu {

// Made with the device: pinning 2 x 2 MB took over a millisecond, which the
// first stage that uploads (cmpMu) paid when the chunks were made at first use.
StagedUpload::StagedUpload(std::size_t chunk_bytes) : chunk_(chunk_bytes) {
  try {
    for (int b = 0; b < 2; ++b) {
      CUDA_CHECK(cudaMallocHost(&buf_[b], chunk_));
      CUDA_CHECK(cudaEventCreateWithFlags(&left_[b], cudaEventDisableTiming));
    }
  } catch (...) {
    release();
    throw;
  }
}

StagedUpload::~StagedUpload() { release(); }

void StagedUpload::release() noexcept {
  for (int b = 0; b < 2; ++b) {
    if (left_[b]) cudaEventSynchronize(left_[b]), cudaEventDestroy(left_[b]);
    if (buf_[b]) cudaFreeHost(buf_[b]);
    left_[b] = nullptr;
    buf_[b] = nullptr;
  }
}

void StagedUpload::run(const void* host, void* dev, std::size_t bytes, cudaStream_t s) {
  if (bytes < 2 * chunk_) {
    if (bytes) CUDA_CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const auto* from = static_cast<const char*>(host);
  auto* to = static_cast<char*>(dev);
  const int threads = upload_threads();
  for (std::size_t off = 0, i = 0; off < bytes; off += chunk_, ++i) {
    const int b = int(i % 2);
    const std::size_t n = std::min(chunk_, bytes - off);
    CUDA_CHECK(cudaEventSynchronize(left_[b]));  // this chunk's previous copy has left
    copy_in_parallel(buf_[b], from + off, n, threads);
    CUDA_CHECK(cudaMemcpyAsync(to + off, buf_[b], n, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaEventRecord(left_[b], s));
  }
}

}  // namespace fhd::gpu
