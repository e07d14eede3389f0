// infer-quantize: post-training int8 quantization of an ncnn model (infer/quantize.hpp).
//
//   infer-quantize MODEL.param (MODEL.bin | --random-weights SEED) --calib DIR --shape C,H,W
//                  -o OUT [--method kl|max-abs] [--keep-float NAME,...] [--no-requantize]
//                  [--threads N]
//
// DIR holds the calibration inputs, one raw little-endian f32 file each (C*H*W values,
// channel-major, as infer-run reads them). Writes OUT.param and OUT.bin in ncnn's format (ncnn
// loads them too) and prints each quantized layer's scales.
#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <infer/io/random_weights.hpp>
#include <infer/quantize.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr const char* kUsage =
    "usage: infer-quantize MODEL.param (MODEL.bin | --random-weights SEED) --calib DIR\n"
    "                      --shape C,H,W -o OUT [--method kl|max-abs] [--keep-float NAME,...]\n"
    "                      [--no-requantize] [--threads N]\n"
    "  --calib        a directory of raw f32 inputs (C*H*W values each, channel-major)\n"
    "  --method       how each quantized layer's input scale is chosen: kl (default, ncnn2table's\n"
    "                 KL divergence) or max-abs\n"
    "  --keep-float   layers left in float, by name\n"
    "  --no-requantize  dequantize every int8 layer's output (no 101/102 terms)\n"
    "  writes OUT.param and OUT.bin\n";

std::vector<std::string> split(std::string_view s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= s.size()) {
    const std::size_t end = std::min(s.find(',', at), s.size());
    if (end > at) out.emplace_back(s.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

infer::Result<std::vector<char>> read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return infer::make_error("cannot read {}", p.string());
  return std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

infer::Status run(int argc, char** argv) {
  std::string param, bin, calib, out;
  std::vector<int> shape;
  long seed = -1;
  int threads = 1;
  infer::QuantizeOptions opt;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> infer::Result<std::string_view> {
      if (i + 1 >= argc) return infer::make_error("{} needs a value\n{}", a, kUsage);
      return std::string_view(argv[++i]);
    };
    if (a == "--help" || a == "-h") return infer::make_error("{}", kUsage);
    if (a == "--calib" || a == "-o" || a == "--shape" || a == "--method" || a == "--keep-float" ||
        a == "--random-weights" || a == "--threads") {
      auto v = value();
      if (!v.ok()) return v.error();
      const std::string_view s = *v;
      if (a == "--calib") calib = s;
      if (a == "-o") out = s;
      if (a == "--keep-float") opt.keep_float = split(s);
      if (a == "--method") {
        if (s == "kl")
          opt.method = infer::CalibrationMethod::kl;
        else if (s == "max-abs")
          opt.method = infer::CalibrationMethod::max_abs;
        else
          return infer::make_error("--method: kl or max-abs, got '{}'", s);
      }
      if (a == "--shape") {
        for (const std::string& t : split(s)) {
          int x = 0;
          const auto r = std::from_chars(t.data(), t.data() + t.size(), x);
          if (r.ec != std::errc() || r.ptr != t.data() + t.size() || x <= 0)
            return infer::make_error("--shape: '{}' is not a list of positive integers", s);
          shape.push_back(x);
        }
        if (shape.size() != 3) return infer::make_error("--shape: give C,H,W, got '{}'", s);
      }
      if (a == "--random-weights" || a == "--threads") {
        long x = 0;
        const auto r = std::from_chars(s.data(), s.data() + s.size(), x);
        if (r.ec != std::errc() || r.ptr != s.data() + s.size() || x < 0 ||
            (a == "--threads" && (x < 1 || x > 1024)))
          return infer::make_error("{}: bad value '{}'", a, s);
        if (a == "--threads") threads = int(x);
        if (a == "--random-weights") seed = x;
      }
    } else if (a == "--no-requantize") {
      opt.requantize = false;
    } else if (a.starts_with("-")) {
      return infer::make_error("unknown option {}\n{}", a, kUsage);
    } else if (param.empty()) {
      param = a;
    } else if (bin.empty()) {
      bin = a;
    } else {
      return infer::make_error("unexpected argument '{}'\n{}", a, kUsage);
    }
  }
  if (param.empty() || calib.empty() || out.empty() || shape.empty() || (bin.empty() == (seed < 0)))
    return infer::make_error("{}", kUsage);

  auto text = read_file(param);
  if (!text.ok()) return text.error();
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(calib, ec))
    if (e.is_regular_file()) files.push_back(e.path());
  if (ec) return infer::make_error("--calib {}: {}", calib, ec.message());
  if (files.empty()) return infer::make_error("--calib {}: no input files", calib);
  std::sort(files.begin(), files.end());
  const infer::Shape s = infer::Shape::of(shape[2], shape[1], shape[0]);
  std::vector<infer::Mat> inputs;
  for (const auto& f : files) {
    auto bytes = read_file(f);
    if (!bytes.ok()) return bytes.error();
    if (bytes->size() != s.total() * sizeof(float))
      return infer::make_error("{}: {} bytes, --shape {},{},{} needs {}", f.string(), bytes->size(),
                               shape[0], shape[1], shape[2], s.total() * sizeof(float));
    infer::Mat m(s, infer::ElemType::f32, 1);
    const std::size_t plane = std::size_t(s.w) * s.h;
    for (int c = 0; c < s.c; ++c)
      std::memcpy(m.channel_data(c), bytes->data() + std::size_t(c) * plane * sizeof(float),
                  plane * sizeof(float));
    inputs.push_back(std::move(m));
  }

  const std::string_view param_text(text->data(), text->size());
  infer::Result<infer::QuantizedModel> q = infer::make_error("no weights");
  if (seed >= 0) {
    // The float network's random weights (infer-run --random-weights SEED gives the same).
    std::vector<std::byte> weights;
    {
      infer::Net probe;
      INFER_TRY(probe.load_param_text(param_text, param));
      INFER_TRY(probe.load_random_weights(std::uint64_t(seed), &weights));
    }
    infer::io::ModelBinFromMemory mb(weights, "random weights");
    q = infer::quantize_model(param_text, mb, inputs, opt, threads);
  } else {
    auto weights = read_file(bin);
    if (!weights.ok()) return weights.error();
    infer::io::ModelBinFromMemory mb(
        std::span(reinterpret_cast<const std::byte*>(weights->data()), weights->size()), bin);
    q = infer::quantize_model(param_text, mb, inputs, opt, threads);
  }
  if (!q.ok()) return q.error();
  {
    std::ofstream p(out + ".param", std::ios::binary);
    p << q->param;
    std::ofstream b(out + ".bin", std::ios::binary);
    b.write(reinterpret_cast<const char*>(q->bin.data()), std::streamsize(q->bin.size()));
    if (!p || !b) return infer::make_error("cannot write {}.param / {}.bin", out, out);
  }
  for (const infer::QuantizedLayer& l : q->layers)
    fmt::print("{} '{}': 8={} bottom scale {:g}{}\n", l.type, l.name, l.term, l.bottom_scale,
               l.top_scale > 0 ? fmt::format(" top scale {:g}", l.top_scale) : std::string());
  fmt::print("{} layers quantized on {} calibration inputs: {}.param, {}.bin\n", q->layers.size(),
             inputs.size(), out, out);
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  const infer::Status s = run(argc, argv);
  if (!s.ok()) {
    fmt::print(stderr, "infer-quantize: {}\n", s.message());
    return 1;
  }
  return 0;
}
