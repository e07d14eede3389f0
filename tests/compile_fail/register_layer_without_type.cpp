// expect: register_layer<L>\(net\): L has no `static constexpr std::string_view ncnn_type`
// Registering a user layer by its own type name needs the layer to name it.
#include <infer/net/custom_layer.hpp>
#include <infer/shape.hpp>

struct Nameless {
  using storage = infer::storage_list<infer::f32>;
  using packs = infer::pack_list<1>;
  constexpr infer::ShapeCheck infer_shapes(std::span<const infer::Shape> in,
                                           std::span<infer::Shape> out) const {
    return infer::same_shape(in, out);
  }
  template <infer::StorageElement T, int Pack>
  infer::Status forward_inplace(infer::Mat&, const infer::Option&) const {
    return {};
  }
};

int main() {
  infer::Net net;
  return infer::register_layer<Nameless>(net).ok() ? 0 : 1;
}
