// A GPU timeline without Nsight Systems (the GPU machine has Nsight Compute
// only): a CUPTI injection library. The CUDA driver loads it when
// CUDA_INJECTION64_PATH names it and calls InitializeInjection; from then on
// every kernel, copy and set, and every runtime and driver API call, goes to
// FHD_TIMELINE_OUT as one CSV line:
//   kind,start_ns,end_ns,name
// (a kernel's, copy's or set's name ends in " @dN", N its device).
// kind: K kernel, C copy (name: direction and bytes), S memset, R runtime API,
// D driver API. GPU and host times share CUPTI's clock, so a gap between
// kernels can be laid against the calls the host was making meanwhile
// (scripts/device/timeline.py). A development tool: scripts/device/profile-steps.sh
// builds it on the GPU machine with nvcc and links CUPTI from the toolkit.
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <mutex>

namespace {

std::FILE* g_out = nullptr;
std::mutex g_mutex;

#define CUPTI_OK(call)                                                              \
  do {                                                                              \
    const CUptiResult r_ = (call);                                                  \
    if (r_ != CUPTI_SUCCESS) {                                                      \
      const char* s_ = nullptr;                                                     \
      cuptiGetResultString(r_, &s_);                                                \
      std::fprintf(stderr, "timeline: %s failed: %s\n", #call, s_ ? s_ : "?");      \
      return;                                                                       \
    }                                                                               \
  } while (0)

const char* api_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) return "?";
  return name;
}

const char* copy_kind(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "copy";
  }
}

void write_record(const CUpti_Activity* r) {
  switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(r);
      std::fprintf(g_out, "K,%llu,%llu,%s @d%u\n", (unsigned long long)k->start, (unsigned long long)k->end, k->name,
                   k->deviceId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* c = reinterpret_cast<const CUpti_ActivityMemcpy6*>(r);
      std::fprintf(g_out, "C,%llu,%llu,%s %llu B @d%u\n", (unsigned long long)c->start, (unsigned long long)c->end,
                   copy_kind(c->copyKind), (unsigned long long)c->bytes, c->deviceId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {  // peer to peer
      auto* c = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(r);
      std::fprintf(g_out, "C,%llu,%llu,PtoP %llu B from d%u to d%u @d%u\n", (unsigned long long)c->start,
                   (unsigned long long)c->end, (unsigned long long)c->bytes, c->srcDeviceId, c->dstDeviceId,
                   c->deviceId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* s = reinterpret_cast<const CUpti_ActivityMemset4*>(r);
      std::fprintf(g_out, "S,%llu,%llu,memset %llu B @d%u\n", (unsigned long long)s->start, (unsigned long long)s->end,
                   (unsigned long long)s->bytes, s->deviceId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(r);
      const bool rt = r->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      std::fprintf(g_out, "%c,%llu,%llu,%s\n", rt ? 'R' : 'D', (unsigned long long)a->start,
                   (unsigned long long)a->end,
                   api_name(rt ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid));
      break;
    }
    default:
      break;
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = std::size_t(8) << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    CUpti_Activity* r = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) write_record(r);
    std::fflush(g_out);
  }
  std::free(buffer);
}

void at_exit() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (g_out) std::fclose(g_out);
  g_out = nullptr;
}

void start() {
  const char* path = std::getenv("FHD_TIMELINE_OUT");
  g_out = std::fopen(path ? path : "timeline.csv", "w");
  if (!g_out) {
    std::perror("timeline: FHD_TIMELINE_OUT");
    return;
  }
  CUPTI_OK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
  for (CUpti_ActivityKind k : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                               CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER})
    CUPTI_OK(cuptiActivityEnable(k));
  std::atexit(at_exit);
}

}  // namespace

extern "C" int InitializeInjection() {
  start();
  return 1;
}
