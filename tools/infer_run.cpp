// infer-run: runs an ncnn model through infer::Net on an image or a raw f32 input file and writes
// one blob or prints the top classes.
//
//   infer-run MODEL.param MODEL.bin --shape C,H,W --input IN.f32 --output OUT.f32
//             [--blob NAME] [--threads N] [--print-plan]
//   infer-run MODEL.param MODEL.bin --image CAT.jpg --size W,H [--mean R,G,B] [--norm R,G,B]
//             [--bgr] --top K [--labels LABELS.txt]
//   infer-run MODEL.param --random-weights SEED [--write-weights OUT.bin] ...
//
// Files hold little-endian f32 values, channel-major (c, then h, then w), no header. The shape of
// the written blob goes to stdout.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <algorithm>
#include <infer/graph/print.hpp>
#include <infer/image.hpp>
#include <infer/io/image_file.hpp>
#include <infer/io/param.hpp>
#include <infer/net.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device_option.hpp"

namespace {

constexpr const char* kUsage =
    "usage: infer-run MODEL.param (MODEL.bin | --random-weights SEED [--write-weights OUT.bin])\n"
    "                 [--shape C,H,W] [--input IN.f32] [--output OUT.f32] [--blob NAME]\n"
    "                 [--threads N] [--print-plan] [--device cpu|vulkan[:N]|any] [--gpu-storage f16|f32]\n"
    "                 [--bf16]\n"
    "                 [--image FILE [--size W,H] [--mean R,G,B] [--norm R,G,B] [--bgr]]\n"
    "                 [--top K [--labels FILE]]\n"
    "  --shape   the input's shape, outermost first (C,H,W; H,W; or W); default: the Input line's\n"
    "  --input   raw little-endian f32 values, channel-major; default: all 0.5\n"
    "  --output  where to write the blob (raw f32, channel-major); default: not written\n"
    "  --blob    which blob to write; default: the last layer's first output\n"
    "  --image   a PNG or JPEG file as the input, resized to --size (default: the Input's\n"
    "            W,H, else the image's), (v - mean) * norm per channel (0..255 units), RGB\n"
    "            order unless --bgr (GRAY when the input has one channel)\n"
    "  --top     print the K largest values of the blob (class scores) with their indices\n"
    "  --labels  a text file of class names, one per line, for --top\n"
    "  --device  where the layers run: cpu (default), or vulkan[:N] (Vulkan device N, default the\n"
    "            first discrete GPU): layers with a GPU forward run there, the others on the CPU;\n"
    "            any: the GPU when a Vulkan device opens, else everything on the CPU\n"
    "  --gpu-storage  the GPU's storage type, f16 (default) or f32\n"
    "  --bf16    Convolution and InnerProduct multiply in bf16 (Option::bf16_arithmetic;\n"
    "            CPUs with AVX512_BF16, else no change)\n";

struct Args {
  std::string param, bin, input, output, blob, write_weights, image, labels;
  std::vector<int> size;
  std::vector<float> mean, norm;
  bool bgr = false;
  int top = 0;
  std::optional<std::uint64_t> seed;
  std::vector<int> shape;
  int threads = 1;
  bool print_plan = false;
  infer::graph::Target target;
  infer::Option opt;
};

template <class T>
bool parse_number(std::string_view s, T& v) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

/// A comma-separated list of numbers.
template <class T>
infer::Status parse_list(std::string_view option, std::string_view text, std::vector<T>& out) {
  out.clear();
  std::string_view s = text;
  while (true) {
    const std::size_t comma = s.find(',');
    T n{};
    if (!parse_number(s.substr(0, comma), n))
      return infer::make_error("{}: '{}' is not a comma-separated list of numbers", option, text);
    out.push_back(n);
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
  }
  return {};
}

infer::Result<Args> parse_args(int argc, char** argv) {
  Args a;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> infer::Result<std::string_view> {
      if (i + 1 >= argc) return infer::make_error("{} needs a value", arg);
      return std::string_view(argv[++i]);
    };
    if (arg == "--help" || arg == "-h") return infer::make_error("{}", kUsage);
    if (arg == "--print-plan") {
      a.print_plan = true;
    } else if (arg == "--bgr") {
      a.bgr = true;
    } else if (arg == "--size") {
      auto v = value();
      INFER_TRY(v);
      INFER_TRY(parse_list(arg, *v, a.size));
      if (a.size.size() != 2 || a.size[0] < 1 || a.size[1] < 1 || a.size[0] > infer::kMaxImageSide ||
          a.size[1] > infer::kMaxImageSide)
        return infer::make_error("--size: expected W,H (1..{} each), got '{}'",
                                 infer::kMaxImageSide, *v);
    } else if (arg == "--mean" || arg == "--norm") {
      auto v = value();
      INFER_TRY(v);
      std::vector<float>& dst = arg == "--mean" ? a.mean : a.norm;
      INFER_TRY(parse_list(arg, *v, dst));
      if (dst.size() != 1 && dst.size() != 3)
        return infer::make_error("{}: give one value or three (R,G,B), got '{}'", arg, *v);
      for (float f : dst)
        if (!std::isfinite(f)) return infer::make_error("{}: '{}' is not finite", arg, *v);
    } else if (arg == "--top") {
      auto v = value();
      INFER_TRY(v);
      if (!parse_number(*v, a.top) || a.top < 1)
        return infer::make_error("--top: expected a positive count, got '{}'", *v);
    } else if (arg == "--image" || arg == "--labels") {
      auto v = value();
      INFER_TRY(v);
      (arg == "--image" ? a.image : a.labels) = std::string(*v);
    } else if (arg == "--shape") {
      auto v = value();
      INFER_TRY(v);
      std::string_view s = *v;
      while (!s.empty()) {
        const std::size_t comma = s.find(',');
        int n = 0;
        if (!parse_number(s.substr(0, comma), n) || n <= 0)
          return infer::make_error("--shape: '{}' is not a list of positive integers", *v);
        a.shape.push_back(n);
        s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
      }
      if (a.shape.empty() || a.shape.size() > 3)
        return infer::make_error("--shape: give C,H,W, H,W or W, got '{}'", *v);
    } else if (arg == "--device" || arg == "--gpu-storage") {
      auto v = value();
      INFER_TRY(v);
      INFER_TRY(arg == "--device" ? infer::tools::parse_device(*v, a.target, a.opt)
                                  : infer::tools::parse_gpu_storage(*v, a.target));
    } else if (arg == "--bf16") {
      a.opt.bf16_arithmetic = true;
    } else if (arg == "--threads") {
      auto v = value();
      INFER_TRY(v);
      if (!parse_number(*v, a.threads) || a.threads < 1 || a.threads > 1024)
        return infer::make_error("--threads: expected 1..1024, got '{}'", *v);
    } else if (arg == "--random-weights") {
      auto v = value();
      INFER_TRY(v);
      std::uint64_t seed = 0;
      if (!parse_number(*v, seed))
        return infer::make_error("--random-weights: expected a seed, got '{}'", *v);
      a.seed = seed;
    } else if (arg == "--input" || arg == "--output" || arg == "--blob" ||
               arg == "--write-weights") {
      auto v = value();
      INFER_TRY(v);
      (arg == "--input"    ? a.input
       : arg == "--output" ? a.output
       : arg == "--blob"   ? a.blob
                           : a.write_weights) = std::string(*v);
    } else if (arg.starts_with("--")) {
      return infer::make_error("unknown option {}\n{}", arg, kUsage);
    } else {
      positional.emplace_back(arg);
    }
  }
  const std::size_t want = a.seed ? 1 : 2;
  if (positional.size() != want)
    return infer::make_error("expected {} ({} given)\n{}",
                             a.seed ? "MODEL.param" : "MODEL.param and MODEL.bin",
                             positional.size(), kUsage);
  a.param = positional[0];
  if (!a.seed) a.bin = positional[1];
  if (!a.write_weights.empty() && !a.seed)
    return infer::make_error("--write-weights goes with --random-weights");
  if (!a.image.empty() && !a.input.empty())
    return infer::make_error("give --image or --input, not both");
  if (a.image.empty() && (!a.size.empty() || !a.mean.empty() || !a.norm.empty() || a.bgr))
    return infer::make_error("--size, --mean, --norm and --bgr go with --image");
  if (!a.labels.empty() && a.top == 0) return infer::make_error("--labels goes with --top");
  return a;
}

infer::Status write_bytes(const std::string& path, const void* data, std::size_t bytes) {
  std::ofstream f(path, std::ios::binary);
  if (!f) return infer::make_error("{}: cannot open for writing", path);
  f.write(static_cast<const char*>(data), std::streamsize(bytes));
  if (!f) return infer::make_error("{}: write failed", path);
  return {};
}

/// Prints the k largest values of `blob` (f32, pack 1; all of it as one vector of class scores)
/// with their indices and, given a labels file, names.
infer::Status print_top(const infer::Mat& blob, int k, const std::string& labels_path) {
  std::vector<std::string> labels;
  if (!labels_path.empty()) {
    std::ifstream f(labels_path);
    if (!f) return infer::make_error("{}: cannot open the labels file", labels_path);
    for (std::string line; std::getline(f, line);) labels.push_back(line);
  }
  std::vector<float> v;
  const infer::Shape s = blob.shape();
  const std::size_t plane = std::size_t(s.w) * s.h * s.d;
  for (int c = 0; c < std::max(s.c, 1); ++c) {
    const float* p = s.dims >= 3 ? static_cast<const float*>(blob.channel_data(c))
                                 : blob.data_as<const float>();
    v.insert(v.end(), p, p + (s.dims >= 3 ? plane : std::size_t(s.w) * s.h));
  }
  std::vector<std::size_t> idx(v.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  const std::size_t n = std::min(idx.size(), std::size_t(k));
  std::partial_sort(idx.begin(), idx.begin() + std::ptrdiff_t(n), idx.end(),
                    [&](std::size_t x, std::size_t y) { return v[x] > v[y] || (v[x] == v[y] && x < y); });
  if (!labels.empty() && labels.size() != v.size())
    fmt::print(stderr, "infer-run: note: {} has {} labels for {} values\n", labels_path,
               labels.size(), v.size());
  fmt::print("top {} of {} values:\n", n, v.size());
  for (std::size_t i = 0; i < n; ++i)
    fmt::print("  {:2}. class {:5} {:10.6f}  {}\n", i + 1, idx[i], v[idx[i]],
               idx[i] < labels.size() ? labels[idx[i]] : std::string());
  return {};
}

infer::Status run(const Args& a) {
  infer::Option opt = a.opt;
  opt.num_threads = a.threads;
  infer::Net net(a.target, opt);
  INFER_TRY(net.load_param(std::filesystem::path(a.param)));
  for (const std::string& w : net.param().warnings) fmt::print(stderr, "infer-run: warning: {}\n", w);
  if (a.seed) {
    std::vector<std::byte> bin;
    INFER_TRY(net.load_random_weights(*a.seed, a.write_weights.empty() ? nullptr : &bin));
    if (!a.write_weights.empty()) INFER_TRY(write_bytes(a.write_weights, bin.data(), bin.size()));
  } else {
    INFER_TRY(net.load_model(std::filesystem::path(a.bin)));
  }
  if (net.input_names().size() != 1)
    return infer::make_error("{}: infer-run runs one-input networks; this one has {}", a.param,
                             net.input_names().size());

  infer::Shape shape = net.input_shape();
  if (a.shape.size() == 3) shape = infer::Shape::of(a.shape[2], a.shape[1], a.shape[0]);
  if (a.shape.size() == 2) shape = infer::Shape::of(a.shape[1], a.shape[0]);
  if (a.shape.size() == 1) shape = infer::Shape::of(a.shape[0]);
  if (shape.dims == 0)
    return infer::make_error("{}: the Input has no shape; give --shape", a.param);
  infer::Mat in;
  if (!a.image.empty()) {
    auto img = infer::io::read_image(a.image);
    INFER_TRY(img);
    // Channels: --shape's, else the Input's, else 3; the size: --size, else the Input's, else
    // the image's own.
    const int channels = a.shape.size() == 3 ? a.shape[0] : shape.dims == 3 ? shape.c : 3;
    if (channels != 1 && channels != 3)
      return infer::make_error("--image: the input has {} channels; an image gives 1 or 3",
                               channels);
    int w = img->w, h = img->h;
    if (!a.size.empty()) {
      w = a.size[0];
      h = a.size[1];
    } else if (shape.dims == 3) {
      w = shape.w;
      h = shape.h;
    }
    if (!a.shape.empty() && (a.shape.size() != 3 || a.shape[1] != h || a.shape[2] != w))
      return infer::make_error("--shape {} disagrees with the image input {},{},{} (--size W,H "
                               "sets it)",
                               fmt::join(a.shape, ","), channels, h, w);
    infer::ImageToMat how;
    how.to = channels == 1 ? infer::PixelFormat::gray
             : a.bgr       ? infer::PixelFormat::bgr
                           : infer::PixelFormat::rgb;
    how.width = w;
    how.height = h;
    for (int c = 0; c < 3; ++c) {
      if (!a.mean.empty()) how.mean[std::size_t(c)] = a.mean[a.mean.size() == 3 ? std::size_t(c) : 0];
      if (!a.norm.empty()) how.norm[std::size_t(c)] = a.norm[a.norm.size() == 3 ? std::size_t(c) : 0];
    }
    auto m = infer::image_to_mat(img->view(), how, opt);
    INFER_TRY(m);
    fmt::print("{}: {}x{} {} -> input {}x{}x{}\n", a.image, img->w, img->h,
               infer::to_string(img->format), channels, h, w);
    in = std::move(*m);
    shape = in.shape();
  } else {
    INFER_TRY(in.create(shape, infer::ElemType::f32, 1));
  }
  if (!a.image.empty()) {
    // the image is the input
  } else if (a.input.empty()) {
    in.fill(0.5f);
  } else {
    auto bytes = infer::io::read_file_bytes(a.input);
    INFER_TRY(bytes);
    const std::size_t want = shape.total() * sizeof(float);
    if (bytes->size() != want)
      return infer::make_error("{}: holds {} bytes; shape {}x{}x{} needs {} (f32)", a.input,
                               bytes->size(), shape.c, shape.h, shape.w, want);
    const std::size_t plane = std::size_t(shape.w) * shape.h * shape.d;
    for (int c = 0; c < shape.c; ++c)
      std::memcpy(in.channel(c).data(), bytes->data() + std::size_t(c) * plane * sizeof(float),
                  plane * sizeof(float));
  }

  const std::string_view blob = a.blob.empty() ? net.default_output() : std::string_view(a.blob);
  if (a.print_plan) {
    const infer::NamedMat named{net.input_names()[0], in};
    auto plan = net.plan(std::span<const infer::NamedMat>(&named, 1),
                         std::span<const std::string_view>(&blob, 1));
    INFER_TRY(plan);
    fmt::print("{}", infer::graph::format_plan(**plan));
  }
  auto out = net.run(in, blob);
  INFER_TRY(out);
  const infer::Shape s = out->shape();
  fmt::print("{}: dims {} c={} h={} w={}\n", blob, s.dims, s.c, s.h, s.w);
  if (a.top > 0) INFER_TRY(print_top(*out, a.top, a.labels));
  if (!a.output.empty()) {
    const std::size_t plane = std::size_t(s.w) * s.h * s.d;
    std::vector<float> values(plane * std::size_t(s.c));
    for (int c = 0; c < s.c; ++c)
      std::memcpy(values.data() + std::size_t(c) * plane, out->channel(c).data(),
                  plane * sizeof(float));
    INFER_TRY(write_bytes(a.output, values.data(), values.size() * sizeof(float)));
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  auto args = parse_args(argc, argv);
  if (!args.ok()) {
    fmt::print(stderr, "infer-run: {}\n", args.error().message);
    return 2;
  }
  const infer::Status st = run(*args);
  if (!st.ok()) {
    fmt::print(stderr, "infer-run: {}\n", st.message());
    return 1;
  }
  return 0;
}
