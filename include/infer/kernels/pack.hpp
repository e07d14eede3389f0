// Repacking kernel: moves values between layouts of different elempack along the packing axis.
// Knows nothing of Mat: it sees rows ("channels") of packed elements and a stride between them.
#pragma once

#include <cstddef>
#include <cstring>

namespace infer::kernels {

/// Copies `channels` logical channels of `n` values each from a layout packed by InPack into one
/// packed by OutPack. Channel ch lives in group ch / Pack, lane ch % Pack; `*_gstep` is the
/// distance between group starts in packed elements (cstep for 3-D, w for 2-D). Threads split the
/// output groups.
template <class V,      ///< value type (only its size matters: 1, 2 or 4 bytes)
          int InPack,   ///< source elempack
          int OutPack>  ///< destination elempack
void repack(const V* src, std::size_t src_gstep, V* dst, std::size_t dst_gstep, int channels,
            std::size_t n, int num_threads) {
  const int out_groups = channels / OutPack;
#pragma omp parallel for num_threads(num_threads)
  for (int g = 0; g < out_groups; ++g) {
    V* out = dst + std::size_t(g) * dst_gstep * OutPack;
    if constexpr (InPack == OutPack) {
      std::memcpy(out, src + std::size_t(g) * src_gstep * InPack, n * OutPack * sizeof(V));
    } else {
      const V* lane_src[OutPack];
      for (int l = 0; l < OutPack; ++l) {
        const int ch = g * OutPack + l;
        lane_src[l] = src + std::size_t(ch / InPack) * src_gstep * InPack + ch % InPack;
      }
      for (std::size_t i = 0; i < n; ++i) {
        for (int l = 0; l < OutPack; ++l) out[i * OutPack + l] = lane_src[l][i * InPack];
      }
    }
  }
}

}  // namespace infer::kernels
