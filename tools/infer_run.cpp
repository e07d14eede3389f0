// infer-run: runs an ncnn model through infer::Net on a raw f32 input file and writes one blob.
//
//   infer-run MODEL.param MODEL.bin --shape C,H,W --input IN.f32 --output OUT.f32
//             [--blob NAME] [--threads N] [--print-plan]
//   infer-run MODEL.param --random-weights SEED [--write-weights OUT.bin] ...
//
// Files hold little-endian f32 values, channel-major (c, then h, then w), no header. The shape of
// the written blob goes to stdout.
#include <fmt/core.h>

#include <charconv>
#include <cstdio>
#include <fstream>
#include <infer/graph/print.hpp>
#include <infer/io/param.hpp>
#include <infer/net.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr const char* kUsage =
    "usage: infer-run MODEL.param (MODEL.bin | --random-weights SEED [--write-weights OUT.bin])\n"
    "                 [--shape C,H,W] [--input IN.f32] [--output OUT.f32] [--blob NAME]\n"
    "                 [--threads N] [--print-plan]\n"
    "  --shape   the input's shape, outermost first (C,H,W; H,W; or W); default: the Input line's\n"
    "  --input   raw little-endian f32 values, channel-major; default: all 0.5\n"
    "  --output  where to write the blob (raw f32, channel-major); default: not written\n"
    "  --blob    which blob to write; default: the last layer's first output\n";

struct Args {
  std::string param, bin, input, output, blob, write_weights;
  std::optional<std::uint64_t> seed;
  std::vector<int> shape;
  int threads = 1;
  bool print_plan = false;
};

template <class T>
bool parse_number(std::string_view s, T& v) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
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
  return a;
}

infer::Status write_bytes(const std::string& path, const void* data, std::size_t bytes) {
  std::ofstream f(path, std::ios::binary);
  if (!f) return infer::make_error("{}: cannot open for writing", path);
  f.write(static_cast<const char*>(data), std::streamsize(bytes));
  if (!f) return infer::make_error("{}: write failed", path);
  return {};
}

infer::Status run(const Args& a) {
  infer::Option opt;
  opt.num_threads = a.threads;
  infer::Net net({}, opt);
  INFER_TRY(net.load_param(std::filesystem::path(a.param)));
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
  INFER_TRY(in.create(shape, infer::ElemType::f32, 1));
  if (a.input.empty()) {
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
