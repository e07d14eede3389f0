// Pass 3: placement. Each node gets a device (the GPU when the target is Vulkan and its layer has
// a GPU forward), an element type and pack from what its layer declares and the target (a layer
// that only moves values, shares its input or works element by element, at its inputs' pack where
// that serves its readers); each blob gets a buffer in its producer's (type, pack) (a GPU
// convolution's output at the widest pack its channels allow), and a conversion (cast, repack)
// goes in only where a reader needs another (type, pack) — once per blob and format, shared by
// every reader that needs it; an upload or download goes in only where a blob crosses between
// host and GPU. Graph inputs arrive, and outputs leave, as f32 pack 1 on the host.
#pragma once

#include <algorithm>
#include <infer/graph/plan.hpp>
#include <vector>

namespace infer::graph {

namespace detail {

/// The storage type node `d` runs at: the target's when declared, else f32, else none.
constexpr bool choose_type(const NodeDesc& d, ElemType want, ElemType& got) {
  if (has_type(d.storage, want)) {
    got = want;
    return true;
  }
  if (has_type(d.storage, ElemType::f32)) {
    got = ElemType::f32;
    return true;
  }
  return false;
}

/// The widest of `packs` (a bit-or of packs) at most `max_pack` that divides every input's
/// packing axis.
constexpr int choose_pack(unsigned packs, int max_pack, const std::vector<Shape>& in) {
  auto declared = [&](int p) { return (packs & unsigned(p)) != 0; };
  int pack = max_pack;
  for (;;) {
    while (pack > 1 && !declared(pack)) pack /= 2;
    bool fits = true;
    for (const Shape& s : in) fits = fits && s.packed_extent() % pack == 0;
    if (fits || pack == 1) return pack;
    pack /= 2;
  }
}

constexpr int new_buffer(Plan& p, int blob, Device device, ElemType type, int pack,
                         float scale = 0.f) {
  BufferDesc b;
  b.blob = blob;
  b.shape = p.blob_shapes[std::size_t(blob)];
  b.type = type;
  b.pack = pack;
  b.device = device;
  b.scale = type == ElemType::i8 ? scale : 0.f;
  b.bytes = packed_layout(b.shape, type, pack).bytes;
  p.buffers.push_back(b);
  return int(p.buffers.size()) - 1;
}

/// Appends a conversion or transfer step from buffer `src` to a new buffer of `blob`.
constexpr int convert_step(Plan& p, std::vector<std::vector<int>>& variants, int blob,
                           StepDesc::Kind kind, Device device, ElemType type, int pack, int src,
                           float scale = 0.f) {
  const Device at = kind == StepDesc::upload ? Device::vulkan
                    : kind == StepDesc::download ? Device::cpu
                                                 : device;
  const BufferDesc& from = p.buffers[std::size_t(src)];
  // An i8 result keeps its scale: a cast's is the one it quantizes by, a repack's or a
  // transfer's the source's.
  const float out_scale = kind == StepDesc::cast ? scale : from.scale;
  const float step_scale = type == ElemType::i8 ? scale : from.scale;
  const int out = new_buffer(p, blob, at, type, pack, out_scale);
  StepDesc s;
  s.kind = kind;
  s.device = kind == StepDesc::upload || kind == StepDesc::download ? Device::vulkan : device;
  s.type = type;
  s.pack = pack;
  s.in = {src};
  s.out = {out};
  if (kind == StepDesc::cast) s.scale = step_scale;
  p.steps.push_back(s);
  variants[std::size_t(blob)].push_back(out);
  return out;
}

/// The buffer of `blob` on `device` as (type, pack) among its variants (an i8 one quantized by
/// `scale`), or -1.
constexpr int find_variant(const Plan& p, const std::vector<std::vector<int>>& variants, int blob,
                           Device device, ElemType type, int pack, float scale = 0.f) {
  for (int b : variants[std::size_t(blob)]) {
    const BufferDesc& x = p.buffers[std::size_t(b)];
    if (x.device == device && x.type == type && x.pack == pack &&
        (type != ElemType::i8 || x.scale == scale))
      return b;
  }
  return -1;
}

/// The buffer of `blob` on `device` as (type, pack) (i8: quantized by `scale`): an existing one,
/// or made from `src` (on that device) by a cast, then a repack. Casts to and from i8 go through
/// f32 (quantize, dequantize); one i8 scale to another through f32 too.
constexpr int convert_on(Plan& p, std::vector<std::vector<int>>& variants, int blob, Device device,
                         int src, ElemType type, int pack, float scale = 0.f) {
  if (int b = find_variant(p, variants, blob, device, type, pack, scale); b >= 0) return b;
  const BufferDesc from = p.buffers[std::size_t(src)];
  const bool rescale = type == ElemType::i8 && from.type == ElemType::i8 && from.scale != scale;
  if (from.type != type || rescale) {
    if ((type == ElemType::i8 || from.type == ElemType::i8) && from.type != ElemType::f32 &&
        type != ElemType::f32)
      src = convert_on(p, variants, blob, device, src, ElemType::f32, from.pack);
    const int src_pack = p.buffers[std::size_t(src)].pack;
    int cast = find_variant(p, variants, blob, device, type, src_pack, scale);
    if (cast < 0)
      cast = convert_step(p, variants, blob, StepDesc::cast, device, type, src_pack, src, scale);
    src = cast;
  }
  if (p.buffers[std::size_t(src)].pack == pack) return src;
  if (p.buffers[std::size_t(src)].shape.dims == 1) {
    // A 1-D blob holds its values in order at every pack (w / pack elements of pack lanes): the
    // other pack is a view of the same memory, no step (a squeeze-excitation gate made at pack 1
    // and read at pack 4).
    const int view = new_buffer(p, blob, device, type, pack, p.buffers[std::size_t(src)].scale);
    p.buffers[std::size_t(view)].alias = src;
    variants[std::size_t(blob)].push_back(view);
    return view;
  }
  return convert_step(p, variants, blob, StepDesc::repack, device, type, pack, src);
}

/// Whether a transfer converts between these types as it copies (through staging memory on the
/// host: one pass instead of a cast and a copy): the float storage types.
constexpr bool transfer_casts(ElemType from, ElemType to) {
  auto floating = [](ElemType t) {
    return t == ElemType::f32 || t == ElemType::f16 || t == ElemType::bf16;
  };
  return from != to && floating(from) && floating(to);
}

/// A buffer holding `blob` as (device, type, pack): an existing one, or one made by conversion
/// steps from the blob's first buffer: on the device that holds it, a cast, then a repack; to the
/// GPU, repacked on the CPU first, then uploaded, the upload casting between float types; from
/// the GPU, downloaded at its pack (casting between float types), then repacked on the CPU.
constexpr int buffer_as(Plan& p, std::vector<std::vector<int>>& variants, int blob, Device device,
                        ElemType type, int pack, float scale = 0.f) {
  const int home = variants[std::size_t(blob)].front();
  const BufferDesc h = p.buffers[std::size_t(home)];
  if (h.device == device) return convert_on(p, variants, blob, device, home, type, pack, scale);
  if (int b = find_variant(p, variants, blob, device, type, pack); b >= 0) return b;
  if (device == Device::vulkan) {
    const ElemType host_type = transfer_casts(h.type, type) ? h.type : type;
    const int host = convert_on(p, variants, blob, Device::cpu, home, host_type, pack);
    return convert_step(p, variants, blob, StepDesc::upload, device, type, pack, host);
  }
  // A download already made (in either type) serves the reader; else one in the reader's type.
  int down = find_variant(p, variants, blob, Device::cpu, type, h.pack);
  if (down < 0) down = find_variant(p, variants, blob, Device::cpu, h.type, h.pack);
  if (down < 0) {
    const ElemType host_type = transfer_casts(h.type, type) ? type : h.type;
    down = convert_step(p, variants, blob, StepDesc::download, device, host_type, h.pack, home);
  }
  return convert_on(p, variants, blob, Device::cpu, down, type, pack);
}

/// Whether node `d` (not quantized itself) can run on int8 values where they arrive: it declares
/// i8 storage, moves values, shares its input, works element by element (ReLU) or says it passes
/// int8 (max Pooling), and every input arrives on the CPU as i8 of one scale, which it keeps
/// (`scale`).
constexpr bool int8_through(const Plan& p, const std::vector<std::vector<int>>& variants,
                            const NodeDesc& d, float& scale) {
  if (d.in.empty() || !d.keeps_int8(true)) return false;
  for (std::size_t i = 0; i < d.in.size(); ++i) {
    const BufferDesc& h = p.buffers[std::size_t(variants[std::size_t(d.in[i])].front())];
    if (h.type != ElemType::i8 || h.device != Device::cpu) return false;
    if (i == 0) scale = h.scale;
    if (h.scale != scale) return false;
  }
  return true;
}

/// Whether node `d` runs on the GPU under the plan's target.
constexpr bool on_gpu(const Plan& p, const NodeDesc& d) {
  return p.target.device == Device::vulkan && d.vulkan;
}

/// The packs (a bit-or) a node's kernels take where it runs: the GPU's (1 and 4) or its own.
constexpr unsigned packs_on(const NodeDesc& d, bool gpu) {
  return gpu ? 1u | unsigned(kGpuMaxPack) : d.packs;
}

/// The widest pack a node may run at on its device under the target.
constexpr int max_pack_on(const Plan& p, bool gpu) {
  return gpu ? std::min(p.target.gpu_max_pack, kGpuMaxPack) : p.target.max_pack;
}

/// The pack blob `b` arrives in: its first buffer's.
constexpr int home_pack(const Plan& p, const std::vector<std::vector<int>>& variants, int b) {
  return p.buffers[std::size_t(variants[std::size_t(b)].front())].pack;
}

/// How many of a node's inputs take its pack: the first alone where it took in a residual or a
/// gate (read at the output's pack, and as a vector), else all.
constexpr std::size_t packed_inputs(const NodeDesc& d) {
  return d.residual >= 0 || d.gate >= 0 ? 1 : d.in.size();
}

/// The shapes of a node's inputs that take its pack (all but a fused residual or gate).
constexpr std::vector<Shape> packed_shapes(const Plan& p, const NodeDesc& d) {
  const std::size_t packed_inputs = detail::packed_inputs(d);
  std::vector<Shape> in;
  for (std::size_t i = 0; i < packed_inputs; ++i) in.push_back(p.blob_shapes[std::size_t(d.in[i])]);
  return in;
}

/// The pack node `d` runs at from its own shapes, or 0 for a node that follows its inputs' pack
/// (moves_data, elementwise, shares_input) unless `always`: the widest declared pack that
/// divides its inputs' packing axes; a grouped convolution (1 < group, groups of at least
/// NodeDesc::packed_group_min channels in and out) the widest that also fills them, if there
/// is one above 1 (ShuffleNet v1's 240 -> 216 channels in 3 groups: 80 and 72 per group, pack 8
/// rather than 16), its fast kernel running only there.
constexpr int own_pack(const Plan& p, const NodeDesc& d, bool always = false) {
  if (!always && (d.moves_data || d.elementwise || d.shares_input)) return 0;
  const bool gpu = on_gpu(p, d);
  const int max_pack = max_pack_on(p, gpu);
  const std::vector<Shape> in = packed_shapes(p, d);
  const int pack = choose_pack(packs_on(d, gpu), max_pack, in);
  if (!gpu && d.channel_groups > 1 && in.size() == 1 && d.out.size() == 1) {
    const int groups = d.channel_groups;
    const int cin = in[0].packed_extent();
    const int cout = p.blob_shapes[std::size_t(d.out[0])].packed_extent();
    // Narrower groups run unpacked inside the layer (NodeDesc::packed_group_min): the widest
    // pack of the channels, as for any layer.
    const int least = std::max(d.packed_group_min, 2);
    if (cin % groups == 0 && cout % groups == 0 && cin / groups >= least &&
        cout / groups >= least) {
      for (int q = pack; q > 1; q /= 2)
        if ((d.packs & unsigned(q)) && (cin / groups) % q == 0 && (cout / groups) % q == 0)
          return q;
    }
  }
  return pack;
}

/// Whether every node reading an output of `d` on d's device runs at `pack`: a node with a pack
/// of its own (own_pack) at that one; an element-wise layer or a Split when its own readers do,
/// `depth` of them deep (further ones are taken to agree); a layer that only moves values when it
/// has one input and its readers do (Concat runs at the narrowest of all its inputs, not known
/// yet). A reader on the other device takes a transfer, which converts anyway: it does not decide.
/// Approximate for a reader taking the blob as a broadcast operand or a fused residual: judged by
/// the pack it runs at.
constexpr bool readers_take(const Plan& p, const std::vector<std::vector<int>>& readers,
                            const NodeDesc& d, int pack, int depth) {
  for (int b : d.out)
    for (int r : readers[std::size_t(b)]) {
      const NodeDesc& rd = p.desc.nodes[std::size_t(r)];
      if (on_gpu(p, rd) != on_gpu(p, d)) continue;
      if (const int own = own_pack(p, rd); own != 0) {
        if (own != pack) return false;
      } else if (rd.moves_data && rd.in.size() > 1) {
        return false;
      } else if (depth > 0 && !readers_take(p, readers, rd, pack, depth - 1)) {
        return false;
      }
    }
  return true;
}

/// Whether every node in `readers` (of `blob`, a vector) runs on the GPU and reads its first
/// input, `blob` and no other, as an f32 vector (NodeDesc::vulkan_f32_vectors).
constexpr bool readers_take_f32_vector(const Plan& p, const std::vector<int>& readers, int blob) {
  for (int r : readers) {
    const NodeDesc& rd = p.desc.nodes[std::size_t(r)];
    if (!on_gpu(p, rd) || !rd.vulkan_f32_vectors || rd.in.size() != 1 || rd.in[0] != blob)
      return false;
  }
  return true;
}

}  // namespace detail

/// Builds p.steps and p.buffers from p.desc, p.order and p.blob_shapes.
constexpr PlanError place(Plan& p) {
  const GraphDesc& g = p.desc;
  std::vector<std::vector<int>> variants(g.blobs.size());  // buffers per blob, first = home
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const int b = detail::new_buffer(p, g.inputs[i], Device::cpu, ElemType::f32, 1);
    variants[std::size_t(g.inputs[i])].push_back(b);
    p.input_buffers.push_back(b);
  }
  // The activation node merged into each node (the last one, as written), listed once.
  std::vector<int> fused_into(g.nodes.size(), -1);
  for (std::size_t m = 0; m < g.nodes.size(); ++m) {
    const int into = g.nodes[m].merged_into;
    const int type = g.nodes[m].as_activation.type != 0 ? g.nodes[m].as_activation.type
                                                        : g.nodes[m].as_gpu_activation.type;
    if (into >= 0 && type != 0 && type == g.nodes[std::size_t(into)].fused.type)
      fused_into[std::size_t(into)] = int(m);
  }
  // The nodes that read each blob, in plan order.
  std::vector<std::vector<int>> readers(g.blobs.size());
  for (int n : p.order)
    for (int b : g.nodes[std::size_t(n)].in) readers[std::size_t(b)].push_back(n);
  for (int n : p.order) {
    const NodeDesc& d = g.nodes[std::size_t(n)];
    StepDesc s;
    s.kind = StepDesc::layer;
    s.node = n;
    const bool gpu = detail::on_gpu(p, d);
    s.device = gpu ? Device::vulkan : Device::cpu;
    // The i8 scale the node's inputs are read at, and its outputs written at.
    float in_scale = 0.f, out_scale = 0.f;
    if (gpu) {
      // The GPU kernels read f32 or f16 storage (arithmetic in f32) at pack 1 or 4.
      s.type = p.target.gpu_storage == ElemType::f16 ? ElemType::f16 : ElemType::f32;
    } else if (d.int8) {
      // A quantized layer reads int8: a quantize step goes in where its input arrives as float.
      s.type = ElemType::i8;
      in_scale = d.int8_in_scale;
      out_scale = d.int8_out_scale;
    } else if (detail::int8_through(p, variants, d, in_scale)) {
      // A layer that only moves values (or ReLU) between int8 blobs of one scale stays int8.
      s.type = ElemType::i8;
      out_scale = in_scale;
    } else if (!detail::choose_type(d, p.target.storage, s.type)) {
      return {PlanError::storage, n};
    }
    // A residual taken in (the last input of a node that fused a sum) is read at the output's
    // pack, a gate (input 1 of a node that fused a channel multiply) as a vector: the node's pack
    // is its first input's.
    const std::size_t packed_inputs = detail::packed_inputs(d);
    const int max_pack = detail::max_pack_on(p, gpu);
    const unsigned packs = detail::packs_on(d, gpu);
    if (d.moves_data) {
      // A layer that only moves values runs at the narrowest pack its inputs arrive in: a repack
      // before it would be one more pass over the same values (ShuffleNet's Concat,
      // ShuffleChannel and Slice between 58-channel blobs at pack 1).
      int at = max_pack;
      for (int b : d.in) at = std::min(at, detail::home_pack(p, variants, b));
      s.pack = detail::choose_pack(packs, at, detail::packed_shapes(p, d));
    } else if (d.elementwise || d.shares_input) {
      // An element-wise layer (over its inputs of the first one's shape: a broadcast operand does
      // not decide) and a Split run at the narrowest pack those inputs arrive in where whatever
      // reads their outputs runs at that pack too (looking through up to 3 such followers); else
      // at the pack one reader runs at where the others take it too (a Split of a pack-16 blob
      // read by a pack-4 grouped convolution and a sum that follows it: one repack before the
      // Split rather than one on each side); else at their own pack (a residual sum of a pack-8
      // and a pack-16 input whose result goes on to pack-16 convolutions).
      int at = max_pack;
      for (int b : d.in)
        if (p.blob_shapes[std::size_t(b)] == p.blob_shapes[std::size_t(d.in[0])])
          at = std::min(at, detail::home_pack(p, variants, b));
      int chosen = detail::readers_take(p, readers, d, at, 3) ? at : 0;
      for (std::size_t o = 0; o < d.out.size() && chosen == 0; ++o)
        for (int r : readers[std::size_t(d.out[o])]) {
          const int own = detail::own_pack(p, g.nodes[std::size_t(r)]);
          if (own != 0 && own <= max_pack && detail::readers_take(p, readers, d, own, 3)) {
            chosen = own;
            break;
          }
        }
      s.pack = chosen != 0 ? detail::choose_pack(packs, chosen, detail::packed_shapes(p, d))
                           : detail::own_pack(p, d, true);
    } else {
      s.pack = detail::own_pack(p, d, true);
    }
    // With f16 GPU storage, a vector made by a layer whose GPU kernels read and write f32
    // vectors stays f32 where its readers are all such layers on the GPU: a squeeze-excitation
    // block's pooled vector and its first InnerProduct's output, whose rounding the block's gate
    // would amplify (the gate itself, read by the multiply, is f16).
    const bool f32_vectors = gpu && d.vulkan_f32_vectors && s.type == ElemType::f16;
    for (std::size_t i = 0; i < d.in.size(); ++i) {
      const int b = d.in[i];
      const int pack = i < packed_inputs
                           ? s.pack
                           : pack_for(p.blob_shapes[std::size_t(b)].packed_extent(), s.pack);
      if (const int home = variants[std::size_t(b)].front();
          d.reads_shapes_only && p.buffers[std::size_t(home)].device == s.device) {
        s.in.push_back(home);  // only its shape is read: no repack or cast for it
        continue;
      }
      if (const int home = variants[std::size_t(b)].front();
          f32_vectors && p.buffers[std::size_t(home)].device == Device::vulkan &&
          p.buffers[std::size_t(home)].type == ElemType::f32 &&
          p.blob_shapes[std::size_t(b)].dims == 1) {
        s.in.push_back(
            detail::convert_on(p, variants, b, Device::vulkan, home, ElemType::f32, pack));
        continue;
      }
      if (d.int8 && !gpu && d.residual >= 0 && i + 1 == d.in.size()) {
        // A quantized layer's fused residual: f32, at the pack of its output (the widest).
        const int res_pack = pack_for(p.blob_shapes[std::size_t(b)].packed_extent(), max_pack);
        s.in.push_back(
            detail::buffer_as(p, variants, b, s.device, ElemType::f32, res_pack, 0.f));
        continue;
      }
      s.in.push_back(detail::buffer_as(p, variants, b, s.device, s.type, pack, in_scale));
    }
    // A GPU layer whose kernels write any pack (vulkan_any_out_pack) and takes no residual at
    // its output's pack writes the widest pack its output allows.
    // So does a quantized layer on the CPU (its int8 GEMM stores any pack): a 3-channel stem
    // writes its 64 outputs at pack 16 rather than pack 1 and a repack after it.
    // So does an f32 convolution on the CPU whose input is at pack 1 (a 3-channel stem): its
    // GEMM gathers the input anyway and stores whole vectors of the wider output.
    // An f32 convolution on the CPU's GEMM at a wider input pack writes the pack its readers run
    // at where that is wider than its own (an 8-channel input at pack 8 expanded to 32 channels
    // that a depthwise layer reads at pack 16): the epilogue stores either pack, and no repack
    // pass follows it.
    const bool wide_out = !gpu && !d.int8 && (d.cpu_wide_out_packs & unsigned(s.pack)) != 0 &&
                          s.type == ElemType::f32 && d.residual < 0;
    const bool widest = (gpu && d.vulkan_any_out_pack && d.residual < 0) || (!gpu && d.int8) ||
                        (wide_out && s.pack == 1);
    int out_max = widest ? max_pack : s.pack;
    if (wide_out && s.pack > 1 && d.out.size() == 1) {
      const int wider = pack_for(p.blob_shapes[std::size_t(d.out[0])].packed_extent(), max_pack);
      if (wider > s.pack && detail::readers_take(p, readers, d, wider, 3)) out_max = wider;
    }
    const ElemType out_type = d.int8 && !gpu ? d.int8_out_type : s.type;
    for (int b : d.out) {
      const int pack = pack_for(p.blob_shapes[std::size_t(b)].packed_extent(), out_max);
      const bool f32_out = f32_vectors && p.blob_shapes[std::size_t(b)].dims == 1 &&
                           detail::readers_take_f32_vector(p, readers[std::size_t(b)], b);
      const int out =
          detail::new_buffer(p, b, s.device, f32_out ? ElemType::f32 : out_type, pack, out_scale);
      variants[std::size_t(b)].push_back(out);
      s.out.push_back(out);
    }
    s.act = d.fused;
    s.folded = d.folded;
    s.fused_node = fused_into[std::size_t(n)];
    s.residual_node = d.residual;
    s.gate_node = d.gate;
    s.gate_act = d.gate_act;
    p.steps.push_back(s);
  }
  for (int b : g.outputs) {
    const int buf = detail::buffer_as(p, variants, b, Device::cpu, ElemType::f32, 1);
    p.buffers[std::size_t(buf)].output = true;
    p.output_buffers.push_back(buf);
  }
  return {};
}

}  // namespace infer::graph
