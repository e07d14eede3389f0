// A user's own layer inside a model file read by infer::Net, as ncnn's register_custom_layer does:
//
//   struct MyLayer {
//     static constexpr std::string_view ncnn_type = "MyLayer";   // its name in .param files
//     Status load_param(io::ParamReader& pd);   // reads its keys (0=..., 1=...), as ncnn's does
//     Status load(io::ModelBin& mb);            // its weights, when it has any
//     ... the layer contract: storage, packs, infer_shapes, forward / forward_inplace ...
//   };
//   infer::Net net;
//   infer::register_layer<MyLayer>(net);       // before load_param
//
// The layer is then boxed like a built-in one: the composer gives it the element types and packs
// it declares (inserting conversions around it), runs it in place when it can, and a key it does
// not read is an error naming file, line, layer and key, as for every built-in layer. This header
// instantiates the layer's kernels in the including file (one layer, every declared type x pack
// the network's storage list allows).
#pragma once

#include <concepts>
#include <infer/concepts.hpp>
#include <infer/io/param_dict.hpp>
#include <infer/net.hpp>
#include <infer/net/layer_box.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace infer {

/// L reads its own .param keys: `Status load_param(io::ParamReader&)` (keys it does not read are
/// errors).
template <class L>
concept ReadsParams = requires(L& l, io::ParamReader& r) {
  { l.load_param(r) } -> std::same_as<Status>;
};

/// L names its .param type: `static constexpr std::string_view ncnn_type`.
template <class L>
concept NamesNcnnType = requires {
  { L::ncnn_type } -> std::convertible_to<std::string_view>;
};

namespace net {
/// Builds layer L from a .param line: default-constructed, then its load_param (when it has
/// one); unread keys are errors.
template <class L, class Storage>
Result<std::unique_ptr<AnyLayer>> make_user_layer(const io::ParamFile& file,
                                                  const io::LayerSpec& spec) {
  L layer{};
  io::ParamReader r(file, spec);
  if constexpr (ReadsParams<L>) {
    Status s = layer.load_param(r);
    if (!s.ok()) r.fail(s.message());
  }
  INFER_TRY(r.finish());
  return box_layer<L, Storage>(std::move(layer));
}
}  // namespace net

/// Makes `net` build layer L for .param lines of type `type` (call before load_param).
template <class L, class Storage>
Status register_layer(BasicNet<Storage>& net, std::string type) {
  static_assert(std::default_initializable<L>,
                "infer::register_layer<L>: L must be default-constructible (load_param sets it)");
  static_assert(ShapeInferable<L>,
                "infer::register_layer<L>: L needs `constexpr ShapeCheck infer_shapes(in, out) "
                "const`");
  return net.register_layer(std::move(type), &net::make_user_layer<L, Storage>);
}

/// Makes `net` build layer L for .param lines of type L::ncnn_type.
template <class L, class Storage>
Status register_layer(BasicNet<Storage>& net) {
  static_assert(NamesNcnnType<L>,
                "infer::register_layer<L>(net): L has no `static constexpr std::string_view "
                "ncnn_type`; give the type name: register_layer<L>(net, \"Name\")");
  return register_layer<L>(net, std::string(L::ncnn_type));
}

}  // namespace infer
