#pragma once
// Uploads from pageable host memory through two pinned chunks: the host copies
// chunk i + 1 into one while the copy engine moves chunk i out of the other.
// A pageable cudaMemcpyAsync stages through the driver's own buffers one piece
// at a time; the 6000 x 256 case's 12 MB of k-space took 1.4-1.5 ms that way
// on the H100 (cmpMu, docs/performance.md). On return the host memory may be
// reused; the pinned chunks are reused only after their copy has left. Host
// threads sharing a device take turns.
#include <cuda_runtime.h>

#include <cstddef>
#include <mutex>

namespace fhd::gpu {

class StagedUpload {
 public:
  // On the current device; throws CudaError when the pinned memory cannot be had.
  explicit StagedUpload(std::size_t chunk_bytes = std::size_t(2) << 20);
  ~StagedUpload();
  StagedUpload(const StagedUpload&) = delete;
  StagedUpload& operator=(const StagedUpload&) = delete;

  // bytes from host to dev on stream s; smaller uploads than two chunks go directly.
  void run(const void* host, void* dev, std::size_t bytes, cudaStream_t s);

 private:
  void release() noexcept;
  std::size_t chunk_;
  void* buf_[2] = {nullptr, nullptr};
  cudaEvent_t left_[2] = {nullptr, nullptr};  // recorded after each chunk's copy
  std::mutex mutex_;                          // one upload at a time through the chunks
};

}  // namespace fhd::gpu
