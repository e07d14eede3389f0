// Every layer with a GPU forward, through its forward_vulkan (the layer's own parameter handling,
// weights upload and kernel calls), against its own CPU forward: f32 and f16 storage, packs 1 and
// 4, in place where the layer runs so on the GPU, odd shapes, the parameter forms ncnn accepts
// (SAME pads, dilation, groups, pad modes, broadcasts, negative axes) and fused activations.
#include <catch2/catch.hpp>
#include <infer/layers.hpp>
#include <infer/layers/layer_norm.hpp>
#include <random>

#include "vulkan/gpu_layer_tester.hpp"

namespace L = infer::layers;
using infer::Shape;
using infer::vk::test::GpuLayerTester;

namespace {

std::vector<float> values(std::size_t n, unsigned seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

L::Convolution conv(int in, int out, int k, int stride, int dilation, int pad, int act) {
  L::Convolution c;
  c.num_output = out;
  c.kernel_w = k;
  c.stride_w = stride;
  c.dilation_w = dilation;
  c.pad_left = pad;
  c.bias_term = 1;
  c.weight_data_size = out * in * k * k;
  c.weight_data = values(std::size_t(c.weight_data_size), 3, -0.3f, 0.3f);
  c.bias_data = values(std::size_t(out), 4);
  c.activation.type = act;
  if (act == 2) c.activation.params = {0.1f, 0.f};
  if (act == 3) c.activation.params = {-0.5f, 0.5f};
  if (act == 6) c.activation.params = {1.f / 6, 0.5f};
  return c;
}

}  // namespace

TEST_CASE("Vulkan layers: activations", "[vulkan][layers]") {
  const std::vector<Shape> shapes = {Shape::of(7, 5, 12)};
  GpuLayerTester(L::ReLU{}, "ReLU").inputs(shapes).run();
  GpuLayerTester(L::ReLU{0.1f}, "leaky ReLU").inputs({Shape::of(13, 8)}).run();
  GpuLayerTester(L::Clip{-0.5f, 0.7f}, "Clip").inputs(shapes).run();
  GpuLayerTester(L::Sigmoid{}, "Sigmoid").inputs({Shape::of(20)}).run();
  GpuLayerTester(L::TanH{}, "TanH").inputs(shapes).run();
  GpuLayerTester(L::Swish{}, "Swish").inputs(shapes).run();
  GpuLayerTester(L::Mish{}, "Mish").inputs(shapes).run();
  GpuLayerTester(L::HardSigmoid{0.2f, 0.5f}, "HardSigmoid").inputs(shapes).run();
  GpuLayerTester(L::HardSwish{1.f / 6, 0.5f}, "HardSwish").inputs(shapes).run();
  GpuLayerTester(L::ELU{0.3f}, "ELU").inputs(shapes).run();
  GpuLayerTester(L::GELU{false}, "GELU").inputs(shapes).run();
  GpuLayerTester(L::GELU{true}, "GELU fast").inputs(shapes).run();
  GpuLayerTester(L::Dropout{0.5f}, "Dropout scale 0.5").inputs(shapes).run();
}

TEST_CASE("Vulkan layers: convolutions", "[vulkan][layers]") {
  for (int act : {0, 1, 2, 3, 4, 5, 6})
    GpuLayerTester(conv(8, 12, 3, 1, 1, 1, act), fmt::format("Convolution 3x3 act {}", act))
        .inputs({Shape::of(9, 7, 8)})
        .run();
  GpuLayerTester(conv(5, 7, 3, 2, 1, 1, 1), "Convolution 3x3 s2, odd channels")
      .inputs({Shape::of(11, 9, 5)})
      .run();
  GpuLayerTester(conv(4, 8, 3, 1, 2, 2, 0), "Convolution dilation 2").inputs({Shape::of(10, 9, 4)}).run();
  GpuLayerTester(conv(4, 8, 5, 2, 1, -233, 1), "Convolution 5x5 s2 SAME_UPPER")
      .inputs({Shape::of(13, 10, 4)})
      .run();
  L::Convolution padded = conv(4, 4, 3, 1, 1, 1, 0);
  padded.pad_value = 0.5f;
  padded.pad_right = 0;
  padded.pad_bottom = 2;
  GpuLayerTester(padded, "Convolution pad value, uneven pads").inputs({Shape::of(7, 6, 4)}).run();
  L::ConvolutionDepthWise dw;
  dw.num_output = 12;
  dw.kernel_w = 3;
  dw.stride_w = 2;
  dw.pad_left = 1;
  dw.bias_term = 1;
  dw.group = 12;
  dw.weight_data_size = 12 * 9;
  dw.weight_data = values(108, 5);
  dw.bias_data = values(12, 6);
  dw.activation.type = 1;
  GpuLayerTester(dw, "ConvolutionDepthWise 3x3 s2").inputs({Shape::of(9, 9, 12)}).run();
  L::ConvolutionDepthWise grouped = dw;
  grouped.num_output = 8;
  grouped.group = 4;
  grouped.weight_data_size = 8 * 3 * 9;
  grouped.weight_data = values(std::size_t(grouped.weight_data_size), 7);
  grouped.bias_data = values(8, 8);
  grouped.activation.type = 0;
  GpuLayerTester(grouped, "ConvolutionDepthWise 4 groups").inputs({Shape::of(8, 7, 12)}).run();
  L::InnerProduct fc;
  fc.num_output = 10;
  fc.bias_term = 1;
  fc.weight_data_size = 10 * 5 * 3 * 8;
  fc.weight_data = values(std::size_t(fc.weight_data_size), 9, -0.2f, 0.2f);
  fc.bias_data = values(10, 10);
  fc.activation.type = 1;
  GpuLayerTester(fc, "InnerProduct 3-D input").inputs({Shape::of(5, 3, 8)}).run();
  GpuLayerTester(fc, "InnerProduct 1-D input").inputs({Shape::of(120)}).run();
  // K over several of the kernel's 1024-value chunks, the last one partial: multiples of 4
  // (7x7x96 = 4704, 7x7x52 = 2548: four weights a load) and not (7x7x45 = 2205, odd channels: one
  // at a time).
  for (const Shape& in : {Shape::of(7, 7, 96), Shape::of(7, 7, 52), Shape::of(7, 7, 45)}) {
    L::InnerProduct big;
    big.num_output = 19;
    big.bias_term = 1;
    big.weight_data_size = 19 * int(in.total());
    big.weight_data = values(std::size_t(big.weight_data_size), 11, -0.05f, 0.05f);
    big.bias_data = values(19, 12);
    GpuLayerTester(big, fmt::format("InnerProduct K {}", in.total())).inputs({in}).run();
  }
}

TEST_CASE("Vulkan layers: pooling", "[vulkan][layers]") {
  for (int type : {0, 1})
    for (int mode : {0, 1, 2, 3}) {
      L::Pooling p;
      p.pooling_type = type;
      p.kernel_w = 3;
      p.stride_w = 2;
      p.pad_left = 1;
      p.pad_mode = mode;
      GpuLayerTester(p, fmt::format("Pooling type {} pad_mode {}", type, mode))
          .inputs({Shape::of(12, 9, 8)})
          .run();
    }
  L::Pooling avg_pad;
  avg_pad.pooling_type = 1;
  avg_pad.kernel_w = 3;
  avg_pad.stride_w = 1;
  avg_pad.pad_left = 1;
  avg_pad.avgpool_count_include_pad = 1;
  GpuLayerTester(avg_pad, "Pooling avg counting pads").inputs({Shape::of(7, 6, 4)}).run();
  L::Pooling global;
  global.pooling_type = 1;
  global.global_pooling = 1;
  GpuLayerTester(global, "Pooling global avg").inputs({Shape::of(7, 7, 12)}).run();
  L::Pooling adaptive;
  adaptive.pooling_type = 0;
  adaptive.adaptive_pooling = 1;
  adaptive.out_w = 3;
  adaptive.out_h = 2;
  GpuLayerTester(adaptive, "Pooling adaptive 3x2").inputs({Shape::of(10, 7, 4)}).run();
}

TEST_CASE("Vulkan layers: element-wise", "[vulkan][layers]") {
  for (int op = 0; op <= 5; ++op) {
    L::BinaryOp b;
    b.op_type = op;
    GpuLayerTester(b, fmt::format("BinaryOp {} same shape", op))
        .inputs({Shape::of(7, 5, 12), Shape::of(7, 5, 12)})
        .run();
    GpuLayerTester(b, fmt::format("BinaryOp {} per channel", op))
        .inputs({Shape::of(7, 5, 12), Shape::of(1, 1, 12)})
        .run();
    L::BinaryOp s = b;
    s.with_scalar = 1;
    s.b = 0.75f;
    GpuLayerTester(s, fmt::format("BinaryOp {} scalar", op)).inputs({Shape::of(7, 5, 8)}).run();
  }
  for (int op : {0, 1, 2}) {
    L::Eltwise e;
    e.op_type = op;
    if (op == 1) e.coeffs = std::vector<float>{0.5f, -1.f, 2.f};
    GpuLayerTester(e, fmt::format("Eltwise {}", op))
        .inputs({Shape::of(6, 5, 8), Shape::of(6, 5, 8), Shape::of(6, 5, 8)})
        .run();
  }
  L::BatchNorm bn;
  bn.channels = 12;
  bn.eps = 1e-3f;
  REQUIRE(bn.load(values(12, 11, 0.5f, 1.5f), values(12, 12), values(12, 13, 0.5f, 2.f),
                  values(12, 14))
              .ok());
  GpuLayerTester(bn, "BatchNorm").inputs({Shape::of(7, 5, 12)}).run();
  L::Scale sc{12, true, values(12, 15), values(12, 16)};
  GpuLayerTester(sc, "Scale with bias").inputs({Shape::of(7, 5, 12)}).run();
  L::Scale sc2{-233, false, {}, {}};
  GpuLayerTester(sc2, "Scale two blobs").inputs({Shape::of(7, 5, 12), Shape::of(12)}).run();
  L::Bias bias{12, values(12, 17)};
  GpuLayerTester(bias, "Bias").inputs({Shape::of(7, 5, 12)}).run();
  for (int region : {0, 1}) {
    L::LRN lrn;
    lrn.region_type = region;
    lrn.local_size = 3;
    lrn.alpha = 0.5f;
    GpuLayerTester(lrn, fmt::format("LRN region {}", region)).inputs({Shape::of(7, 5, 12)}).run();
  }
}

TEST_CASE("Vulkan layers: data movement and softmax", "[vulkan][layers]") {
  GpuLayerTester(L::Concat{0}, "Concat channels")
      .inputs({Shape::of(5, 4, 8), Shape::of(5, 4, 4), Shape::of(5, 4, 12)})
      .run();
  GpuLayerTester(L::Concat{-1}, "Concat w").inputs({Shape::of(5, 4, 8), Shape::of(3, 4, 8)}).run();
  L::Slice slice;
  slice.slices = std::vector<int>{4, -233, -233};
  slice.axis = 0;
  GpuLayerTester(slice, "Slice channels").inputs({Shape::of(5, 4, 16)}).outputs(3).run();
  GpuLayerTester(L::Split{}, "Split").inputs({Shape::of(5, 4, 8)}).outputs(2).run();
  L::Reshape flat;
  flat.w = -1;
  GpuLayerTester(flat, "Reshape to 1-D").inputs({Shape::of(5, 3, 8)}).run();
  L::Reshape r3;
  r3.w = 6;
  r3.h = 5;
  r3.c = 4;
  GpuLayerTester(r3, "Reshape 3-D").inputs({Shape::of(5, 3, 8)}).run();
  GpuLayerTester(L::Flatten{}, "Flatten").inputs({Shape::of(5, 3, 8)}).run();
  for (int group : {2, 3})
    for (int reverse : {0, 1})
      GpuLayerTester(L::ShuffleChannel{group, reverse},
                     fmt::format("ShuffleChannel group {} reverse {}", group, reverse))
          .inputs({Shape::of(4, 3, 24)})
          .run();
  for (int axis : {0, 1, 2, -1})
    GpuLayerTester(L::Softmax{axis}, fmt::format("Softmax axis {}", axis))
        .inputs({Shape::of(6, 5, 8)})
        .run();
  GpuLayerTester(L::Softmax{0}, "Softmax 1-D").inputs({Shape::of(1000)}).run();
}

TEST_CASE("Vulkan layers: padding, crop, interp, deconvolution", "[vulkan][layers]") {
  for (int type : {0, 1, 2}) {
    L::Padding p;
    p.top = 1;
    p.bottom = 2;
    p.left = 2;
    p.right = 1;
    p.type = type;
    p.value = 0.25f;
    GpuLayerTester(p, fmt::format("Padding type {}", type)).inputs({Shape::of(7, 5, 8)}).run();
  }
  L::Padding channels;
  channels.front = 4;
  channels.behind = 0;
  channels.value = -1.f;
  GpuLayerTester(channels, "Padding channels").inputs({Shape::of(5, 4, 8)}).run();
  L::Crop crop;
  crop.woffset = 1;
  crop.hoffset = 2;
  crop.coffset = 4;
  crop.outw = 4;
  crop.outh = 3;
  crop.outc = 8;
  GpuLayerTester(crop, "Crop").inputs({Shape::of(7, 6, 16)}).run();
  for (int type : {1, 2, 3})
    for (int align : {0, 1}) {
      L::Interp up;
      up.resize_type = type;
      up.align_corner = align;
      up.width_scale = 2.f;
      up.height_scale = 2.f;
      GpuLayerTester(up, fmt::format("Interp x2 type {} align {}", type, align))
          .inputs({Shape::of(5, 4, 8)})
          .run();
      L::Interp to;
      to.resize_type = type;
      to.align_corner = align;
      to.output_width = 7;
      to.output_height = 3;
      GpuLayerTester(to, fmt::format("Interp to 7x3 type {} align {}", type, align))
          .inputs({Shape::of(10, 6, 4)})
          .run();
    }
  L::Deconvolution de;
  de.num_output = 6;
  de.kernel_w = 3;
  de.stride_w = 2;
  de.pad_left = 1;
  de.output_pad_right = 1;
  de.bias_term = 1;
  de.weight_data_size = 6 * 8 * 9;
  de.weight_data = values(std::size_t(de.weight_data_size), 21);
  de.bias_data = values(6, 22);
  de.activation.type = 1;
  GpuLayerTester(de, "Deconvolution 3x3 s2").inputs({Shape::of(5, 4, 8)}).run();
  L::DeconvolutionDepthWise dd;
  dd.num_output = 8;
  dd.kernel_w = 4;
  dd.stride_w = 2;
  dd.pad_left = 1;
  dd.bias_term = 1;
  dd.group = 8;
  dd.weight_data_size = 8 * 16;
  dd.weight_data = values(128, 23);
  dd.bias_data = values(8, 24);
  GpuLayerTester(dd, "DeconvolutionDepthWise 4x4 s2").inputs({Shape::of(5, 4, 8)}).run();
}
