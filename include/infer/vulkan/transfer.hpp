// Moving blobs between host Mats and device VkMats through host-visible staging buffers, for
// tests and tools that move one blob at a time: host and device blobs of one layout
// (packed_layout), so each direction is one memcpy and one buffer copy. A plan's transfers, which
// may cast as they copy, are net/gpu_executor.hpp's.
#pragma once

#include <cstring>
#include <infer/mat.hpp>
#include <infer/vulkan/buffer.hpp>
#include <infer/vulkan/command.hpp>

namespace infer::vk {

namespace detail {
inline Status same_layout(const Mat& host, const VkMat& dev, std::string_view what) {
  if (!(host.shape() == dev.shape()) || host.type() != dev.type() ||
      host.elempack() != dev.elempack() || host.cstep() != dev.cstep())
    return make_error("Vulkan {}: host blob {} and device blob {}x{}x{} {} pack {} differ", what,
                      host.describe(), dev.shape().w, dev.shape().h, dev.shape().c,
                      to_string(dev.type()), dev.elempack());
  return {};
}
}  // namespace detail

/// Writes `host` into `staging` at `offset` and records its copy into `dst`.
inline Status upload(Command& cmd, const Mat& host, const Buffer& staging, std::size_t offset,
                     const VkMat& dst) {
  INFER_TRY(detail::same_layout(host, dst, "upload"));
  if (!staging.mapped() || offset + dst.bytes() > staging.bytes())
    return make_error("Vulkan upload: {} bytes at {} do not fit the {}-byte staging buffer",
                      dst.bytes(), offset, staging.bytes());
  std::memcpy(static_cast<char*>(staging.mapped()) + offset, host.data(), dst.bytes());
  return cmd.copy(staging, offset, *dst.buffer(), dst.offset(), dst.bytes());
}

/// Records the copy of `src` into `staging` at `offset`; after the submit, read_back() fills a Mat.
inline Status download(Command& cmd, const VkMat& src, const Buffer& staging, std::size_t offset) {
  if (!staging.mapped() || offset + src.bytes() > staging.bytes())
    return make_error("Vulkan download: {} bytes at {} do not fit the {}-byte staging buffer",
                      src.bytes(), offset, staging.bytes());
  return cmd.copy(*src.buffer(), src.offset(), staging, offset, src.bytes());
}

/// Copies a downloaded blob out of `staging` into `host` (created to match `src`).
inline Status read_back(const Buffer& staging, std::size_t offset, const VkMat& src, Mat& host) {
  INFER_TRY(host.create(src.shape(), src.type(), src.elempack()));
  INFER_TRY(detail::same_layout(host, src, "download"));
  std::memcpy(host.data(), static_cast<const char*>(staging.mapped()) + offset, src.bytes());
  return {};
}

}  // namespace infer::vk
