// The .bin bytes ncnn's peer tool ncnn_weights writes for a .param (io::NcnnRandomWeights' scheme),
// made by loading each layer of the file, built fresh, from the generator in file order and
// writing what it asks for: f32 buffers, tagged where the layer reads a tagged buffer.
#pragma once

#include <cstdint>
#include <cstring>
#include <infer/io/ncnn_layers.hpp>
#include <infer/io/random_weights.hpp>
#include <type_traits>
#include <vector>

namespace infer::io {

inline Result<std::vector<std::byte>> ncnn_random_weights_bin(const ParamFile& file,
                                                              std::uint32_t seed = 1234) {
  NcnnRandomWeights gen(seed);
  struct Writer final : ModelBin {
    ModelBin* src = nullptr;
    std::vector<std::byte> bytes;
    Result<std::vector<float>> load(std::size_t count, WeightType type) override {
      auto v = src->load(count, type);
      if (!v.ok()) return v;
      if (type == WeightType::tagged) bytes.resize(bytes.size() + 4);  // tag 0: f32
      const std::size_t at = bytes.size();
      bytes.resize(at + count * sizeof(float));
      if (count) std::memcpy(bytes.data() + at, v.value().data(), count * sizeof(float));
      return v;
    }
  } writer;
  writer.src = &gen;
  for (const LayerSpec& spec : file.layers) {
    if (spec.type == "Input") continue;
    gen.begin_layer(spec);
    INFER_TRY(visit_ncnn_layer(file, spec, [&](auto& layer) -> Status {
      if constexpr (LoadsWeights<std::remove_cvref_t<decltype(layer)>>) return layer.load(writer);
      return {};
    }));
  }
  return std::move(writer.bytes);
}

}  // namespace infer::io
