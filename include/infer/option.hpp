// Run-time options of a forward pass, ncnn's Option in spirit: threads, allocators, the storage
// type a network prefers and whether packed layouts may be used.
#pragma once

#include <infer/allocator.hpp>
#include <infer/element.hpp>

namespace infer {

struct Option {
  /// OpenMP threads a layer may use.
  int num_threads = 1;
  /// Where layers allocate their output blobs; nullptr means default_allocator().
  Allocator* blob_allocator = nullptr;
  /// Where layers allocate temporaries; nullptr means default_allocator().
  Allocator* workspace_allocator = nullptr;
  /// The storage type a network prefers for layers that support it (f32, f16, bf16 or i8).
  ElemType storage = ElemType::f32;
  /// Whether packed layouts (elempack > 1) may be chosen.
  bool use_packing = true;
  /// The Vulkan device a network whose target is Device::vulkan runs on: an index among the
  /// loader's devices, or -1 for the best one (discrete GPU, then integrated, then a CPU
  /// implementation such as lavapipe).
  int vulkan_device = -1;
  /// How long, in microseconds, a forward polls the fence of each run of GPU steps it submits
  /// before it blocks in the driver's wait: a blocked thread wakes tens of microseconds after the
  /// GPU finishes, a polling one at once, at the cost of a busy core while it polls. 0 blocks at
  /// once; a CPU implementation of Vulkan (lavapipe), which needs the cores, never polls.
  int vulkan_spin_us = 2000;
  /// InnerProduct keeps its weights as f16 for the one-sample product (f32 arithmetic), halving
  /// the bytes that weight-bandwidth-bound kernel streams: what ncnn's x86 build does by default
  /// where the CPU has F16C. Weights are rounded to f16 (11 bits); off, they stay f32.
  bool fp16_weights = false;
  /// Convolution (its GEMM and Winograd paths) and InnerProduct (the one-sample product) round
  /// their inputs and weights to bf16 and multiply with AVX512_BF16's vdpbf16ps, summing in f32,
  /// on f32 storage too (bf16 storage always does, where the build has the extension); without
  /// AVX512_BF16 in the build it changes nothing. Read by prepare (the weights' layout). Its
  /// accuracy per model is in the README ("bf16 arithmetic").
  bool bf16_arithmetic = false;
  /// Where bf16 arithmetic runs and the CPU and OS offer AMX tiles (AMX-TILE and AMX-BF16 in the
  /// build, the tile state granted: kernels/amx.hpp), Convolution's GEMM and Winograd layers
  /// multiply on the tiles (im2col GEMM, 3x3 included); off, they keep vdpbf16ps. Read by
  /// prepare.
  bool use_amx = true;

  Allocator* blob_alloc() const { return blob_allocator ? blob_allocator : default_allocator(); }
  Allocator* workspace_alloc() const {
    return workspace_allocator ? workspace_allocator : default_allocator();
  }
};

}  // namespace infer
