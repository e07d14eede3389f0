// The AnyLayer of one layer type: LayerBox<L, Storage> instantiates L's forward for every element
// type the network may run at and every pack L declares, the fused epilogues included, so the
// steps of a plan made at load time still call the same templated kernels a static graph calls.
// This is where infer::Net's instantiations are: include it only where they are compiled
// (infer::runtime's sources, or a file built with INFER_HEADER_ONLY).
#pragma once

#include <infer/concepts.hpp>
#include <infer/graph/desc.hpp>
#include <infer/graph/execute.hpp>
#include <infer/graph/plan.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/net/any_layer.hpp>
#include <infer/shape.hpp>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

namespace infer::net {

/// AnyLayer over layer L, instantiated for the element types in Storage (a storage_list).
template <class L, class Storage>
class LayerBox final : public AnyLayer {
 public:
  explicit LayerBox(L layer) : layer_(std::move(layer)) {}

  std::unique_ptr<AnyLayer> clone() const override { return std::make_unique<LayerBox>(*this); }
  /// The layer's description with its storage types cut to those instantiated here (Storage),
  /// so that a plan never picks one the network cannot run.
  graph::NodeDesc describe() const override {
    graph::NodeDesc d = graph::describe_layer(layer_);
    d.storage &= graph::storage_mask(Storage{});
    return d;
  }
  ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const override {
    return layer_.infer_shapes(in, out);
  }
  Status load(io::ModelBin& mb) override {
    if constexpr (io::LoadsWeights<L>) return layer_.load(mb);
    return {};
  }
  Status affine(std::vector<float>& a, std::vector<float>& b) const override {
    return graph::affine_of(layer_, a, b);
  }
  Status fold_affine(std::span<const float> a, std::span<const float> b) override {
    if constexpr (FoldsAffine<L>) {
      return layer_.fold_affine(a, b);
    } else {
      return make_error("{} cannot fold an affine map", graph::type_name<L>());
    }
  }
  Status prepare(ElemType type, int pack, const Option& opt, const Shape& in) override {
    if constexpr (ShapePreparedLayer<L>)
      return layer_.prepare(type, pack, opt, in);
    else if constexpr (PreparedLayer<L>)
      return layer_.prepare(type, pack, opt);
    return {};
  }
  Status requantize_output(float scale) override {
    if constexpr (requires { layer_.requantize_output(scale); }) {
      layer_.requantize_output(scale);
      return {};
    } else {
      if (scale == 0.f) return {};
      return make_error("{} cannot requantize its output", graph::type_name<L>());
    }
  }
  int layout(int pack, const Shape& in) const override {
    if constexpr (ShapePreparedLayer<L>) return layer_.layout(pack, in);
    return 0;
  }
  Status run(const graph::StepDesc& s, std::span<Mat> bufs, const Option& opt) const override {
    return run_types(s, bufs, opt, Storage{});
  }
  Status upload_vulkan(vk::Uploader& up) const override {
    if constexpr (requires {
                    { layer_.upload_vulkan(up) } -> std::same_as<Status>;
                  })
      return layer_.upload_vulkan(up);
    return {};
  }
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep& step, vk::Recorder& rec) const override {
    if constexpr (VulkanLayer<L>) {
      return layer_.forward_vulkan(in, out, step, rec);
    } else {
      return make_error("{} has no GPU forward", graph::type_name<L>());
    }
  }

  const L& layer() const { return layer_; }

 private:
  template <class... Ts>
  Status run_types(const graph::StepDesc& s, std::span<Mat> bufs, const Option& opt,
                   storage_list<Ts...>) const {
    // No Status is made before it is needed: formatting one allocates, and a run must not.
    Status r;
    const bool found =
        ((s.type == elem_type_v<Ts> ? (r = run_packs<Ts>(s, bufs, opt, layer_packs<L>{}), true)
                                    : false) ||
         ...);
    if (!found)
      return make_error("{}: element type {} is not instantiated in this network",
                        graph::type_name<L>(), to_string(s.type));
    return r;
  }

  template <class T, int... Ps>
  Status run_packs(const graph::StepDesc& s, std::span<Mat> bufs, const Option& opt,
                   pack_list<Ps...>) const {
    if constexpr (!layer_storage<L>::template contains<T>) {
      return make_error("{} does not declare storage {}", graph::type_name<L>(), to_string(s.type));
    } else {
      Status r;
      const bool found = ((s.pack == Ps ? (r = run_at<T, Ps>(s, bufs, opt), true) : false) || ...);
      if (!found) return make_error("{}: pack {} is not declared", graph::type_name<L>(), s.pack);
      return r;
    }
  }

  template <class T, int Pack>
  Status run_at(const graph::StepDesc& s, std::span<Mat> bufs, const Option& opt) const {
    const graph::StepIo io{s.inplace, s.in, s.out};
    if constexpr (FusesActivation<L, T, Pack, act::Identity>) {
      switch (s.act.type) {
        case 0:
          // A residual sum taken in without an activation: the Identity epilogue adds it.
          if (s.residual_node >= 0) return fused<T, Pack, 0>(io, s, bufs, opt);
          break;
        case 1:
          return fused<T, Pack, 1>(io, s, bufs, opt);
        case 2:
          return fused<T, Pack, 2>(io, s, bufs, opt);
        case 3:
          return fused<T, Pack, 3>(io, s, bufs, opt);
        case 4:
          return fused<T, Pack, 4>(io, s, bufs, opt);
        case 5:
          return fused<T, Pack, 5>(io, s, bufs, opt);
        case 6:
          return fused<T, Pack, 6>(io, s, bufs, opt);
        case 7:
          return fused<T, Pack, 7>(io, s, bufs, opt);
        default:  // the composer fuses the GPU-only kinds into GPU steps alone
          return make_error("{}: activation_type {} has no CPU kernel", graph::type_name<L>(),
                            s.act.type);
      }
    }
    return graph::run_node<L, T, Pack>(layer_, io, bufs, opt);
  }

  template <class T, int Pack, int Act>
  Status fused(const graph::StepIo& io, const graph::StepDesc& s, std::span<Mat> bufs,
               const Option& opt) const {
    const auto act = graph::make_act<Act>(s.act.params);
    return graph::run_node<L, T, Pack, decltype(act)>(layer_, io, bufs, opt, &act);
  }

  L layer_;
};

template <class L, class Storage>
std::unique_ptr<AnyLayer> box_layer(L&& layer) {
  return std::make_unique<LayerBox<L, Storage>>(std::move(layer));
}

}  // namespace infer::net
