// What a layer's GPU forward works with, without including Vulkan: a Recorder takes its
// dispatches (shader, specialization constants, blobs, push constants) and copies into a command
// buffer being recorded; a GpuStep says at which storage type and pack the plan runs the layer,
// which activation it fused into it and which weights the layer uploaded; an Uploader takes the
// weights at load. Implementations live with the command buffer (command.hpp) and the executor.
//
// A layer with a GPU forward provides
//   Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
//                         const vk::GpuStep& step, vk::Recorder& rec) const;
// and, when it has weights, `Status upload_vulkan(vk::Uploader&) const`. When the plan runs it in
// place, out[0] is in[0]'s memory.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <infer/layers/detail/activation_param.hpp>
#include <infer/status.hpp>
#include <infer/vulkan/shader.hpp>
#include <infer/vulkan/vk_mat.hpp>
#include <span>
#include <string_view>

namespace infer::vk {

/// Records GPU work for one plan (or one test): dispatches and copies, in order.
class Recorder {
 public:
  virtual ~Recorder() = default;
  /// The device's name, for errors.
  virtual std::string_view device_name() const = 0;
  /// Whether the device reads and writes 16-bit storage buffers (f16 blobs).
  virtual bool fp16_storage() const = 0;
  /// Whether the kernels' cooperative-matrix (tensor-core) paths run on the device: 16x16x16
  /// fp16 products with f32 accumulators on 32-wide subgroups (DeviceInfo::cooperative_matrix).
  virtual bool cooperative_matrix() const { return false; }
  /// The device's streaming multiprocessors (compute units); 0 where it does not say.
  virtual std::uint32_t compute_units() const { return 0; }
  /// The shared memory a workgroup may use, in bytes (Vulkan's least, 16 KB, where unknown).
  virtual std::uint32_t max_shared_memory() const { return 16384; }
  /// The invocations a workgroup may have (Vulkan's least, 128, where unknown).
  virtual std::uint32_t max_workgroup_invocations() const { return 128; }
  /// Records one dispatch of `code` with workgroup size `local` (constants 0-2), constants `spec`
  /// (ids from 3), blob i at binding i, `push` as push constants, `groups` workgroups.
  virtual Status dispatch(const ShaderCode& code, std::array<std::uint32_t, 3> local,
                          std::span<const SpecValue> spec, std::span<const VkMat* const> blobs,
                          std::span<const std::byte> push,
                          std::array<std::uint32_t, 3> groups) = 0;
  /// Records a copy of `bytes` from src's memory at `src_offset` to dst's at `dst_offset` (offsets
  /// from each blob's start).
  virtual Status copy(const VkMat& src, std::size_t src_offset, const VkMat& dst,
                      std::size_t dst_offset, std::size_t bytes) = 0;
  /// Makes everything recorded so far visible to what is recorded next.
  virtual Status barrier() = 0;
  /// Device memory for a kernel's intermediate values (a split GEMM's partial sums), at least
  /// `bytes`, as a 1-D f32 blob. Shared by every step of the recording: a kernel that uses it
  /// records a barrier before its first write, and nothing of it outlives the step.
  virtual Result<VkMat> scratch(std::size_t bytes) {
    return make_error("Vulkan: this recorder has no scratch memory ({} bytes asked for)", bytes);
  }
};

/// One step of a plan on the GPU, as the layer's forward sees it.
struct GpuStep {
  ElemType type = ElemType::f16;  ///< the blobs' storage type (f32 or f16)
  int pack = 1;                   ///< the inputs' pack (1 or 4)
  layers::ActivationParam act;    ///< the activation fused into the step (type 0: none)
  /// A channel multiply fused into the step (a squeeze-excitation gate): its input 1 is the
  /// vector, gate_act the multiply's activation (a convolution's GEMM gathers act(x * g)).
  bool gated = false;
  layers::ActivationParam gate_act;
  std::span<const VkMat> weights; ///< what the layer's upload_vulkan added, in order
};

/// Takes a layer's weights at load: each call stores values (converted to the storage type) in
/// device memory and returns them as a 1-D blob at pack 1.
class Uploader {
 public:
  virtual ~Uploader() = default;
  virtual ElemType type() const = 0;
  virtual Result<VkMat> add(std::span<const float> values) = 0;
};

/// Whether the shaders can read and write `type` on rec's device (f32; f16 with 16-bit storage).
inline Status check_storage(const Recorder& rec, ElemType type, std::string_view what) {
  if (type != ElemType::f32 && type != ElemType::f16)
    return make_error("{}: storage {} is not f32 or f16", what, to_string(type));
  if (type == ElemType::f16 && !rec.fp16_storage())
    return make_error("{}: {} has no 16-bit storage (storageBuffer16BitAccess) for an f16 blob",
                      what, rec.device_name());
  return {};
}

/// A blob a kernel binds: storage the device reads (check_storage), pack 1 or 4, and few enough
/// values for the shaders' 32-bit indexes.
inline Status check_blob(const Recorder& rec, const VkMat& m, std::string_view what) {
  INFER_TRY(check_storage(rec, m.type(), what));
  if (m.elempack() != 1 && m.elempack() != 4)
    return make_error("{}: pack {} (the kernel reads packs 1 and 4)", what, m.elempack());
  const std::size_t values = m.total() * std::size_t(m.elempack());
  if (values > 0x7FFFFFFFu) return make_error("{}: a blob of {} values is beyond 2^31", what, values);
  return {};
}

/// The workgroups of `local` invocations that cover `n` (a 1-D kernel): rows of at most 65535
/// (the guaranteed x limit), as many rows as needed; the shader folds y back into its index.
inline std::array<std::uint32_t, 3> groups_1d(std::size_t n, std::uint32_t local) {
  const std::uint32_t groups = std::uint32_t((n + local - 1) / local);
  const std::uint32_t gx = groups < 65535u ? groups : 65535u;
  return {gx, gx ? (groups + gx - 1) / gx : 0u, 1u};
}

}  // namespace infer::vk
