// Copies a strided view of a tensor's bytes into a dense tensor: the one data-movement loop
// behind Transpose, Slice, Expand and Split. Axes are coalesced first (size-1 axes dropped, neighbours
// that are contiguous in the source merged), so the innermost run is as long as the layout
// allows and is copied whole (memcpy), filled (a broadcast axis) or gathered with a typed
// strided loop; rows are spread over the intra-op threads. Exporter graphs move every
// attention head through Transpose and repeat GQA's key/value heads through Expand, which an
// element-at-a-time loop made a tenth of a transformer's run time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ortc::exec {

// Writes dst[i] for every index i of `shape` (row-major) from src[base + sum_d coord_d *
// strides[d]]; strides are in elements and may be 0 (broadcast) or negative (reversed slices).
// Not for strings (elements are copied as bytes).
void StridedCopy(const void* src, int64_t base, const std::vector<int64_t>& shape,
                 const std::vector<int64_t>& strides, size_t element_size, void* dst);

}  // namespace ortc::exec
