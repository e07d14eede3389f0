// For infer::runtime's sources: box_layer<L> instantiated for infer::Net's storage list, one
// line per layer type. Every type of io::detail::kNcnnLayerTable must be boxed in one of the
// box_*.cpp files (a missing one is an undefined reference when a program links the library).
#pragma once

#include <infer/net/layer_box.hpp>

#define INFER_RUNTIME_BOX(L)                                                                  \
  template std::unique_ptr<::infer::net::AnyLayer>                                             \
  infer::net::box_layer<::infer::layers::L, ::infer::net::RuntimeStorage>(::infer::layers::L&&)
