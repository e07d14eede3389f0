// A layer behind a virtual interface, for networks whose layers are known only at run time (read
// from an ncnn .param), and the factory that builds one from a .param line. The factory's
// definition (every layer type x storage type x pack x epilogue) lives in net/layer_table.hpp,
// compiled once into infer::runtime for storage_list<f32, i8>; this header only declares it, so a
// file that uses infer::Net does not instantiate the kernels.
#pragma once

#include <infer/graph/desc.hpp>
#include <infer/graph/plan.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/io/param_dict.hpp>
#include <infer/shape.hpp>
#include <memory>
#include <span>
#include <vector>

namespace infer::net {

/// What the run-time network needs of a layer.
class AnyLayer {
 public:
  virtual ~AnyLayer() = default;
  virtual std::unique_ptr<AnyLayer> clone() const = 0;
  /// The layer as the composer's passes see it (type, storage, packs, forms, fusion roles).
  virtual graph::NodeDesc describe() const = 0;
  virtual ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const = 0;
  /// Reads the layer's weights (nothing for layers without any).
  virtual Status load(io::ModelBin& mb) = 0;
  /// The per-channel map y = x * a + b of an affine layer (BatchNorm, Scale).
  virtual Status affine(std::vector<float>& a, std::vector<float>& b) const = 0;
  /// Folds a following affine map into the weights.
  virtual Status fold_affine(std::span<const float> a, std::span<const float> b) = 0;
  /// Lays the weights out for (type, pack) and an input of shape `in` (nothing for layers without
  /// prepare(); `in` matters to ShapePreparedLayer ones).
  virtual Status prepare(ElemType type, int pack, const Option& opt, const Shape& in) = 0;
  /// The composer's requantization of a quantized layer's float output (NodeDesc::
  /// int8_requantized): written as int8 at `scale`; 0 as its parameters say. An error for a layer
  /// that cannot (describe().int8_requantizable is false) when `scale` is not 0.
  virtual Status requantize_output(float scale) = 0;
  /// Which layout prepare(type, pack, opt, in) makes beyond (type, pack): the algorithm of a
  /// ShapePreparedLayer, else 0. Equal values: one prepared copy serves both shapes.
  virtual int layout(int pack, const Shape& in) const = 0;
  /// Runs one step of a plan on the buffers.
  virtual Status run(const graph::StepDesc& step, std::span<Mat> bufs, const Option& opt) const = 0;
  /// Uploads the weights its GPU forward reads (nothing for layers without any).
  virtual Status upload_vulkan(vk::Uploader& up) const = 0;
  /// Records one GPU step (describe().vulkan says whether the layer has a GPU forward).
  virtual Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                                const vk::GpuStep& step, vk::Recorder& rec) const = 0;
};

/// The storage list whose layer table infer::runtime holds compiled (infer::Net's): f32, and i8
/// for the quantized layers' int8 inputs and the layers that pass int8 values between them.
using RuntimeStorage = storage_list<f32, i8>;

/// Builds the layer that .param line `spec` of `file` describes, boxed for the element types in
/// Storage (a storage_list). An unsupported type or a bad parameter gives an error naming file,
/// line, layer and key. Defined in <infer/net/layer_table.hpp>.
template <class Storage>
Result<std::unique_ptr<AnyLayer>> make_layer(const io::ParamFile& file, const io::LayerSpec& spec);

/// Boxes one layer of type L for the element types in Storage. Defined in
/// <infer/net/layer_box.hpp>; infer::runtime instantiates it per layer type, a few types a file.
template <class L, class Storage>
std::unique_ptr<AnyLayer> box_layer(L&& layer);

}  // namespace infer::net
