// A generic single-layer runner: calls any layer correctly whatever forward forms it provides.
// It converts the inputs to an element type and pack the layer declares, runs out of place through
// forward_inplace on a copy when only that exists (as ncnn does), and handles multi-blob layers.
#pragma once

#include <infer/concepts.hpp>
#include <infer/convert.hpp>
#include <span>
#include <vector>

namespace infer {

/// Whether the caller wants the output in the input's memory.
enum class Placement { out_of_place, in_place };

namespace detail {

template <StorageElement T, int Pack, class L>
Status call_layer(const L& layer, std::span<const Mat> bottoms, std::vector<Mat>& tops,
                  Placement placement, const Option& opt) {
  // An in-place run writes into the blobs it is given; the runner never lets it write into the
  // caller's inputs, so it clones any input that the conversion did not already copy.
  auto owned_copies = [&](std::span<const Mat> in, std::vector<Mat>& out) -> Status {
    out.clear();
    for (const Mat& m : in) {
      auto c = m.clone(opt.blob_alloc());
      if (!c.ok()) return c.error();
      out.push_back(std::move(c).value());
    }
    return {};
  };
  const bool want_inplace = placement == Placement::in_place;
  constexpr bool kSingle = HasSingleForward<L, T, Pack> || HasSingleInplace<L, T, Pack>;
  constexpr bool kMulti = HasMultiForward<L, T, Pack> || HasMultiInplace<L, T, Pack>;
  // A layer with both forms (BinaryOp with a scalar or a second blob, Scale with weights or a
  // second blob) takes the single-blob form for one input and one output.
  if constexpr (kSingle) {
    if (bottoms.size() == 1 && (!kMulti || tops.size() == 1)) {
      tops.resize(1);
      if constexpr (HasSingleInplace<L, T, Pack>) {
        if (want_inplace || !HasSingleForward<L, T, Pack>) {
          std::vector<Mat> copies;
          INFER_TRY(owned_copies(bottoms, copies));
          INFER_TRY(layer.template forward_inplace<T, Pack>(copies[0], opt));
          tops[0] = copies[0];
          return {};
        }
      } else if (want_inplace) {
        return make_error("run_layer: the layer has no forward_inplace");
      }
      if constexpr (HasSingleForward<L, T, Pack>)
        return layer.template forward<T, Pack>(bottoms[0], tops[0], opt);
    }
  }
  if constexpr (kMulti) {
    if constexpr (HasMultiInplace<L, T, Pack>) {
      if (want_inplace || !HasMultiForward<L, T, Pack>) {
        std::vector<Mat> copies;
        INFER_TRY(owned_copies(bottoms, copies));
        INFER_TRY(layer.template forward_inplace<T, Pack>(std::span<Mat>(copies), opt));
        // As in ncnn, the outputs are the first blobs after the in-place pass (Scale: 2 in, 1 out).
        if (tops.size() > copies.size())
          return make_error("run_layer: {} outputs asked of an in-place layer with {} inputs",
                            tops.size(), copies.size());
        for (std::size_t i = 0; i < tops.size(); ++i) tops[i] = copies[i];
        return {};
      }
    } else if (want_inplace) {
      return make_error("run_layer: the layer has no forward_inplace");
    }
    if constexpr (HasMultiForward<L, T, Pack>) {
      // The caller sized `tops`: as many Mats as the layer has outputs.
      return layer.template forward<T, Pack>(bottoms, std::span<Mat>(tops), opt);
    }
  }
  return make_error("run_layer: a one-blob layer takes 1 input and 1 output, got {} and {}",
                    bottoms.size(), tops.size());
}

template <StorageElement T, class L, int... Ps>
Status dispatch_pack(const L& layer, std::span<const Mat> bottoms, std::vector<Mat>& tops, int pack,
                     Placement placement, const Option& opt, pack_list<Ps...>) {
  Status result = make_error("run_layer: pack {} is not declared by the layer", pack);
  ((Ps == pack ? (result = call_layer<T, Ps>(layer, bottoms, tops, placement, opt), 0) : 0), ...);
  return result;
}

}  // namespace detail

/// Runs `layer` on `bottoms` at element type T and the widest declared pack at most `max_pack`
/// that divides every input's packing axis (1 when opt.use_packing is off). Inputs are converted
/// (cast + repack) as needed; the outputs are left in the layer's (T, pack). `tops` must hold as
/// many Mats as the layer has outputs (a one-blob layer: resized to 1).
template <StorageElement T, class L>
Status run_layer(const L& layer, std::span<const Mat> bottoms, std::vector<Mat>& tops, int max_pack,
                 Placement placement, const Option& opt, std::span<const float> int8_scales = {}) {
  static_assert(check_layer<L>());
  if constexpr (!layer_storage<L>::template contains<T>) {
    return make_error("run_layer: the layer does not declare {} storage",
                      to_string(elem_type_v<T>));
  } else {
    int pack = std::min(opt.use_packing ? max_pack : 1, layer_packs<L>::max);
    while (!layer_packs<L>::contains(pack)) pack /= 2;  // declared packs are powers of two
    for (const Mat& b : bottoms) pack = std::min(pack, pack_for(b.shape().packed_extent(), pack));
    while (!layer_packs<L>::contains(pack)) pack = pack_for(1, pack);
    std::vector<Mat> converted(bottoms.size());
    for (std::size_t i = 0; i < bottoms.size(); ++i) {
      Status s = convert(bottoms[i], converted[i], elem_type_v<T>, pack, opt, int8_scales);
      if (!s.ok()) return make_error("run_layer: input {}: {}", i, s.message());
      if (converted[i].elempack() != pack)
        return make_error("run_layer: input {} ({}) cannot be packed by {}", i,
                          bottoms[i].describe(), pack);
    }
    if constexpr (PreparedLayer<L>) {
      L prepared = layer;  // weights transformed for (T, pack) on a copy; the caller's stays as is
      Status s;
      if constexpr (ShapePreparedLayer<L>)
        s = converted.empty() ? prepared.prepare(elem_type_v<T>, pack, opt)
                              : prepared.prepare(elem_type_v<T>, pack, opt, converted[0].shape());
      else
        s = prepared.prepare(elem_type_v<T>, pack, opt);
      if (!s.ok()) return make_error("run_layer: prepare: {}", s.message());
      return detail::dispatch_pack<T>(prepared, std::span<const Mat>(converted), tops, pack,
                                      placement, opt, layer_packs<L>{});
    } else {
      return detail::dispatch_pack<T>(layer, std::span<const Mat>(converted), tops, pack, placement,
                                      opt, layer_packs<L>{});
    }
  }
}

/// One-blob convenience form.
template <StorageElement T, class L>
Status run_layer(const L& layer, const Mat& bottom, Mat& top, int max_pack, Placement placement,
                 const Option& opt) {
  std::vector<Mat> tops(1);
  INFER_TRY(run_layer<T>(layer, std::span<const Mat>(&bottom, 1), tops, max_pack, placement, opt));
  top = tops[0];
  return {};
}

}  // namespace infer
