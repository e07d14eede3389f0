// infer::Net's GPU side (with INFER_HAS_VULKAN): the device a network runs on, the weights of a
// plan's GPU steps uploaded once when the plan is made, and each context's recording of the plan.
// A plan's steps in order fall into segments: runs of consecutive GPU steps (layers, uploads,
// downloads) between CPU steps. Each segment is recorded once into its own command buffer (a
// barrier between dependent steps) and replayed on every forward: the host writes the segment's
// uploads into staging memory, submits once, waits once, and reads its downloads back. A plan
// wholly on the GPU is one segment: one submit, one fence wait per forward. A transfer between
// float types converts as it copies between the host buffer and staging memory (one pass over
// the blob on the host); uploads stage in memory the GPU reads fastest that the host can write,
// downloads in memory the host reads cached.
#pragma once

#include <cstring>
#include <infer/convert.hpp>
#include <infer/element.hpp>
#include <infer/graph/plan.hpp>
#include <infer/net/any_layer.hpp>
#include <infer/vulkan/buffer.hpp>
#include <infer/vulkan/command.hpp>
#include <infer/vulkan/context.hpp>
#include <infer/vulkan/pipeline.hpp>
#include <infer/vulkan/recorder.hpp>
#include <infer/vulkan/relayout.hpp>
#include <memory>
#include <span>
#include <tuple>
#include <vector>

namespace infer::net::gpu {

/// A Vulkan device and its pipelines, shared by a network, its plans and its contexts.
struct Device {
  std::unique_ptr<vk::Context> ctx;
  std::unique_ptr<vk::PipelineCache> pipelines;
};

/// Opens device `index` (-1: the best one the loader lists).
inline Result<std::shared_ptr<Device>> open_device(int index) {
  vk::DeviceChoice choice;
  if (index >= 0) choice.index = std::uint32_t(index);
  auto ctx = vk::Context::create(choice);
  INFER_TRY(ctx);
  auto d = std::make_shared<Device>();
  d->ctx = std::move(*ctx);
  d->pipelines = std::make_unique<vk::PipelineCache>(*d->ctx);
  return d;
}

/// Collects the weights layers add into one host image (each tensor 256-byte aligned, converted
/// to the storage type); the device buffer is made from it once every layer has added its own.
class StagedUploader final : public vk::Uploader {
 public:
  explicit StagedUploader(ElemType type) : type_(type) {}
  ElemType type() const override { return type_; }
  Result<vk::VkMat> add(std::span<const float> values) override {
    if (values.empty()) return make_error("Vulkan upload: an empty weight tensor");
    const std::size_t offset = (bytes_.size() + 255) / 256 * 256;
    const vk::VkMat m(nullptr, offset, Shape::of(int(values.size())), type_, 1);
    bytes_.resize(offset + m.bytes());
    if (type_ == ElemType::f16) {
      auto* dst = reinterpret_cast<f16*>(bytes_.data() + offset);
      for (std::size_t i = 0; i < values.size(); ++i) dst[i] = f32_to_f16(values[i]);
    } else {
      std::memcpy(bytes_.data() + offset, values.data(), values.size() * sizeof(float));
    }
    added_.push_back(m);
    return m;
  }
  /// Takes what was added since the last call (one step's weights).
  std::vector<vk::VkMat> take() { return std::exchange(added_, {}); }
  std::span<const std::byte> bytes() const { return bytes_; }

 private:
  ElemType type_;
  std::vector<std::byte> bytes_;
  std::vector<vk::VkMat> added_;
};

/// The weights of one plan's GPU steps, in device memory.
struct PlanWeights {
  std::shared_ptr<Device> device;
  std::unique_ptr<vk::Buffer> buffer;
  std::vector<std::vector<vk::VkMat>> by_step;  ///< empty for steps without weights
};

/// Uploads the weights of every GPU layer step of `p`; layer(node) is the layer a step runs.
template <class LayerOf>
Result<std::unique_ptr<PlanWeights>> upload_weights(std::shared_ptr<Device> device,
                                                    const graph::Plan& p, LayerOf&& layer) {
  auto w = std::make_unique<PlanWeights>();
  w->device = std::move(device);
  w->by_step.resize(p.steps.size());
  // One uploader per storage type the GPU steps use (f16 by default; f32 when the target says).
  StagedUploader up(p.target.gpu_storage == ElemType::f16 ? ElemType::f16 : ElemType::f32);
  for (std::size_t k = 0; k < p.steps.size(); ++k) {
    const graph::StepDesc& s = p.steps[k];
    if (s.kind != graph::StepDesc::layer || s.device != graph::Device::vulkan) continue;
    INFER_TRY(layer(s.node)->upload_vulkan(up));
    w->by_step[k] = up.take();
  }
  if (up.bytes().empty()) return w;
  const vk::Context& ctx = *w->device->ctx;
  auto buffer = vk::Buffer::create(ctx, up.bytes().size(), vk::MemoryKind::device);
  INFER_TRY(buffer);
  auto staging = vk::Buffer::create(ctx, up.bytes().size(), vk::MemoryKind::staging);
  INFER_TRY(staging);
  std::memcpy((*staging)->mapped(), up.bytes().data(), up.bytes().size());
  auto cmd = vk::Command::create(ctx, 1, 1);
  INFER_TRY(cmd);
  INFER_TRY((*cmd)->begin());
  INFER_TRY((*cmd)->copy(**staging, 0, **buffer, 0, up.bytes().size()));
  INFER_TRY((*cmd)->end());
  INFER_TRY((*cmd)->submit_and_wait());
  w->buffer = std::move(*buffer);
  for (std::vector<vk::VkMat>& step : w->by_step)
    for (vk::VkMat& m : step)
      m = vk::VkMat(w->buffer.get(), m.offset(), m.shape(), m.type(), m.elempack());
  return w;
}

/// One context's GPU side of a plan: the GPU arena, the staging memory of its transfers and the
/// recorded segments.
class Run {
 public:
  struct Transfer {
    int host = -1;            ///< the host buffer (read by an upload, written by a download)
    std::size_t staging = 0;  ///< where the device blob's bytes start in its staging buffer
    vk::VkMat dev;            ///< the device blob (its type may differ from the host buffer's)
  };
  struct Segment {
    std::size_t first = 0, end = 0;  ///< steps [first, end)
    std::unique_ptr<vk::Command> cmd;
    std::vector<Transfer> uploads, downloads;
  };

  /// Lays the plan's GPU buffers out in a new arena and records its segments. `layer(node)` is the
  /// layer a step runs; `name(step)` names a step for errors.
  /// With `timestamps` (and a device that has them), each step's GPU time is measured.
  template <class LayerOf, class NameOf>
  static Result<std::unique_ptr<Run>> record(const graph::Plan& p, const PlanWeights& weights,
                                             LayerOf&& layer, NameOf&& name,
                                             bool timestamps = false) {
    auto run = std::unique_ptr<Run>(new Run());
    run->requested_ = timestamps;
    run->timestamps_ = timestamps && weights.device->ctx->info().timestamp_period > 0;
    Device& dev = *weights.device;
    run->device_ = weights.device;
    const vk::Context& ctx = *dev.ctx;
    if (p.gpu_arena_bytes > 0) {
      auto arena = vk::Buffer::create(ctx, p.gpu_arena_bytes, vk::MemoryKind::device);
      INFER_TRY(arena);
      run->arena_ = std::move(*arena);
    }
    run->bufs_.resize(p.buffers.size());
    for (std::size_t b = 0; b < p.buffers.size(); ++b) {
      const graph::BufferDesc& d = p.buffers[b];
      if (d.device == graph::Device::vulkan)
        run->bufs_[b] = vk::VkMat(run->arena_.get(), d.offset, d.shape, d.type, d.pack);
    }
    // Staging: one region per transfer, the device blob's bytes; uploads and downloads apart.
    std::size_t up_bytes = 0, down_bytes = 0;
    std::vector<std::size_t> staging_at(p.steps.size(), 0);
    for (std::size_t k = 0; k < p.steps.size(); ++k) {
      const graph::StepDesc& s = p.steps[k];
      const bool up = s.kind == graph::StepDesc::upload;
      if (!up && s.kind != graph::StepDesc::download) continue;
      std::size_t& at = up ? up_bytes : down_bytes;
      staging_at[k] = at;
      at += (p.buffers[std::size_t(up ? s.out[0] : s.in[0])].bytes + 255) / 256 * 256;
    }
    for (auto [bytes, kind, into] :
         {std::tuple(up_bytes, vk::MemoryKind::upload, &run->up_),
          std::tuple(down_bytes, vk::MemoryKind::readback, &run->down_)}) {
      if (bytes == 0) continue;
      auto staging = vk::Buffer::create(ctx, bytes, kind);
      INFER_TRY(staging);
      // Zeroed once: a converting upload writes each channel group's values, not the padding
      // between groups.
      std::memset((*staging)->mapped(), 0, bytes);
      *into = std::move(*staging);
    }
    run->segment_at_.assign(p.steps.size(), -1);
    for (std::size_t k = 0; k < p.steps.size();) {
      if (p.steps[k].device != graph::Device::vulkan) {
        ++k;
        continue;
      }
      Segment seg;
      seg.first = k;
      while (k < p.steps.size() && p.steps[k].device == graph::Device::vulkan) ++k;
      seg.end = k;
      auto cmd = vk::Command::create(ctx, std::uint32_t(4 * (seg.end - seg.first) + 16),
                                     std::uint32_t(16 * (seg.end - seg.first) + 64));
      INFER_TRY(cmd);
      seg.cmd = std::move(*cmd);
      INFER_TRY(run->record_segment(p, weights, seg, staging_at, layer, name));
      run->segment_at_[seg.first] = int(run->segments_.size());
      run->segments_.push_back(std::move(seg));
    }
    return run;
  }

  /// The segment that starts at step k, or -1.
  int segment_at(std::size_t k) const { return segment_at_[k]; }
  std::size_t segment_end(int s) const { return segments_[std::size_t(s)].end; }

  /// Runs segment `s`: uploads from the host buffers, one submit and wait, downloads into them.
  /// When recorded with timestamps, `step_ms` gets each of its steps' GPU time. The wait polls
  /// for up to `spin_us` microseconds before it blocks (Option::vulkan_spin_us).
  Status run_segment(int s, std::span<Mat> host, int spin_us,
                     std::vector<double>* step_ms = nullptr) {
    Segment& seg = segments_[std::size_t(s)];
    for (const Transfer& t : seg.uploads) {
      Mat staged = staged_view(*up_, t);
      INFER_TRY(cast_into(host[std::size_t(t.host)], staged));
    }
    // A CPU implementation of Vulkan runs the work on the cores a poll would keep busy.
    INFER_TRY(seg.cmd->submit_and_wait(device_->ctx->info().kind == "cpu" ? 0 : spin_us));
    for (const Transfer& t : seg.downloads)
      INFER_TRY(cast_into(staged_view(*down_, t), host[std::size_t(t.host)]));
    if (step_ms && timestamps_) {
      auto ns = seg.cmd->timestamps_ns();
      INFER_TRY(ns);
      step_ms->clear();
      for (std::size_t i = 1; i < ns->size(); ++i)
        step_ms->push_back(((*ns)[i] - (*ns)[i - 1]) / 1e6);
    }
    return {};
  }
  bool timestamps() const { return timestamps_; }
  /// Whether timestamps were asked for (a device may have none).
  bool timestamps_requested() const { return requested_; }

  const vk::Context& context() const { return *device_->ctx; }

 private:
  Run() = default;

  template <class LayerOf, class NameOf>
  Status record_segment(const graph::Plan& p, const PlanWeights& weights, Segment& seg,
                        const std::vector<std::size_t>& staging_at, LayerOf& layer, NameOf& name) {
    vk::Command& cmd = *seg.cmd;
    vk::CommandRecorder rec(cmd, *device_->pipelines);
    const std::uint32_t stamps = timestamps_ ? std::uint32_t(seg.end - seg.first + 1) : 0;
    INFER_TRY(cmd.begin(stamps));
    if (stamps) INFER_TRY(cmd.timestamp(0));
    std::vector<vk::VkMat> in, out;
    // Barriers only between dependent steps: the memory written and read since the last one;
    // a step that reads what was written, or writes what was read or written, waits for it.
    std::vector<Range> written, read;
    for (std::size_t k = seg.first; k < seg.end; ++k) {
      const graph::StepDesc& s = p.steps[k];
      std::vector<Range> reads, writes;
      if (s.kind == graph::StepDesc::upload) {
        writes.push_back(range_of(bufs_[std::size_t(s.out[0])]));
      } else if (s.kind == graph::StepDesc::download) {
        reads.push_back(range_of(bufs_[std::size_t(s.in[0])]));
      } else {
        for (int b : s.in) reads.push_back(range_of(bufs_[std::size_t(b)]));
        for (int b : s.out) writes.push_back(range_of(bufs_[std::size_t(b)]));
      }
      if (overlaps(reads, written) || overlaps(writes, written) || overlaps(writes, read)) {
        INFER_TRY(cmd.barrier());
        written.clear();
        read.clear();
        ++barriers_;
      }
      written.insert(written.end(), writes.begin(), writes.end());
      read.insert(read.end(), reads.begin(), reads.end());
      Status st;
      if (s.kind == graph::StepDesc::upload || s.kind == graph::StepDesc::download) {
        const bool up = s.kind == graph::StepDesc::upload;
        const int host = up ? s.in[0] : s.out[0];
        const vk::VkMat& dev = bufs_[std::size_t(up ? s.out[0] : s.in[0])];
        const Transfer t{host, staging_at[k], dev};
        (up ? seg.uploads : seg.downloads).push_back(t);
        st = up ? cmd.copy(*up_, t.staging, *dev.buffer(), dev.offset(), dev.bytes())
                : cmd.copy(*dev.buffer(), dev.offset(), *down_, t.staging, dev.bytes());
      } else if (s.kind == graph::StepDesc::layer) {
        in.clear();
        out.clear();
        for (int b : s.in) in.push_back(bufs_[std::size_t(b)]);
        for (int b : s.out) out.push_back(bufs_[std::size_t(b)]);
        vk::GpuStep gs;
        gs.type = s.type;
        gs.pack = s.pack;
        gs.act = s.act;
        gs.gated = s.gate_node >= 0;
        gs.gate_act = s.gate_act;
        gs.weights = weights.by_step[k];
        st = layer(s.node)->forward_vulkan(in, out, gs, rec);
      } else {
        // A cast or repack between two GPU buffers of one blob.
        st = vk::record_relayout(rec, bufs_[std::size_t(s.in[0])], bufs_[std::size_t(s.out[0])]);
      }
      if (!st.ok())
        return make_error("recording step {} ({}) on {}: {}", k, name(k), device_->ctx->info().name,
                          st.message());
      if (stamps) {
        // Timing each step on its own: it finishes before the next starts.
        INFER_TRY(cmd.barrier());
        written.clear();
        read.clear();
        INFER_TRY(cmd.timestamp(std::uint32_t(k - seg.first + 1)));
      }
    }
    // Downloads were recorded as copies into staging memory: the submit's fence makes them
    // visible to the host.
    return cmd.end();
  }

  /// A transfer's region of a staging buffer, laid out as its device blob.
  static Mat staged_view(const vk::Buffer& staging, const Transfer& t) {
    return Mat::wrap(static_cast<char*>(staging.mapped()) + t.staging, t.dev.shape(), t.dev.type(),
                     t.dev.elempack(), t.dev.cstep());
  }

  /// Bytes [begin, end) of one buffer.
  struct Range {
    const vk::Buffer* buffer;
    std::size_t begin, end;
  };
  static Range range_of(const vk::VkMat& m) {
    return {m.buffer(), m.offset(), m.offset() + m.bytes()};
  }
  static bool overlaps(const std::vector<Range>& a, const std::vector<Range>& b) {
    for (const Range& x : a)
      for (const Range& y : b)
        if (x.buffer == y.buffer && x.begin < y.end && y.begin < x.end) return true;
    return false;
  }

 public:
  /// Barriers recorded between steps (all segments), for tests and profiles.
  std::size_t barriers() const { return barriers_; }

 private:
  std::size_t barriers_ = 0;
  std::shared_ptr<Device> device_;
  std::unique_ptr<vk::Buffer> arena_, up_, down_;
  std::vector<vk::VkMat> bufs_;
  std::vector<Segment> segments_;
  std::vector<int> segment_at_;
  bool timestamps_ = false, requested_ = false;
};

}  // namespace infer::net::gpu
