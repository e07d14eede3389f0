// Running one planned step of a layer node, shared by the static graph (steps known at compile
// time) and the run-time network (steps read from a plan at load time): the choice between the
// fused, one-blob, in-place and multi-blob forms, and the affine maps folded into producers.
#pragma once

#include <array>
#include <infer/concepts.hpp>
#include <infer/kernels/activation.hpp>
#include <infer/layers/detail/activation_param.hpp>
#include <infer/mat.hpp>
#include <infer/status.hpp>
#include <span>
#include <type_traits>
#include <vector>

namespace infer::graph {

/// The most blobs one node may read or write (a Concat of more inputs is refused at load).
inline constexpr std::size_t kMaxNodeIo = 64;

/// The act:: functor of activation type `Type` (ncnn's 1..6, 7 Swish) with its parameters.
template <int Type>
constexpr auto make_act(const std::array<float, 2>& p) {
  if constexpr (Type == 1) return act::ReLU{};  // ncnn ignores type 1's parameters
  if constexpr (Type == 2) return act::ReLU{p[0]};
  if constexpr (Type == 3) return act::Clip{p[0], p[1]};
  if constexpr (Type == 4) return act::Sigmoid{};
  if constexpr (Type == 5) return act::Mish{};
  if constexpr (Type == 6) return act::HardSwish{p[0], p[1]};
  if constexpr (Type == int(layers::ActivationType::swish)) return act::Swish{};
  if constexpr (Type < 1 || Type > 7) {
    static_assert(!layers::gpu_only_activation(Type),
                  "infer graph: a CPU step was given an activation only GPU kernels apply");
    return act::Identity{};
  }
}

/// The per-channel map y = x * a + b of a foldable layer (BatchNorm, Scale in its weights form).
template <class L>
Status affine_of(const L& l, std::vector<float>& a, std::vector<float>& b) {
  if constexpr (requires {
                  l.a;
                  l.b;
                }) {  // BatchNorm: computed at its own load
    a = l.a;
    b = l.b;
  } else if constexpr (requires {
                         l.scale_data;
                         l.bias_data;
                         l.bias_term;
                       }) {  // Scale
    a = l.scale_data;
    b = l.bias_term ? l.bias_data : std::vector<float>(a.size(), 0.f);
  } else {
    return make_error("not a per-channel affine layer");
  }
  if (a.empty() || a.size() != b.size()) return make_error("weights not loaded");
  return {};
}

/// Where one step reads and writes: buffer ids into `bufs`.
struct StepIo {
  bool inplace = false;
  std::span<const int> in, out;
};

/// Runs layer `layer` at element type T and pack Pack for one step. `act` is the fused epilogue
/// (nullptr: none); only layers with forward_fused are given one.
template <class L, class T, int Pack, class Act = act::Identity>
Status run_node(const L& layer, const StepIo& s, std::span<Mat> bufs, const Option& opt,
                const Act* act = nullptr) {
  auto buf = [&](int id) -> Mat& { return bufs[std::size_t(id)]; };
  if (s.in.size() > kMaxNodeIo || s.out.size() > kMaxNodeIo)
    return make_error("a node with more than {} inputs or outputs", kMaxNodeIo);
  // A view step (Split): the outputs already share the input's memory.
  if (s.inplace && s.out.size() > 1) return {};
  if constexpr (requires { L::outputs_share_input; }) {
    if (s.inplace) return {};
  }
  if constexpr (HasSingleInplace<L, T, Pack>) {
    if (s.inplace && s.out.size() == 1)
      return layer.template forward_inplace<T, Pack>(buf(s.out[0]), opt);
  }
  if constexpr (FusesResidual<L, T, Pack, Act>) {
    // A residual sum taken in (the composer's fusion): its other input is the second.
    if (act && s.in.size() == 2 && s.out.size() == 1)
      return layer.template forward_residual<T, Pack>(buf(s.in[0]), buf(s.in[1]), buf(s.out[0]),
                                                      opt, *act);
  }
  if constexpr (FusesActivation<L, T, Pack, Act>) {
    if (act) return layer.template forward_fused<T, Pack>(buf(s.in[0]), buf(s.out[0]), opt, *act);
  }
  if (s.in.size() == 1 && s.out.size() == 1) {
    if constexpr (HasSingleForward<L, T, Pack>) {
      return layer.template forward<T, Pack>(buf(s.in[0]), buf(s.out[0]), opt);
    } else if constexpr (HasSingleInplace<L, T, Pack>) {
      // Only the in-place form, but the input lives on: run it on a copy in the output buffer.
      buf(s.in[0]).copy_to(buf(s.out[0]));
      return layer.template forward_inplace<T, Pack>(buf(s.out[0]), opt);
    }
  }
  if constexpr (HasMultiForward<L, T, Pack>) {
    std::array<Mat, kMaxNodeIo> in, out;
    for (std::size_t k = 0; k < s.in.size(); ++k) in[k] = buf(s.in[k]);
    for (std::size_t k = 0; k < s.out.size(); ++k) out[k] = buf(s.out[k]);
    INFER_TRY(layer.template forward<T, Pack>(std::span<const Mat>(in.data(), s.in.size()),
                                              std::span<Mat>(out.data(), s.out.size()), opt));
    for (std::size_t k = 0; k < s.out.size(); ++k) buf(s.out[k]) = out[k];
    return {};
  } else if constexpr (HasMultiInplace<L, T, Pack>) {
    // In-place multi-blob form: the outputs are the first blobs; they start as copies of the
    // inputs; the remaining inputs are passed as they are (such layers only modify outputs).
    std::array<Mat, kMaxNodeIo> blobs;
    for (std::size_t k = 0; k < s.in.size(); ++k) {
      if (k < s.out.size()) {
        buf(s.in[k]).copy_to(buf(s.out[k]));
        blobs[k] = buf(s.out[k]);
      } else {
        blobs[k] = buf(s.in[k]);
      }
    }
    return layer.template forward_inplace<T, Pack>(std::span<Mat>(blobs.data(), s.in.size()), opt);
  } else {
    return make_error("no forward form of the layer fits {} inputs and {} outputs", s.in.size(),
                      s.out.size());
  }
}

/// run_fused_node's Algo when the layer chooses its algorithm at run time.
struct AnyAlgorithm {};

/// A fusing layer's step with `act` as its epilogue (the step's activation; act::Identity for
/// none): only forward_fused<T, Pack> with this Act is instantiated, not the layer's forward,
/// which dispatches over all seven activations at run time. With `Algo` (the layer's
/// algorithm(Pack), for layers that have forward_with) only that algorithm's kernels are. A
/// static graph knows each step's activation and layer parameters while compiling, so its steps
/// come here.
template <class L, class T, int Pack, auto Algo = AnyAlgorithm{}, class Act>
Status run_fused_node(const L& layer, const StepIo& s, std::span<Mat> bufs, const Option& opt,
                      const Act& act) {
  static_assert(FusesActivation<L, T, Pack, Act>);
  if constexpr (HasSingleInplace<L, T, Pack>) {
    if (s.inplace) return run_node<L, T, Pack, Act>(layer, s, bufs, opt, &act);
  }
  constexpr bool kAny = std::is_same_v<std::remove_cvref_t<decltype(Algo)>, AnyAlgorithm>;
  if constexpr (FusesResidual<L, T, Pack, Act>) {
    // A residual sum taken in: input 1 is its other operand.
    if (s.in.size() == 2 && s.out.size() == 1) {
      Mat& in = bufs[std::size_t(s.in[0])];
      const Mat& res = bufs[std::size_t(s.in[1])];
      Mat& out = bufs[std::size_t(s.out[0])];
      if constexpr (kAny)
        return layer.template forward_residual<T, Pack>(in, res, out, opt, act);
      else
        return layer.template forward_with_residual<T, Pack, Algo>(in, res, out, opt, act);
    }
  }
  if (s.in.size() != 1 || s.out.size() != 1)
    return make_error("a one-blob layer takes 1 input and 1 output, got {} and {}", s.in.size(),
                      s.out.size());
  Mat& in = bufs[std::size_t(s.in[0])];
  Mat& out = bufs[std::size_t(s.out[0])];
  if constexpr (kAny)
    return layer.template forward_fused<T, Pack>(in, out, opt, act);
  else
    return layer.template forward_with<T, Pack, Algo>(in, out, opt, act);
}

}  // namespace infer::graph
