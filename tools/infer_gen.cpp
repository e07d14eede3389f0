// infer-gen: writes the static graph of an ncnn model as a C++ header, so the network compiles
// with every decision (shapes, fusion, placement, conversions, memory plan) made by the compiler.
//
//   infer-gen MODEL.param -o MODEL.hpp [--namespace NS] [--output BLOB]... [--shape C,H,W]
//
// The header defines, in namespace NS (default infer_models::<model name>):
//   inline constexpr auto graph = infer::graph::make_graph(...);   // the network as a value
//   template <infer::graph::Target T = {}> using Network = infer::graph::StaticGraph<graph, T>;
// Weights load from the model's .bin in the .param's layer order: Network<>::load(ModelBin&).
#include <fmt/core.h>

#include <charconv>
#include <fstream>
#include <infer/io/cpp_source.hpp>
#include <infer/io/ncnn_layers.hpp>
#include <infer/io/param.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr const char* kUsage =
    "usage: infer-gen MODEL.param -o OUT.hpp [--namespace NS] [--output BLOB]... [--shape C,H,W]\n"
    "  --namespace  C++ namespace of the generated names (default infer_models::<model>)\n"
    "  --output     a blob the graph gives back (repeatable; default: the last layer's first "
    "output)\n"
    "  --shape      the input's shape (C,H,W; H,W; or W) where its Input line gives none\n";

/// A C++ string literal of `s`.
std::string literal(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F) {
      out += fmt::format("\\x{:02x}\"\"", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// `name` made into a C++ identifier.
std::string identifier(std::string_view name) {
  std::string out;
  for (const char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) != 0) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])) != 0) out = "m_" + out;
  return out;
}

std::string blob_list(const infer::io::ParamFile& f, const std::vector<int>& ids,
                      std::string_view many) {
  if (ids.size() == 1) return literal(f.blobs[std::size_t(ids[0])]);
  std::string s = fmt::format("infer::graph::{}(", many);
  for (std::size_t i = 0; i < ids.size(); ++i)
    s += (i ? ", " : "") + literal(f.blobs[std::size_t(ids[i])]);
  return s + ")";
}

infer::Result<std::string> generate(const infer::io::ParamFile& f, const std::string& ns,
                                    std::vector<std::string> outputs, infer::Shape given) {
  std::vector<std::string> parts, unsupported;
  std::string first_error;
  for (const infer::io::LayerSpec& spec : f.layers) {
    if (spec.type == "Input") {
      auto shape = infer::io::input_shape(f, spec);
      INFER_TRY(shape);
      if (shape->dims == 0) *shape = given;
      if (shape->dims == 0)
        return infer::make_error(
            "{}: line {}: Input '{}' gives no shape; a static graph needs one (--shape C,H,W)",
            f.source, spec.line, spec.name);
      parts.push_back(fmt::format("    infer::graph::input({}, infer::Shape{{{}, {}, {}, {}, {}}})",
                                  literal(f.blobs[std::size_t(spec.tops.at(0))]), shape->dims,
                                  shape->w, shape->h, shape->d, shape->c));
      continue;
    }
    if (!infer::io::is_supported_ncnn_type(spec.type)) {
      if (std::find(unsupported.begin(), unsupported.end(), spec.type) == unsupported.end())
        unsupported.push_back(spec.type);
      continue;
    }
    const infer::Status st = infer::io::visit_ncnn_layer(f, spec, [&](const auto& layer) {
      using L = std::remove_cvref_t<decltype(layer)>;
      infer::io::SourcePrinter printer;
      const std::string value = printer.trimmed(layer);
      if (!printer.error().empty())
        return infer::Status(infer::make_error("{}: line {}: layer {} '{}': {}", f.source,
                                               spec.line, spec.type, spec.name, printer.error()));
      parts.push_back(fmt::format(
          "    // line {}: {} {}\n    infer::graph::node(infer::layers::{}{}, {}, {}, {})",
          spec.line, spec.type, spec.name, infer::io::ncnn_type_name<L>, value,
          spec.bottoms.empty() ? std::string("infer::graph::from()")
                               : blob_list(f, spec.bottoms, "from"),
          blob_list(f, spec.tops, "to"), literal(spec.name)));
      return infer::Status();
    });
    if (!st.ok() && first_error.empty()) first_error = st.message();
  }
  if (!unsupported.empty()) {
    std::string list;
    for (const std::string& t : unsupported) list += (list.empty() ? "" : ", ") + t;
    return infer::make_error("{}: unsupported layer types: {}", f.source, list);
  }
  if (!first_error.empty()) return infer::make_error("{}", first_error);
  if (outputs.empty()) {
    const infer::io::LayerSpec& last = f.layers.back();
    if (last.tops.empty()) return infer::make_error("{}: the last layer has no output", f.source);
    outputs.push_back(f.blobs[std::size_t(last.tops[0])]);
  }
  for (const std::string& o : outputs) {
    if (std::find(f.blobs.begin(), f.blobs.end(), o) == f.blobs.end())
      return infer::make_error("{}: --output {}: no such blob", f.source, o);
    parts.push_back(fmt::format("    infer::graph::output({})", literal(o)));
  }

  std::string body;
  for (std::size_t i = 0; i < parts.size(); ++i)
    body += parts[i] + (i + 1 < parts.size() ? ",\n" : "");
  std::string names;
  for (std::size_t i = 0; i < outputs.size(); ++i) names += (i ? ", " : "") + literal(outputs[i]);
  return fmt::format(
      "// Generated by infer-gen from {}: the network as a static graph, every decision made by\n"
      "// the compiler. Do not edit; regenerate instead.\n"
      "#pragma once\n\n"
      "#include <infer/graph.hpp>\n"
      "#include <infer/layers.hpp>\n"
      "#include <string_view>\n\n"
      "namespace {} {{\n\n"
      "// Layers are written with their trailing default fields left out.\n"
      "#pragma GCC diagnostic push\n"
      "#pragma GCC diagnostic ignored \"-Wmissing-field-initializers\"\n"
      "// clang-format off\n"
      "inline constexpr auto graph = infer::graph::make_graph(\n{});\n"
      "// clang-format on\n"
      "#pragma GCC diagnostic pop\n\n"
      "/// The network composed at compile time for target T (default: f32, widest pack, fused).\n"
      "template <infer::graph::Target T = infer::graph::Target{{}}>\n"
      "using Network = infer::graph::StaticGraph<graph, T>;\n\n"
      "/// The blobs Network::output(i) gives, in order.\n"
      "inline constexpr std::string_view output_names[] = {{{}}};\n\n"
      "}}  // namespace {}\n",
      f.source, ns, body, names, ns);
}

}  // namespace

int main(int argc, char** argv) {
  std::string param, out, ns;
  std::vector<std::string> outputs;
  infer::Shape shape;  // dims 0: none given
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if ((arg == "-o" || arg == "--out") && has_value) {
      out = argv[++i];
    } else if (arg == "--namespace" && has_value) {
      ns = argv[++i];
    } else if (arg == "--output" && has_value) {
      outputs.emplace_back(argv[++i]);
    } else if (arg == "--shape" && has_value) {
      // Outermost first, as infer-run takes it.
      std::vector<int> e;
      std::string_view s = argv[++i];
      while (!s.empty()) {
        const std::size_t comma = s.find(',');
        const std::string_view part = s.substr(0, comma);
        int n = 0;
        const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), n);
        if (ec != std::errc() || end != part.data() + part.size() || n <= 0) {
          fmt::print(stderr, "infer-gen: --shape: '{}' is not a list of positive integers\n",
                     argv[i]);
          return 2;
        }
        e.push_back(n);
        s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
      }
      if (e.empty() || e.size() > 3) {
        fmt::print(stderr, "infer-gen: --shape: give C,H,W, H,W or W, got '{}'\n", argv[i]);
        return 2;
      }
      shape = e.size() == 1   ? infer::Shape::of(e[0])
              : e.size() == 2 ? infer::Shape::of(e[1], e[0])
                              : infer::Shape::of(e[2], e[1], e[0]);
    } else if (arg.starts_with("-") || !param.empty()) {
      fmt::print(stderr, "{}", kUsage);
      return 2;
    } else {
      param = arg;
    }
  }
  if (param.empty() || out.empty()) {
    fmt::print(stderr, "{}", kUsage);
    return 2;
  }
  auto file = infer::io::read_param(param);
  if (!file.ok()) {
    fmt::print(stderr, "infer-gen: {}\n", file.message());
    return 1;
  }
  for (const std::string& w : file->warnings) fmt::print(stderr, "infer-gen: warning: {}\n", w);
  if (ns.empty()) ns = "infer_models::" + identifier(std::filesystem::path(param).stem().string());
  auto text = generate(*file, ns, outputs, shape);
  if (!text.ok()) {
    fmt::print(stderr, "infer-gen: {}\n", text.message());
    return 1;
  }
  // Written only when it changes, so a build that regenerates it does not recompile users.
  std::string old;
  if (std::ifstream in(out, std::ios::binary); in)
    old.assign(std::istreambuf_iterator<char>(in), {});
  if (old != *text) {
    std::ofstream o(out, std::ios::binary);
    o << *text;
    if (!o) {
      fmt::print(stderr, "infer-gen: {}: cannot write\n", out);
      return 1;
    }
  }
  return 0;
}
