// VkMat, a blob in device memory: a region of a Buffer with shape, element type and pack, laid out
// exactly as Mat lays out host memory (channel groups cstep packed elements apart), so uploads and
// downloads are copies. Apart from Buffer (buffer.hpp) so that layers' GPU forwards can name blobs
// without including Vulkan.
#pragma once

#include <cstddef>
#include <infer/mat.hpp>
#include <infer/shape.hpp>

namespace infer::vk {

class Buffer;

/// A blob in device memory: a region of a Buffer described as Mat describes host memory.
class VkMat {
 public:
  VkMat() = default;
  /// A view of `bytes` at `offset` of `buffer`, laid out as a Mat of this shape, type and pack
  /// (its packed_layout's cstep).
  VkMat(const Buffer* buffer, std::size_t offset, const Shape& shape, ElemType type, int pack)
      : buffer_(buffer), offset_(offset), shape_(shape), type_(type), pack_(pack) {
    const PackedLayout layout = packed_layout(shape, type, pack);
    cstep_ = layout.cstep;
    groups_ = layout.groups;
    bytes_ = layout.cstep * layout.groups * elem_size(type) * std::size_t(pack);
  }

  bool empty() const { return buffer_ == nullptr; }
  const Buffer* buffer() const { return buffer_; }
  std::size_t offset() const { return offset_; }
  std::size_t bytes() const { return bytes_; }
  /// The logical (unpacked) shape.
  const Shape& shape() const { return shape_; }
  ElemType type() const { return type_; }
  int elempack() const { return pack_; }
  std::size_t cstep() const { return cstep_; }
  /// Packed elements in the whole region (channel padding included).
  std::size_t total() const { return cstep_ * groups_; }
  /// Channel groups (packed channels of a 3-D/4-D blob; 1 otherwise).
  std::size_t groups() const { return groups_; }

 private:
  const Buffer* buffer_ = nullptr;
  std::size_t offset_ = 0, bytes_ = 0, cstep_ = 0, groups_ = 0;
  Shape shape_{};
  ElemType type_ = ElemType::f32;
  int pack_ = 1;
};

/// Whether two blobs are the same memory (a step run in place).
inline bool same_memory(const VkMat& a, const VkMat& b) {
  return a.buffer() == b.buffer() && a.offset() == b.offset();
}

}  // namespace infer::vk
