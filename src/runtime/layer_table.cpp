// infer::runtime: make_layer for infer::Net's storage list (reading each layer type's parameters);
// the boxes it returns are instantiated in box_*.cpp.
#define INFER_RUNTIME_SOURCE
#include <infer/net/layer_table.hpp>

template infer::Result<std::unique_ptr<infer::net::AnyLayer>>
infer::net::make_layer<infer::net::RuntimeStorage>(const infer::io::ParamFile&,
                                                   const infer::io::LayerSpec&);
