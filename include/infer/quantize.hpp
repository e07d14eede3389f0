// Post-training int8 quantization of an ncnn model, as ncnn's ncnn2table + ncnn2int8 do it: run the
// float network on calibration inputs, choose each quantized layer's input (bottom blob) scale
// from the values it saw (KL divergence over a histogram, as ncnn2table's default, or the largest
// magnitude), give every Convolution, ConvolutionDepthWise and InnerProduct per-channel weight
// scales (127 / max|w| per output channel; per group for ConvolutionDepthWise), and write the
// model in ncnn's format: the .param with 8=int8_scale_term on each quantized layer (101 / 102
// where its output goes only to quantized layers, directly or through Splits, and is requantized
// for them), the .bin with the
// float weights followed by the scales in ncnn's order (ncnn and infer quantize the weights at
// load). Layers named in keep_float stay float.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <infer/io/model_bin.hpp>
#include <infer/io/ncnn_layers.hpp>
#include <infer/io/param.hpp>
#include <infer/net.hpp>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace infer {

/// How a bottom blob's scale is chosen from the calibration values.
enum class CalibrationMethod {
  kl,       ///< the threshold whose 128-level quantization loses least information (KL divergence)
  max_abs,  ///< 127 / the largest magnitude seen
};

struct QuantizeOptions {
  CalibrationMethod method = CalibrationMethod::kl;
  std::vector<std::string> keep_float{};  ///< layer names left in float
  bool requantize = true;  ///< int8 outputs (term 101 / 102) where every reader is quantized
};

/// What the quantizer chose for one layer.
struct QuantizedLayer {
  std::string name, type;
  int term = 0;              ///< the int8_scale_term written
  float bottom_scale = 0.f;  ///< the input's scale
  float top_scale = 0.f;     ///< the requantized output's scale (term > 100), else 0
};

/// The quantized model: .param text, .bin bytes, and what each quantized layer got.
struct QuantizedModel {
  std::string param;
  std::vector<std::byte> bin;
  std::vector<QuantizedLayer> layers;
};

namespace detail {

/// A ModelBin that hands on another's buffers and keeps a copy of each (with how it was stored).
class RecordingModelBin final : public io::ModelBin {
 public:
  struct Buffer {
    std::vector<float> values;
    io::WeightType type = io::WeightType::raw_f32;
    ElemType stored = ElemType::f32;
  };
  explicit RecordingModelBin(io::ModelBin& src) : src_(&src) {}
  Result<std::vector<float>> load(std::size_t count, io::WeightType type) override {
    auto r = src_->load(count, type);
    if (!r.ok()) return r;
    last_type_ = src_->last_type();
    buffers.push_back({r.value(), type, last_type_});
    return r;
  }
  std::vector<Buffer> buffers;

 private:
  io::ModelBin* src_;
};

/// ncnn2table's threshold search (TensorRT's calibration): the histogram (bins of width `width`
/// over |x|, zeros left out) cut at i >= 128 bins, the tail beyond summed into the last bin (P);
/// the cut histogram without its tail merged into 128 levels and spread back over its non-empty
/// bins (Q, what 8 bits keep of it); the cut whose Q differs least from P (KL divergence: clipping
/// a heavy tail costs, a fine grid over a light one gains) gives the scale 127 / ((i + 0.5) x
/// width).
inline float kl_scale(const std::vector<double>& hist, double width) {
  constexpr int kLevels = 128;
  const int bins = int(hist.size());
  double best_kl = std::numeric_limits<double>::infinity();
  int best = bins;
  for (int i = kLevels; i <= bins; ++i) {
    std::vector<double> p(hist.begin(), hist.begin() + i);
    for (int k = i; k < bins; ++k) p[std::size_t(i - 1)] += hist[std::size_t(k)];
    double p_sum = 0;
    for (double v : p) p_sum += v;
    if (p_sum <= 0) continue;
    std::vector<double> q(std::size_t(i), 0.0);
    for (int j = 0; j < kLevels; ++j) {
      const int b0 = int(std::int64_t(j) * i / kLevels),
                b1 = int(std::int64_t(j + 1) * i / kLevels);
      double sum = 0;
      int nonzero = 0;
      for (int k = b0; k < b1; ++k) {
        sum += hist[std::size_t(k)];
        nonzero += hist[std::size_t(k)] > 0;
      }
      if (nonzero == 0) continue;
      for (int k = b0; k < b1; ++k)
        if (p[std::size_t(k)] > 0) q[std::size_t(k)] = sum / nonzero;
    }
    double q_sum = 0;
    for (double v : q) q_sum += v;
    double kl = 0;
    for (int k = 0; k < i; ++k) {
      const double pk = p[std::size_t(k)] / p_sum;
      if (pk <= 0) continue;
      const double qk = q[std::size_t(k)] / q_sum;
      kl += qk > 0 ? pk * std::log(pk / qk) : pk * 20.0;  // a level lost: heavily penalised
    }
    if (kl < best_kl) {
      best_kl = kl;
      best = i;
    }
  }
  return float(127.0 / ((double(best) + 0.5) * width));
}

/// Replaces (or adds) key 8 of a .param text line.
inline std::string with_term(std::string_view line, int term) {
  std::string out;
  std::size_t at = 0;
  while (at < line.size()) {
    const std::size_t end = std::min(line.find_first_of(" \t", at), line.size());
    const std::string_view tok = line.substr(at, end - at);
    if (!tok.empty() && !tok.starts_with("8=")) {
      if (!out.empty()) out += ' ';
      out += tok;
    }
    at = end + 1;
  }
  return out + " 8=" + std::to_string(term);
}

inline void put_f32(std::vector<std::byte>& bin, std::span<const float> v, bool tagged) {
  if (tagged) {
    const std::uint32_t tag = io::kTagF32;
    const auto* t = reinterpret_cast<const std::byte*>(&tag);
    bin.insert(bin.end(), t, t + 4);
  }
  const auto* b = reinterpret_cast<const std::byte*>(v.data());
  bin.insert(bin.end(), b, b + v.size() * sizeof(float));
}

}  // namespace detail

/// Quantizes the model of .param text `param_text` with weights from `weights` (a .bin reader, or
/// random weights), calibrated on `calibration` (inputs of the network's first Input blob, f32).
inline Result<QuantizedModel> quantize_model(std::string_view param_text, io::ModelBin& weights,
                                             std::span<const Mat> calibration,
                                             const QuantizeOptions& opt = {}, int num_threads = 1) {
  if (calibration.empty()) return make_error("quantize: no calibration inputs");
  auto parsed = io::parse_param_text(param_text, "<param>");
  if (!parsed.ok()) return parsed.error();
  const io::ParamFile& file = parsed.value();

  // Every layer's weight buffers, recorded as loaded; the quantized layers' weights and groups.
  struct Layer {
    std::vector<detail::RecordingModelBin::Buffer> buffers;
    bool quantize = false;
    int groups = 0;  ///< weight scales: per output channel, or per group (ConvolutionDepthWise)
    bool depthwise = false;
  };
  std::vector<Layer> layers(file.layers.size());
  for (std::size_t n = 0; n < file.layers.size(); ++n) {
    const io::LayerSpec& spec = file.layers[n];
    if (spec.type == "Input") continue;
    detail::RecordingModelBin rec(weights);
    Status s = io::visit_ncnn_layer(file, spec, [&](auto& layer) -> Status {
      using L = std::remove_cvref_t<decltype(layer)>;
      if constexpr (io::LoadsWeights<L>) INFER_TRY(layer.load(rec));
      if constexpr (requires {
                      layer.int8_scale_term;
                      layer.num_output;
                    }) {
        const bool keep = std::find(opt.keep_float.begin(), opt.keep_float.end(), spec.name) !=
                          opt.keep_float.end();
        constexpr bool conv = std::is_same_v<L, layers::Convolution>;
        constexpr bool dw = std::is_same_v<L, layers::ConvolutionDepthWise>;
        constexpr bool ip = std::is_same_v<L, layers::InnerProduct>;
        if ((conv || dw || ip) && !keep && layer.int8_scale_term == 0) {
          layers[n].quantize = true;
          layers[n].groups = layer.num_output;
          if constexpr (dw) {
            layers[n].groups = layer.group;
            layers[n].depthwise = true;
          }
        }
      }
      return {};
    });
    if (!s.ok()) return make_error("quantize: layer '{}': {}", spec.name, s.message());
    layers[n].buffers = std::move(rec.buffers);
    if (layers[n].quantize &&
        (layers[n].buffers.empty() || layers[n].buffers[0].stored != ElemType::f32))
      layers[n].quantize = false;  // int8 or f16 weights as stored: left as they are
  }

  // The float network on the same weights, for calibration.
  std::vector<std::byte> float_bin;
  for (const Layer& l : layers)
    for (const auto& b : l.buffers)
      detail::put_f32(float_bin, b.values, b.type == io::WeightType::tagged);
  Option nopt;
  nopt.num_threads = num_threads;
  Net net({}, nopt);
  INFER_TRY(net.load_param_text(param_text, "<param>"));
  INFER_TRY(net.load_model(float_bin, "<weights>"));

  // The blobs whose scales are needed: each quantized layer's input.
  std::vector<int> blob_of(file.layers.size(), -1);
  std::vector<int> wanted;  // blob ids
  for (std::size_t n = 0; n < file.layers.size(); ++n) {
    if (!layers[n].quantize) continue;
    const io::LayerSpec& spec = file.layers[n];
    if (spec.bottoms.size() != 1)
      return make_error("quantize: layer '{}' has no single input", spec.name);
    blob_of[n] = spec.bottoms[0];
    if (std::find(wanted.begin(), wanted.end(), blob_of[n]) == wanted.end())
      wanted.push_back(blob_of[n]);
  }
  std::vector<std::string_view> names;
  for (int b : wanted) names.push_back(file.blobs[std::size_t(b)]);
  const std::string_view input = net.input_names().at(0);
  auto each_run = [&](auto&& visit) -> Status {
    for (const Mat& in : calibration) {
      const NamedMat named[] = {{input, in}};
      auto outs = net.run(named, names);
      if (!outs.ok()) return make_error("quantize: calibration run: {}", outs.message());
      for (std::size_t i = 0; i < names.size(); ++i) {
        const Mat& m = outs.value()[i];  // f32 pack 1: each channel's values, then padding
        const Shape sh = m.shape();
        const int channels = sh.dims >= 3 ? sh.c : 1;
        const std::size_t plane = sh.dims >= 3 ? std::size_t(sh.w) * sh.h * sh.d : sh.total();
        for (int q = 0; q < channels; ++q)
          visit(i, static_cast<const float*>(m.channel_data(q)), plane);
      }
    }
    return {};
  };
  // Pass 1: each blob's largest magnitude; pass 2 (KL): its histogram of magnitudes.
  std::vector<double> absmax(names.size(), 0.0);
  INFER_TRY(each_run([&](std::size_t i, const float* v, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) absmax[i] = std::max(absmax[i], double(std::fabs(v[k])));
  }));
  std::vector<float> scales(names.size(), 1.f);
  constexpr int kBins = 2048;
  if (opt.method == CalibrationMethod::kl) {
    std::vector<std::vector<double>> hist(names.size(), std::vector<double>(kBins, 0.0));
    INFER_TRY(each_run([&](std::size_t i, const float* v, std::size_t n) {
      if (absmax[i] <= 0) return;
      const double width = absmax[i] / kBins;
      for (std::size_t k = 0; k < n; ++k) {
        const double a = std::fabs(v[k]);
        if (a == 0) continue;
        hist[i][std::size_t(std::min(kBins - 1, int(a / width)))] += 1;
      }
    }));
    for (std::size_t i = 0; i < names.size(); ++i)
      scales[i] = absmax[i] > 0 ? detail::kl_scale(hist[i], absmax[i] / kBins) : 1.f;
  } else {
    for (std::size_t i = 0; i < names.size(); ++i)
      scales[i] = absmax[i] > 0 ? float(127.0 / absmax[i]) : 1.f;
  }
  auto scale_of = [&](int blob) {
    const auto it = std::find(wanted.begin(), wanted.end(), blob);
    return it == wanted.end() ? 0.f : scales[std::size_t(it - wanted.begin())];
  };

  // Requantize where every reader of a layer's output is a quantized layer.
  std::vector<std::vector<int>> readers(file.blobs.size());
  for (std::size_t n = 0; n < file.layers.size(); ++n)
    for (int b : file.layers[n].bottoms) readers[std::size_t(b)].push_back(int(n));

  // Whether blob b is read, and only by quantized layers (through Splits, which pass int8 on);
  // `scale` gets the input scale of one of them (a Split's outputs hold the same values, so their
  // readers' scales agree), which the requantized blob is written at.
  auto read_quantized = [&](auto&& self, int b, int depth, float& scale) -> bool {
    const std::vector<int>& rs = readers[std::size_t(b)];
    if (rs.empty() || depth > 8) return false;
    for (int r : rs) {
      if (layers[std::size_t(r)].quantize) {
        scale = scale_of(blob_of[std::size_t(r)]);
        continue;
      }
      if (file.layers[std::size_t(r)].type != "Split") return false;
      for (int t : file.layers[std::size_t(r)].tops)
        if (!self(self, t, depth + 1, scale)) return false;
    }
    return scale > 0.f;
  };

  QuantizedModel out;
  std::vector<std::string> lines;
  {
    std::size_t at = 0;
    while (at <= param_text.size()) {
      const std::size_t end = std::min(param_text.find('\n', at), param_text.size());
      lines.emplace_back(param_text.substr(at, end - at));
      at = end + 1;
    }
  }
  for (std::size_t n = 0; n < file.layers.size(); ++n) {
    const Layer& l = layers[n];
    const io::LayerSpec& spec = file.layers[n];
    if (!l.quantize) {
      for (const auto& b : l.buffers)
        detail::put_f32(out.bin, b.values, b.type == io::WeightType::tagged);
      continue;
    }
    const bool is_ip = spec.type == "InnerProduct";
    float top_scale = 0.f;
    const bool requant = opt.requantize && !is_ip && spec.tops.size() == 1 &&
                         read_quantized(read_quantized, spec.tops[0], 0, top_scale);
    const int term = (l.depthwise ? 1 : 2) + (requant ? 100 : 0);
    // Weights and bias as they were, then the scales.
    for (const auto& b : l.buffers)
      detail::put_f32(out.bin, b.values, b.type == io::WeightType::tagged);
    const std::vector<float>& w = l.buffers[0].values;
    std::vector<float> ws(std::size_t(l.groups), 0.f);
    const std::size_t per = w.size() / std::size_t(l.groups);
    for (std::size_t g = 0; g < ws.size(); ++g) {
      float m = 0;
      for (std::size_t i = 0; i < per; ++i) m = std::max(m, std::fabs(w[g * per + i]));
      ws[g] = m > 0 ? 127.f / m : 0.f;
    }
    detail::put_f32(out.bin, ws, false);
    QuantizedLayer q{spec.name, spec.type, term, scale_of(blob_of[n]), 0.f};
    const float bottom[1] = {q.bottom_scale};
    detail::put_f32(out.bin, bottom, false);
    if (requant) {
      q.top_scale = top_scale;
      const float top[1] = {q.top_scale};
      detail::put_f32(out.bin, top, false);
    }
    if (spec.line <= 0 || std::size_t(spec.line) > lines.size())
      return make_error("quantize: layer '{}': the .param must be text", spec.name);
    lines[std::size_t(spec.line - 1)] = detail::with_term(lines[std::size_t(spec.line - 1)], term);
    out.layers.push_back(q);
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out.param += lines[i];
    if (i + 1 < lines.size()) out.param += '\n';
  }
  return out;
}

}  // namespace infer
