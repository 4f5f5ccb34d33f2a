// Device memory the runtime hands to its callers (ABI 3: allocate_device, free_device,
// copy_memory): tensors that stay on the device between runs, such as a KV cache, usable by
// every graph of the process because all of them run in the device's primary context.
#pragma once

#include <cstdint>

#include "plugin_abi/ortc_backend_plugin.h"

namespace ortc::cuda_rt {

// `bytes` zero-filled bytes (a null pointer for 0 bytes).
OrtcPluginStatus AllocateCallerMemory(uint64_t bytes, void** out);
// Frees what AllocateCallerMemory returned; other pointers are ignored.
void FreeCallerMemory(void* data);
// Host <-> device or device <-> device; device pointers must lie inside caller memory or a
// graph's own buffers (the driver checks). Returns after the copy completes.
OrtcPluginStatus CopyMemory(void* dst, int32_t dst_location, const void* src, int32_t src_location,
                            uint64_t bytes);
// `rows` rows of row_bytes, the n-th at src + n * src_pitch to dst + n * dst_pitch, in one
// strided copy (copy_memory_rows).
OrtcPluginStatus CopyMemoryRows(void* dst, int32_t dst_location, uint64_t dst_pitch,
                                const void* src, int32_t src_location, uint64_t src_pitch,
                                uint64_t row_bytes, uint64_t rows);

}  // namespace ortc::cuda_rt
