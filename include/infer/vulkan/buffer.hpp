// Device memory: a Buffer, one VkBuffer with its own memory, device-local or host-visible. VkMat
// (vk_mat.hpp) describes a region of one.
#pragma once

#include <cstddef>
#include <cstring>
#include <infer/mat.hpp>
#include <infer/shape.hpp>
#include <infer/vulkan/context.hpp>
#include <infer/vulkan/vk_mat.hpp>
#include <memory>

namespace infer::vk {

/// Where a buffer lives.
enum class MemoryKind {
  device,    ///< device-local (weights, the arena)
  staging,   ///< host-visible and coherent (weights on their way up, tests' transfers)
  upload,    ///< host-visible and coherent, device-local where the device offers such memory
  readback,  ///< host-visible and coherent, cached on the host where the device offers it
};

namespace detail {
inline const char* memory_kind_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::device:
      return "device";
    case MemoryKind::upload:
      return "upload";
    case MemoryKind::readback:
      return "readback";
    case MemoryKind::staging:
      return "staging";
  }
  return "?";
}
}  // namespace detail

/// A VkBuffer and its memory. Sizes are in bytes; a size of 0 is rounded up to 4 (Vulkan does not
/// allow empty buffers).
class Buffer {
 public:
  static Result<std::unique_ptr<Buffer>> create(const Context& ctx, std::size_t bytes,
                                                MemoryKind kind) {
    const std::uint64_t heap = ctx.info().device_local_bytes;
    if (heap && bytes > heap)
      return make_error(
          "Vulkan: allocating a {}-byte {} buffer on {}: more than its {} MB of "
          "device memory",
          bytes, detail::memory_kind_name(kind), ctx.info().name, heap >> 20);
    auto b = std::unique_ptr<Buffer>(new Buffer());
    b->bytes_ = bytes ? bytes : 4;
    b->kind_ = kind;
    using F = ::vk::MemoryPropertyFlagBits;
    const bool device = kind == MemoryKind::device;
    const ::vk::MemoryPropertyFlags host = F::eHostVisible | F::eHostCoherent;
    const ::vk::MemoryPropertyFlags want =
        device ? ::vk::MemoryPropertyFlags(F::eDeviceLocal) : host;
    // What a transfer's staging memory would rather have on top.
    const ::vk::MemoryPropertyFlags prefer = kind == MemoryKind::upload     ? host | F::eDeviceLocal
                                             : kind == MemoryKind::readback ? host | F::eHostCached
                                                                            : want;
    Status s =
        guard(fmt::format("allocating a {}-byte {} buffer on {}", b->bytes_,
                          detail::memory_kind_name(kind), ctx.info().name),
              [&] {
                const ::vk::BufferCreateInfo bci({}, b->bytes_,
                                                 ::vk::BufferUsageFlagBits::eStorageBuffer |
                                                     ::vk::BufferUsageFlagBits::eTransferSrc |
                                                     ::vk::BufferUsageFlagBits::eTransferDst);
                b->buffer_ = std::make_unique<::vk::raii::Buffer>(ctx.device(), bci);
                const auto req = b->buffer_->getMemoryRequirements();
                auto type = ctx.memory_type(req.memoryTypeBits, want);
                // A device without separate device-local memory (lavapipe) still has
                // host-visible memory for everything.
                if (!type && device) type = ctx.memory_type(req.memoryTypeBits, {});
                if (!type) throw std::runtime_error("no memory type fits");
                const auto better = ctx.memory_type(req.memoryTypeBits, prefer);
                if (better && *better != *type) {
                  // The preferred memory may be a small heap (a PCIe window onto device
                  // memory): full, the plain kind serves.
                  try {
                    b->memory_ = std::make_unique<::vk::raii::DeviceMemory>(
                        ctx.device(), ::vk::MemoryAllocateInfo(req.size, *better));
                  } catch (const ::vk::OutOfDeviceMemoryError&) {
                  } catch (const ::vk::OutOfHostMemoryError&) {
                  }
                }
                if (!b->memory_)
                  b->memory_ = std::make_unique<::vk::raii::DeviceMemory>(
                      ctx.device(), ::vk::MemoryAllocateInfo(req.size, *type));
                b->buffer_->bindMemory(**b->memory_, 0);
                if (!device) b->mapped_ = b->memory_->mapMemory(0, VK_WHOLE_SIZE);
              });
    INFER_TRY(s);
    return b;
  }

  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (mapped_) memory_->unmapMemory();
  }

  std::size_t bytes() const { return bytes_; }
  MemoryKind kind() const { return kind_; }
  ::vk::Buffer handle() const { return **buffer_; }
  /// The host address of a staging buffer (nullptr for device memory).
  void* mapped() const { return mapped_; }

 private:
  Buffer() = default;
  std::size_t bytes_ = 0;
  MemoryKind kind_ = MemoryKind::device;
  std::unique_ptr<::vk::raii::Buffer> buffer_;
  std::unique_ptr<::vk::raii::DeviceMemory> memory_;
  void* mapped_ = nullptr;
};

}  // namespace infer::vk
