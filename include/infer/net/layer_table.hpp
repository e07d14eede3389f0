// infer::Net's layer table: make_layer<Storage>() builds the layer a .param line describes and
// boxes it with box_layer<L, Storage>. infer::runtime compiles it for storage_list<f32, i8> (the
// default infer::Net). Include this header (before <infer/net.hpp>) in one file of a program that
// uses another storage list, e.g. infer::BasicNet<infer::storage_list<infer::f32, infer::f16>>:
// that file then instantiates the whole table for it, every layer and kernel.
#pragma once

#include <infer/io/ncnn_layers.hpp>
#include <infer/net/any_layer.hpp>
#include <memory>
#include <type_traits>
#include <utility>

// infer::runtime's own sources split the table: one file instantiates make_layer, others
// box_layer for a few layer types each. Everywhere else box_layer's definition comes along.
#ifndef INFER_RUNTIME_SOURCE
#include <infer/net/layer_box.hpp>
#endif

/// Set where make_layer's definition is visible (BasicNet checks it for other storage lists).
#define INFER_NET_LAYER_TABLE 1

namespace infer::net {

template <class Storage>
Result<std::unique_ptr<AnyLayer>> make_layer(const io::ParamFile& file, const io::LayerSpec& spec) {
  std::unique_ptr<AnyLayer> out;
  Status s = io::visit_ncnn_layer(file, spec, [&](auto& layer) -> Status {
    using L = std::remove_cvref_t<decltype(layer)>;
    out = box_layer<L, Storage>(std::move(layer));
    return {};
  });
  INFER_TRY(s);
  return out;
}

#if !defined(INFER_HEADER_ONLY) && !defined(INFER_RUNTIME_SOURCE)
// Compiled into infer::runtime: not instantiated again here.
extern template Result<std::unique_ptr<AnyLayer>> make_layer<RuntimeStorage>(const io::ParamFile&,
                                                                            const io::LayerSpec&);
#endif

}  // namespace infer::net
