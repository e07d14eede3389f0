// What the composer decides: the steps to run (layers, with fused activations and folded affine
// maps, and the conversions between them), the buffers they read and write, and where each
// buffer lives: one arena per device (the host's, and the GPU's when the target places nodes
// there, with uploads and downloads where a blob crosses). Plain data, built by constexpr passes at compile time for a static
// graph and at load time for a network read from a file.
#pragma once

#include <cstddef>
#include <infer/element.hpp>
#include <infer/graph/desc.hpp>
#include <infer/simd.hpp>
#include <span>
#include <string_view>
#include <vector>

namespace infer::graph {

/// Where a step runs and a buffer lives. `any` is a target's wish, not a place: infer::Net plans
/// it as vulkan when a Vulkan device opens, else as cpu (the one CPU fallback, asked for).
enum class Device : unsigned char { cpu, vulkan, any };

constexpr std::string_view device_name(Device d) {
  return d == Device::cpu ? "cpu" : d == Device::vulkan ? "gpu" : "any";
}

/// The widest pack of a GPU buffer (a vec4 of the shaders).
inline constexpr int kGpuMaxPack = 4;

/// What the graph should run at.
struct Target {
  ElemType storage = ElemType::f32;  ///< preferred storage type on the CPU (f32, f16 or bf16)
  int max_pack = simd::max_width;    ///< widest pack on the CPU (1 turns packing off)
  bool fuse = true;     ///< fuse activations and fold BatchNorm/Scale (off: the plain reference)
  bool inplace = true;  ///< run layers in place where possible (off: every blob its own buffer)
  /// Device::vulkan places every node whose layer has a GPU forward on the GPU (the others stay
  /// on the CPU, with transfers between).
  Device device = Device::cpu;
  ElemType gpu_storage = ElemType::f16;  ///< storage type on the GPU: f16 (default) or f32
  int gpu_max_pack = kGpuMaxPack;        ///< widest pack on the GPU (1 or 4)
  /// On the GPU, take a squeeze-excitation multiply into the convolution reading it (with fuse;
  /// off: the multiply runs as a step of its own, to compare).
  bool fuse_gates = true;
};

/// Why a graph cannot be composed, and where.
struct PlanError {
  enum Kind {
    none,
    unknown_blob,    ///< a node reads a blob nothing produces
    duplicate_blob,  ///< two producers (or a producer and an input) for one blob
    cycle,           ///< the nodes form a cycle
    io_count,        ///< a one-blob layer given several inputs or outputs
    unknown_output,  ///< a graph output that no node produces
    no_nodes,        ///< nothing to run
    shape,           ///< a layer's infer_shapes rejected its inputs
    storage,         ///< a layer declares no storage type the target can convert to
    variable_rows,   ///< a node reads a blob whose row count is known only at run time
  };
  Kind kind = none;
  int node = -1;            ///< the node at fault, or -1
  int blob = -1;            ///< the blob at fault, or -1
  const char* detail = "";  ///< the layer's own reason (shape errors)

  constexpr bool ok() const { return kind == none; }
};

/// A buffer of the plan: one blob in one (type, pack), or a conversion's result.
struct BufferDesc {
  int blob = -1;  ///< the graph blob it holds
  Shape shape;
  ElemType type = ElemType::f32;
  int pack = 1;
  std::size_t bytes = 0;   ///< packed_layout(shape, type, pack).bytes
  std::size_t offset = 0;  ///< in the arena
  int first = -1;          ///< step that writes it (-1: a graph input, written before step 0)
  int last = -1;           ///< last step that reads it (graph outputs: the end)
  int alias = -1;          ///< the buffer whose memory it shares (in-place steps, views), or -1
  std::size_t view_offset = 0;  ///< where it starts in the alias's memory (a range of channels)
  bool output = false;          ///< read by the caller after forward
  Device device = Device::cpu;  ///< whose memory: the host arena or the GPU's
  /// An i8 buffer's quantization scale (value = q / scale): its quantized producer's top scale,
  /// or the scale a quantize step used; 0 for other types.
  float scale = 0.f;
};

/// One step of the plan.
struct StepDesc {
  /// A layer, a conversion on one device, or a transfer between host and GPU memory (the same
  /// pack on both sides; between float types it also casts, graph::detail::transfer_casts; other
  /// conversions happen on one side of it).
  enum Kind { layer, cast, repack, upload, download };
  Kind kind = layer;
  Device device = Device::cpu;  ///< where it runs (a transfer: the GPU's queue)
  int node = -1;  ///< the layer node (kind == layer)
  ElemType type = ElemType::f32;
  int pack = 1;                 ///< the node's width (elempack of its inputs)
  bool inplace = false;         ///< runs forward_inplace on its input buffer
  std::vector<int> in, out;     ///< buffer ids
  layers::ActivationParam act;  ///< activation applied in the epilogue (0 = none)
  int fused_node = -1;          ///< the activation node fused into this one, or -1
  int residual_node = -1;  ///< the sum node fused into this one (its last input the residual), or -1
  /// The channel multiply fused into this one (a squeeze-excitation gate: input 1 the vector), or
  /// -1; gate_act the multiply's activation, applied after it.
  int gate_node = -1;
  layers::ActivationParam gate_act;
  std::vector<int> folded;      ///< affine nodes (BatchNorm, Scale) folded into the weights
  /// A cast to or from i8: the quantization scale (q = round(v * scale)), the i8 side's.
  float scale = 0.f;
};

/// The scales a cast step passes to infer::cast: its i8 scale, or none.
constexpr std::span<const float> cast_scales(const StepDesc& s) {
  return s.scale != 0.f ? std::span<const float>(&s.scale, 1) : std::span<const float>();
}

/// The composed graph.
struct Plan {
  GraphDesc desc;
  Target target;
  PlanError error;
  std::vector<int> order;          ///< node ids in execution order
  std::vector<Shape> blob_shapes;  ///< by blob id
  std::vector<StepDesc> steps;
  std::vector<BufferDesc> buffers;
  std::vector<int> input_buffers;   ///< by graph input
  std::vector<int> output_buffers;  ///< by graph output
  std::size_t arena_bytes = 0;
  std::size_t lower_bound = 0;  ///< the most bytes live at one time
  std::size_t gpu_arena_bytes = 0;  ///< the GPU's arena (0 when nothing runs there)
  std::size_t gpu_lower_bound = 0;
};

}  // namespace infer::graph
