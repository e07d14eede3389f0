// Readers of ncnn's .param files, text and binary (.param.bin), into a ParamFile. Both validate
// strictly: counts are checked against the bytes actually present before anything is sized from
// them, every blob is produced exactly once before a layer reads it, and every error names the
// source, the line (text) or byte offset (binary), the layer when known, and what was expected
// against what was found. Untrusted input gives an Error, never a crash or a huge allocation
// (fuzz/fuzz_param.cpp checks this).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <infer/io/param_dict.hpp>
#include <infer/status.hpp>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace infer::io {

/// The first value of every .param file, as text or as a little-endian int32.
inline constexpr std::int32_t kParamMagic = 7767517;
/// The most layers or blobs a file may declare, and the most blobs one layer may name (ncnn's own
/// bound).
inline constexpr std::int64_t kMaxParamCount = 1'000'000;
/// The longest text line accepted, in bytes (real files stay far below; the bound keeps a garbage
/// file from being tokenized as one giant line).
inline constexpr std::size_t kMaxParamLineBytes = std::size_t{1} << 20;
/// The longest layer type, layer name or blob name (ncnn reads them into 256-byte buffers).
inline constexpr std::size_t kMaxParamNameBytes = 255;
/// A binary type index with this bit set names a custom layer registered by the application.
inline constexpr std::int32_t kNcnnCustomLayerBit = 1 << 8;
/// The binary form's terminator of a layer's parameter list.
inline constexpr std::int32_t kParamBinaryEnd = -233;
/// Array keys are written as kParamArrayKeyBase - key (-23300 - k).
inline constexpr std::int32_t kParamArrayKeyBase = -23300;

/// ncnn's built-in layer types by binary type index: the order of ncnn_add_layer() in ncnn's
/// src/CMakeLists.txt (disabled layers keep their slot).
// clang-format off
inline constexpr std::array<std::string_view, 99> kNcnnLayerTypes = {
    /*  0 */ "AbsVal", "ArgMax", "BatchNorm", "Bias", "BNLL", "Concat", "Convolution", "Crop",
             "Deconvolution", "Dropout",
    /* 10 */ "Eltwise", "ELU", "Embed", "Exp", "Flatten", "InnerProduct", "Input", "Log", "LRN",
             "MemoryData",
    /* 20 */ "MVN", "Pooling", "Power", "PReLU", "Proposal", "Reduction", "ReLU", "Reshape",
             "ROIPooling", "Scale",
    /* 30 */ "Sigmoid", "Slice", "Softmax", "Split", "SPP", "TanH", "Threshold", "Tile", "RNN",
             "LSTM",
    /* 40 */ "BinaryOp", "UnaryOp", "ConvolutionDepthWise", "Padding", "Squeeze", "ExpandDims",
             "Normalize", "Permute", "PriorBox", "DetectionOutput",
    /* 50 */ "Interp", "DeconvolutionDepthWise", "ShuffleChannel", "InstanceNorm", "Clip", "Reorg",
             "YoloDetectionOutput", "Quantize", "Dequantize", "Yolov3DetectionOutput",
    /* 60 */ "PSROIPooling", "ROIAlign", "Packing", "Requantize", "Cast", "HardSigmoid", "SELU",
             "HardSwish", "Noop", "PixelShuffle",
    /* 70 */ "DeepCopy", "Mish", "StatisticsPooling", "Swish", "Gemm", "GroupNorm", "LayerNorm",
             "Softplus", "GRU", "MultiHeadAttention",
    /* 80 */ "GELU", "Convolution1D", "Pooling1D", "ConvolutionDepthWise1D", "Convolution3D",
             "ConvolutionDepthWise3D", "Pooling3D", "MatMul", "Deconvolution1D",
             "DeconvolutionDepthWise1D",
    /* 90 */ "Deconvolution3D", "DeconvolutionDepthWise3D", "Einsum", "DeformableConv2D", "GLU",
             "Fold", "Unfold", "GridSample", "CumulativeSum",
};
// clang-format on

/// The built-in type name of a binary type index; empty when the index is not in the table.
constexpr std::string_view ncnn_layer_type_name(std::int32_t index) {
  if (index < 0 || std::size_t(index) >= kNcnnLayerTypes.size()) return {};
  return kNcnnLayerTypes[std::size_t(index)];
}

/// The binary type index of a built-in type name; -1 when it is not one.
constexpr std::int32_t ncnn_layer_type_index(std::string_view name) {
  for (std::size_t i = 0; i < kNcnnLayerTypes.size(); ++i)
    if (kNcnnLayerTypes[i] == name) return std::int32_t(i);
  return -1;
}

namespace detail::param {

/// Text whitespace between tokens ('\n' ends a line and is handled apart).
constexpr bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/// A token for an error message: at most 48 bytes, bytes outside printable ASCII as \xNN, so a
/// message about garbage input stays short and printable.
inline std::string shown(std::string_view s) {
  constexpr std::size_t kMax = 48;
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += char(c);
    } else {
      out += fmt::format("\\x{:02X}", unsigned(c));
    }
  }
  if (s.size() > kMax) out += "...";
  return out;
}

enum class NumberError { none, not_a_number, out_of_range, not_finite };

/// Whole-token int32 (decimal, optional sign; no locale, no exceptions).
inline NumberError parse_i32(std::string_view s, std::int32_t& out) {
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return NumberError::not_a_number;
  }
  if (s.empty()) return NumberError::not_a_number;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  if (ptr != end) return NumberError::not_a_number;
  if (ec == std::errc::result_out_of_range) return NumberError::out_of_range;
  if (ec != std::errc{}) return NumberError::not_a_number;
  return NumberError::none;
}

/// Whole-token finite float in ncnn's spellings (1.000000e-04, -1.0, 0.5, 6e0).
inline NumberError parse_f32(std::string_view s, float& out) {
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return NumberError::not_a_number;
  }
  if (s.empty()) return NumberError::not_a_number;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out, std::chars_format::general);
  if (ptr != end) return NumberError::not_a_number;
  if (ec == std::errc::result_out_of_range) return NumberError::out_of_range;
  if (ec != std::errc{}) return NumberError::not_a_number;
  if (!std::isfinite(out)) return NumberError::not_finite;  // from_chars reads "inf" and "nan"
  return NumberError::none;
}

/// What a NumberError means, for a message about token `s`.
inline std::string number_problem(NumberError e, std::string_view s, bool is_float) {
  switch (e) {
    case NumberError::out_of_range:
      return fmt::format("'{}' is out of the {} range", shown(s), is_float ? "float" : "int32");
    case NumberError::not_finite:
      return fmt::format("'{}' is not a finite number", shown(s));
    default:
      return fmt::format("'{}' is not a number", shown(s));
  }
}

/// Why `name` cannot be a layer or blob name; empty when it can.
inline std::string name_problem(std::string_view what, std::string_view name) {
  if (name.size() > kMaxParamNameBytes)
    return fmt::format("{} '{}' is {} bytes long, more than the {} allowed", what, shown(name),
                       name.size(), kMaxParamNameBytes);
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F)
      return fmt::format("{} '{}' contains the control byte \\x{:02X}", what, shown(name),
                         unsigned(u));
  }
  return {};
}

/// The reader of the text form. One pass over the lines; `file_` collects the result.
class TextReader {
 public:
  TextReader(std::string_view text, std::string source) : text_(text) {
    file_.source = std::move(source);
  }

  Result<ParamFile> run() {
    if (text_.empty()) return at(1, "empty input: expected the magic number 7767517 on line 1");
    // Line 1: the magic number alone. Its content is checked before its newline, so that a
    // binary or garbage file reads as a bad magic rather than as a truncated text file.
    std::string_view line;
    INFER_TRY(next_line(line));
    split(line);
    if (tokens_.size() != 1 || tokens_[0] != "7767517")
      return fail(fmt::format("bad magic: expected 7767517 alone on the line, got '{}'",
                              shown(trim(line))));
    INFER_TRY(terminated());
    // Line 2: layer and blob counts.
    if (!more()) return fail_next("end of input: expected 'layer_count blob_count' on line 2");
    INFER_TRY(next_line(line));
    split(line);
    if (tokens_.size() != 2)
      return fail(fmt::format("expected 'layer_count blob_count', got {} tokens: '{}'",
                              tokens_.size(), shown(trim(line))));
    std::int32_t layer_count = 0, blob_count = 0;
    INFER_TRY(header_count("layer count", tokens_[0], layer_count));
    INFER_TRY(header_count("blob count", tokens_[1], blob_count));
    INFER_TRY(terminated());
    // A layer line takes at least 8 bytes ("T n 0 0\n"): reserving more would trust the header.
    file_.layers.reserve(std::min<std::size_t>(std::size_t(layer_count), text_.size() / 8 + 1));

    // Layer lines; blank lines are skipped (ncnn's scanner skips all whitespace).
    bool found = false;
    while (file_.layers.size() < std::size_t(layer_count)) {
      INFER_TRY(next_nonblank(line, found));
      if (!found)
        return fail_next(
            fmt::format("end of input after {} layer lines, the header (line {}) "
                        "declares {} layers",
                        file_.layers.size(), kHeaderLine, layer_count));
      INFER_TRY(layer(line));
    }
    // ncnn reads the declared number of layers and ignores what follows (nanodet_m.param declares
    // 179 layers and holds a 180th, a Noop joining its outputs): the same here, said in a warning
    // naming the first ignored line. The lines are not parsed, so no error can come from them.
    INFER_TRY(ignored_lines(layer_count));
    if (file_.blobs.size() != std::size_t(blob_count))
      return at(kHeaderLine, fmt::format("the header declares {} blobs, the layer lines name {}",
                                         blob_count, file_.blobs.size()));
    return std::move(file_);
  }

 private:
  static constexpr int kHeaderLine = 2;

  static std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
  }

  bool more() const { return pos_ < text_.size(); }

  /// Counts the non-blank lines after the declared layers into a warning (none when there are
  /// none). Over-long lines are still errors: a garbage tail is not read as text.
  Status ignored_lines(std::int32_t layer_count) {
    int first = 0, count = 0;
    std::string first_text;
    bool found = false;
    for (;;) {
      std::string_view line;
      INFER_TRY(next_nonblank(line, found, false));
      if (!found) break;
      if (count++ == 0) {  // its first tokens, single-spaced
        first = line_no_;
        for (std::size_t k = 0; k < tokens_.size() && first_text.size() < 60; ++k)
          first_text = fmt::format("{}{}{}", first_text, k ? " " : "", shown(tokens_[k]));
        if (first_text.size() > 60) first_text = fmt::format("{}...", first_text.substr(0, 57));
      }
    }
    if (count > 0)
      file_.warnings.push_back(fmt::format(
          "{}: line {}: {} line{} after the {} layers the header (line {}) declares ignored, "
          "as ncnn ignores {} (first: '{}')",
          file_.source, first, count, count == 1 ? "" : "s", layer_count, kHeaderLine,
          count == 1 ? "it" : "them", first_text));
    return {};
  }


  /// The next physical line (without its '\n'); an Error when it is over-long. Call only while
  /// more().
  Status next_line(std::string_view& line) {
    current_type_ = current_name_ = {};
    const std::size_t nl = text_.find('\n', pos_);
    const std::size_t end = nl == std::string_view::npos ? text_.size() : nl;
    line = text_.substr(pos_, end - pos_);
    ++line_no_;
    line_offset_ = pos_;
    pos_ = nl == std::string_view::npos ? text_.size() : nl + 1;
    unterminated_ = nl == std::string_view::npos;
    if (line.size() > kMaxParamLineBytes)
      return fail(fmt::format("the line is {} bytes long, more than the {} allowed", line.size(),
                              kMaxParamLineBytes));
    return {};
  }

  /// An Error when the line just read is the last one and lacks its newline: the file was cut
  /// short, and without this check a file cut after any token could still read as a valid,
  /// shorter layer line.
  Status terminated() const {
    if (unterminated_) return fail("no newline at the end of the input: the file looks truncated");
    return {};
  }

  /// The next line holding a token (its tokens in tokens_); `found` is false at the end. With
  /// `whole`, a last line without its newline is an error (truncated); the ignored tail after the
  /// declared layers may lack it.
  Status next_nonblank(std::string_view& line, bool& found, bool whole = true) {
    found = false;
    while (more()) {
      INFER_TRY(next_line(line));
      split(line);
      if (!tokens_.empty()) {
        found = true;
        return whole ? terminated() : Status{};
      }
    }
    return {};
  }

  void split(std::string_view line) {
    tokens_.clear();
    std::size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && is_space(line[i])) ++i;
      const std::size_t start = i;
      while (i < line.size() && !is_space(line[i])) ++i;
      if (i > start) tokens_.push_back(line.substr(start, i - start));
    }
  }

  Status header_count(std::string_view what, std::string_view token, std::int32_t& out) {
    if (NumberError e = parse_i32(token, out); e != NumberError::none)
      return fail(fmt::format("{}: {}", what, number_problem(e, token, false)));
    if (out < 1) return fail(fmt::format("{} {} must be at least 1", what, out));
    if (out > kMaxParamCount)
      return fail(fmt::format("{} {} is absurd (at most {})", what, out, kMaxParamCount));
    return {};
  }

  Status layer(std::string_view line) {
    const std::vector<std::string_view>& t = tokens_;
    if (t.size() >= 1) current_type_ = t[0];
    if (t.size() >= 2) current_name_ = t[1];
    if (t.size() < 4)
      return fail(
          fmt::format("missing tokens: expected 'type name n_in n_out ...', got {} "
                      "tokens: '{}'",
                      t.size(), shown(trim(line))));
    LayerSpec spec;
    spec.line = line_no_;
    spec.offset = line_offset_;
    // The type: ncnn's names are identifiers.
    if (t[0].size() > kMaxParamNameBytes)
      return fail(fmt::format("layer type is {} bytes long, more than the {} allowed", t[0].size(),
                              kMaxParamNameBytes));
    for (std::size_t i = 0; i < t[0].size(); ++i) {
      const char c = t[0][i];
      const bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
      if (!(alpha || (i > 0 && c >= '0' && c <= '9')))
        return fail(fmt::format("layer type '{}' is not an identifier", shown(t[0])));
    }
    if (std::string p = name_problem("layer name", t[1]); !p.empty()) return fail(p);
    spec.type = std::string(t[0]);
    spec.name = std::string(t[1]);
    if (auto [it, fresh] = layer_lines_.try_emplace(spec.name, line_no_); !fresh)
      return fail(fmt::format("duplicate layer name (first used on line {})", it->second));

    std::int32_t n_in = 0, n_out = 0;
    INFER_TRY(blob_count("n_in", t[2], n_in));
    INFER_TRY(blob_count("n_out", t[3], n_out));
    const std::size_t names = std::size_t(n_in) + std::size_t(n_out);
    if (t.size() - 4 < names)
      return fail(
          fmt::format("missing tokens: n_in {} and n_out {} need {} blob names, the line "
                      "has {} more tokens",
                      n_in, n_out, names, t.size() - 4));
    spec.bottoms.reserve(std::size_t(n_in));
    spec.tops.reserve(std::size_t(n_out));
    for (std::size_t j = 0; j < names; ++j) {
      const std::string_view name = t[4 + j];
      const bool is_top = j >= std::size_t(n_in);
      // A '=' means the names ran out early and parameters began (blob names never hold one).
      if (name.find('=') != std::string_view::npos)
        return fail(
            fmt::format("expected {} blob name {} of {} (n_in {}, n_out {}), got the "
                        "parameter '{}'",
                        is_top ? "output" : "input", j + 1, names, n_in, n_out, shown(name)));
      if (std::string p = name_problem("blob name", name); !p.empty()) return fail(p);
      const std::string key(name);
      if (!is_top) {
        const auto it = blob_ids_.find(key);
        if (it == blob_ids_.end())
          return fail(fmt::format("missing blob '{}': no earlier layer produces it", shown(name)));
        spec.bottoms.push_back(it->second);
      } else {
        const int id = int(file_.blobs.size());
        if (auto [it, fresh] = blob_ids_.try_emplace(key, id); !fresh) {
          const auto producer = std::size_t(blob_producer_[std::size_t(it->second)]);
          const LayerSpec& first = producer < file_.layers.size() ? file_.layers[producer] : spec;
          return fail(fmt::format("blob '{}' is produced twice (first by layer {} '{}' on line {})",
                                  shown(name), first.type, shown(first.name), first.line));
        }
        file_.blobs.push_back(key);
        blob_producer_.push_back(int(file_.layers.size()));
        spec.tops.push_back(id);
      }
    }
    std::uint32_t seen = 0;
    for (std::size_t j = 4 + names; j < t.size(); ++j) INFER_TRY(param(t[j], spec.params, seen));
    file_.layers.push_back(std::move(spec));
    current_type_ = current_name_ = {};
    return {};
  }

  Status blob_count(std::string_view what, std::string_view token, std::int32_t& out) {
    if (NumberError e = parse_i32(token, out); e != NumberError::none)
      return fail(fmt::format("{}: {}", what, number_problem(e, token, false)));
    if (out < 0) return fail(fmt::format("{} {} is negative", what, out));
    if (out > kMaxParamCount)
      return fail(fmt::format("{} {} is absurd (at most {})", what, out, kMaxParamCount));
    return {};
  }

  /// One key=value token: k=v (scalar), k=v1,v2,... (array, newer files) or -23300-k=n,v1,...,vn.
  Status param(std::string_view token, ParamDict& dict, std::uint32_t& seen) {
    const std::size_t eq = token.find('=');
    if (eq == std::string_view::npos)
      return fail(fmt::format("expected key=value, got '{}'", shown(token)));
    const std::string_view key_text = token.substr(0, eq);
    const std::string_view value = token.substr(eq + 1);
    std::int32_t key = 0;
    if (parse_i32(key_text, key) != NumberError::none)
      return fail(fmt::format("key '{}' in '{}' is not a number", shown(key_text), shown(token)));
    bool counted_array = false;
    if (key <= kParamArrayKeyBase) {
      const std::int64_t k = std::int64_t(kParamArrayKeyBase) - key;
      if (k >= ParamDict::kMaxKeys)
        return fail(fmt::format("array key {} names key {}, outside 0..{}", key, k,
                                ParamDict::kMaxKeys - 1));
      key = std::int32_t(k);
      counted_array = true;
    } else if (!ParamDict::valid(key)) {
      return fail(fmt::format("key {} is outside 0..{} (arrays are written -23300-k)", key,
                              ParamDict::kMaxKeys - 1));
    }
    if (seen & (1u << key)) return fail(fmt::format("key {} is given twice", key));
    seen |= 1u << key;
    if (value.empty()) return fail(fmt::format("key {}: missing value after '='", key));

    const bool is_array = counted_array || value.find(',') != std::string_view::npos;
    if (!is_array) {
      ParamValue v;
      INFER_TRY(number(key, value, v));
      dict.set(key, v);
      return {};
    }
    std::vector<ParamValue> values;
    values.reserve(std::size_t(std::count(value.begin(), value.end(), ',')) + 1);
    std::size_t start = 0;
    std::int32_t declared = -1;
    for (bool first = true;; first = false) {
      const std::size_t comma = value.find(',', start);
      const std::string_view item = value.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      if (item.empty())
        return fail(fmt::format("key {}: empty array element in '{}'", key, shown(token)));
      if (counted_array && first) {
        if (NumberError e = parse_i32(item, declared); e != NumberError::none)
          return fail(fmt::format("key {}: array count {}", key, number_problem(e, item, false)));
        if (declared < 0)
          return fail(fmt::format("key {}: array count {} is negative", key, declared));
      } else {
        ParamValue v;
        INFER_TRY(number(key, item, v));
        values.push_back(v);
      }
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (counted_array && std::size_t(declared) != values.size())
      return fail(
          fmt::format("key {}: array count {} but {} values given", key, declared, values.size()));
    dict.set_array(key, std::move(values));
    return {};
  }

  /// A value is a float when it holds '.', 'e' or 'E' (ncnn's rule), else an int.
  Status number(std::int32_t key, std::string_view s, ParamValue& out) {
    const bool is_float = s.find_first_of(".eE") != std::string_view::npos;
    NumberError e;
    if (is_float) {
      float f = 0.f;
      e = parse_f32(s, f);
      out = ParamValue::of_float(f);
    } else {
      std::int32_t i = 0;
      e = parse_i32(s, i);
      out = ParamValue::of_int(i);
    }
    if (e != NumberError::none)
      return fail(fmt::format("key {}: value {}", key, number_problem(e, s, is_float)));
    return {};
  }

  Error fail(std::string_view what) const { return at(line_no_, what); }
  Error fail_next(std::string_view what) const { return at(line_no_ + 1, what); }
  Error at(int line, std::string_view what) const {
    if (!current_type_.empty() || !current_name_.empty())
      return make_error("{}: line {}: layer {} '{}': {}", file_.source, line, shown(current_type_),
                        shown(current_name_), what);
    return make_error("{}: line {}: {}", file_.source, line, what);
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_offset_ = 0;
  int line_no_ = 0;
  bool unterminated_ = false;  ///< the line just read ends the input without a newline
  std::vector<std::string_view> tokens_;
  std::string_view current_type_, current_name_;
  ParamFile file_;
  std::unordered_map<std::string, int> blob_ids_;
  std::vector<int> blob_producer_;  ///< layer index by blob id
  std::unordered_map<std::string, int> layer_lines_;
};

/// The reader of the binary form: little-endian int32 fields, read front to back.
class BinaryReader {
 public:
  BinaryReader(std::span<const std::byte> bytes, std::string source) : bytes_(bytes) {
    file_.source = std::move(source);
  }

  Result<ParamFile> run() {
    std::int32_t magic = 0, layer_count = 0, blob_count = 0;
    INFER_TRY(read(magic, "the magic number"));
    if (magic != kParamMagic)
      return fail(0, fmt::format("bad magic: expected {}, got {}", kParamMagic, magic));
    INFER_TRY(header_count(layer_count, "layer count"));
    INFER_TRY(header_count(blob_count, "blob count"));
    // Each layer record takes at least 16 bytes (type, n_in, n_out, -233) and each blob the 4
    // bytes of the top index that produces it: larger counts cannot be true, and are refused
    // before anything is sized from them.
    if (std::size_t(layer_count) > left() / 16)
      return fail(4, fmt::format("layer count {} is absurd: the {} bytes after the header hold at "
                                 "most {} layers",
                                 layer_count, left(), left() / 16));
    if (std::size_t(blob_count) > left() / 4)
      return fail(8, fmt::format("blob count {} is absurd: the {} bytes after the header hold at "
                                 "most {} blob indices",
                                 blob_count, left(), left() / 4));
    file_.layers.reserve(std::size_t(layer_count));  // bounded by the bytes left (header_count)
    producer_.assign(std::size_t(blob_count), -1);

    for (std::int32_t i = 0; i < layer_count; ++i) INFER_TRY(layer(i, blob_count));
    current_ = nullptr;
    // ncnn reads the declared layers and ignores any bytes after them: the same, with a warning.
    if (pos_ != bytes_.size())
      file_.warnings.push_back(
          fmt::format("{}: offset {}: {} bytes after the last of the {} layers the header "
                      "declares ignored, as ncnn ignores them",
                      file_.source, pos_, bytes_.size() - pos_, layer_count));
    const std::size_t produced = std::size_t(
        std::count_if(producer_.begin(), producer_.end(), [](int p) { return p >= 0; }));
    if (produced != std::size_t(blob_count))
      return fail(8, fmt::format("the header declares {} blobs, the layers produce {}", blob_count,
                                 produced));
    file_.blobs.reserve(std::size_t(blob_count));
    for (std::int32_t b = 0; b < blob_count; ++b) file_.blobs.push_back(fmt::format("blob{}", b));
    return std::move(file_);
  }

 private:
  std::size_t left() const { return bytes_.size() - pos_; }

  Status read(std::int32_t& out, std::string_view what) {
    if (left() < 4)
      return fail(pos_, fmt::format("unexpected end of input reading {} (needs 4 bytes, {} left)",
                                    what, left()));
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= std::uint32_t(bytes_[pos_ + std::size_t(k)]) << (8 * k);
    out = std::int32_t(v);
    pos_ += 4;
    return {};
  }

  /// A header count: positive and within ncnn's bound.
  Status header_count(std::int32_t& out, std::string_view what) {
    const std::size_t at = pos_;
    INFER_TRY(read(out, what));
    if (out < 1) return fail(at, fmt::format("{} {} must be at least 1", what, out));
    if (out > kMaxParamCount)
      return fail(at, fmt::format("{} {} is absurd (at most {})", what, out, kMaxParamCount));
    return {};
  }

  Status layer(std::int32_t index, std::int32_t blob_count) {
    LayerSpec spec;
    spec.offset = pos_;
    spec.name = fmt::format("layer{}", index);
    current_ = &spec;
    std::int32_t type = 0, n_in = 0, n_out = 0;
    const std::size_t type_at = pos_;
    INFER_TRY(read(type, "the layer type index"));
    if (type < 0) return fail(type_at, fmt::format("type index {} is negative", type));
    if (type & kNcnnCustomLayerBit)
      return fail(type_at, fmt::format("type index {} names custom layer {}, which this reader "
                                       "cannot resolve",
                                       type, type & ~kNcnnCustomLayerBit));
    spec.type = std::string(ncnn_layer_type_name(type));
    if (spec.type.empty())
      return fail(type_at, fmt::format("type index {} is not a built-in ncnn layer (0..{})", type,
                                       kNcnnLayerTypes.size() - 1));
    INFER_TRY(blob_list_count(n_in, "n_in"));
    INFER_TRY(blob_list_count(n_out, "n_out"));
    if (std::size_t(n_in) + std::size_t(n_out) > left() / 4)
      return fail(pos_,
                  fmt::format("n_in {} and n_out {} need {} bytes of blob indices, only {} "
                              "left",
                              n_in, n_out, (std::size_t(n_in) + std::size_t(n_out)) * 4, left()));
    spec.bottoms.reserve(std::size_t(n_in));
    spec.tops.reserve(std::size_t(n_out));
    for (std::int32_t j = 0; j < n_in + n_out; ++j) {
      const bool is_top = j >= n_in;
      const std::size_t at = pos_;
      std::int32_t b = 0;
      INFER_TRY(read(b, "a blob index"));
      if (b < 0 || b >= blob_count)
        return fail(at, fmt::format("{} blob index {} is outside 0..{} (the header's blob count "
                                    "is {})",
                                    is_top ? "output" : "input", b, blob_count - 1, blob_count));
      int& producer = producer_[std::size_t(b)];
      if (!is_top) {
        if (producer < 0)
          return fail(at, fmt::format("missing blob 'blob{}': no earlier layer produces it", b));
        spec.bottoms.push_back(b);
      } else {
        if (producer >= 0) {
          const LayerSpec& first = file_.layers.size() > std::size_t(producer)
                                       ? file_.layers[std::size_t(producer)]
                                       : spec;
          return fail(at, fmt::format("blob 'blob{}' is produced twice (first by layer {} '{}' at "
                                      "offset {})",
                                      b, first.type, first.name, first.offset));
        }
        producer = index;
        spec.tops.push_back(b);
      }
    }
    INFER_TRY(params(spec.params));
    file_.layers.push_back(std::move(spec));
    current_ = nullptr;
    return {};
  }

  Status blob_list_count(std::int32_t& out, std::string_view what) {
    const std::size_t at = pos_;
    INFER_TRY(read(out, what));
    if (out < 0) return fail(at, fmt::format("{} {} is negative", what, out));
    if (out > kMaxParamCount || std::size_t(out) > left() / 4)
      return fail(at, fmt::format("{} {} is absurd: {} bytes are left for blob indices", what, out,
                                  left()));
    return {};
  }

  Status params(ParamDict& dict) {
    std::uint32_t seen = 0;
    for (;;) {
      const std::size_t at = pos_;
      std::int32_t id = 0;
      INFER_TRY(read(id, "a parameter key or the end marker -233"));
      if (id == kParamBinaryEnd) return {};
      std::int32_t key = id;
      const bool is_array = id <= kParamArrayKeyBase;
      if (is_array) {
        const std::int64_t k = std::int64_t(kParamArrayKeyBase) - id;
        if (k >= ParamDict::kMaxKeys)
          return fail(at, fmt::format("array key {} names key {}, outside 0..{}", id, k,
                                      ParamDict::kMaxKeys - 1));
        key = std::int32_t(k);
      } else if (!ParamDict::valid(id)) {
        return fail(at, fmt::format("key {} is outside 0..{} (arrays are -23300-k; -233 ends the "
                                    "list)",
                                    id, ParamDict::kMaxKeys - 1));
      }
      if (seen & (1u << key)) return fail(at, fmt::format("key {} is given twice", key));
      seen |= 1u << key;
      if (!is_array) {
        std::int32_t raw = 0;
        INFER_TRY(read(raw, fmt::format("the value of key {}", key)));
        dict.set(key, ParamValue::of_raw(std::uint32_t(raw)));
        continue;
      }
      const std::size_t count_at = pos_;
      std::int32_t count = 0;
      INFER_TRY(read(count, fmt::format("the array count of key {}", key)));
      if (count < 0)
        return fail(count_at, fmt::format("key {}: array count {} is negative", key, count));
      if (std::size_t(count) > left() / 4)
        return fail(count_at, fmt::format("key {}: array count {} needs {} bytes, only {} left",
                                          key, count, std::size_t(count) * 4, left()));
      std::vector<ParamValue> values;
      values.reserve(std::size_t(count));
      for (std::int32_t j = 0; j < count; ++j) {
        std::int32_t raw = 0;
        INFER_TRY(read(raw, "an array value"));
        values.push_back(ParamValue::of_raw(std::uint32_t(raw)));
      }
      dict.set_array(key, std::move(values));
    }
  }

  Error fail(std::size_t offset, std::string_view what) const {
    if (current_)
      return make_error("{}: offset {}: layer {} '{}': {}", file_.source, offset,
                        current_->type.empty() ? std::string("?") : current_->type, current_->name,
                        what);
    return make_error("{}: offset {}: {}", file_.source, offset, what);
  }

  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
  ParamFile file_;
  const LayerSpec* current_ = nullptr;  ///< the layer being read, for messages
  std::vector<int> producer_;           ///< producing layer by blob id; -1 until produced
};

}  // namespace detail::param

/// Reads the text form of a .param file. `source` names it in errors. Every line ends with '\n',
/// the last one too (without it the file reads as truncated); blank lines, tabs and '\r' are
/// whitespace. A value holding '.', 'e' or 'E' is a float, any other an int; k=v1,v2,... and
/// -23300-k=n,v1,...,vn are arrays.
inline Result<ParamFile> parse_param_text(std::string_view text, std::string source = "<memory>") {
  return detail::param::TextReader(text, std::move(source)).run();
}

/// Reads the binary form (.param.bin). Layers are named "layer<N>" and blobs "blob<N>"; values are
/// kept as raw 4-byte patterns (ParamValue::raw_value), since the form does not say int or float.
inline Result<ParamFile> parse_param_binary(std::span<const std::byte> bytes,
                                            std::string source = "<memory>") {
  return detail::param::BinaryReader(bytes, std::move(source)).run();
}

/// The binary form of `file` (as ncnn's tools write it): layer types by their index in
/// kNcnnLayerTypes, blobs by id, each value as its 4-byte pattern (ints as int32, floats as f32).
/// Layer and blob names are not part of the form. Errors name a type without a built-in index.
inline Result<std::vector<std::byte>> to_param_binary(const ParamFile& file) {
  std::vector<std::byte> out;
  const auto put = [&out](std::int32_t v) {
    const auto u = std::uint32_t(v);
    for (int k = 0; k < 4; ++k) out.push_back(std::byte((u >> (8 * k)) & 0xFF));
  };
  const auto bits = [](const ParamValue& v) {
    return v.kind == ParamValue::float_value ? std::bit_cast<std::int32_t>(v.f) : v.i;
  };
  put(kParamMagic);
  put(std::int32_t(file.layers.size()));
  put(std::int32_t(file.blobs.size()));
  for (const LayerSpec& layer : file.layers) {
    const std::int32_t type = ncnn_layer_type_index(layer.type);
    if (type < 0)
      return make_error("{}: layer {} '{}': type {} has no built-in ncnn type index", file.source,
                        layer.type, layer.name, layer.type);
    put(type);
    put(std::int32_t(layer.bottoms.size()));
    put(std::int32_t(layer.tops.size()));
    for (int b : layer.bottoms) put(b);
    for (int t : layer.tops) put(t);
    for (int k = 0; k < ParamDict::kMaxKeys; ++k) {
      if (!layer.params.has(k)) continue;
      const ParamDict::Entry& e = layer.params.entry(k);
      if (!e.is_array) {
        put(k);
        put(bits(e.scalar));
        continue;
      }
      put(kParamArrayKeyBase - k);
      put(std::int32_t(e.array.size()));
      for (const ParamValue& v : e.array) put(bits(v));
    }
    put(kParamBinaryEnd);
  }
  return out;
}

/// A whole file's bytes (read in chunks, so a file whose size changes or a pipe reads correctly).
inline Result<std::vector<std::byte>> read_file_bytes(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return make_error("{}: is a directory, not a file", path.string());
  std::FILE* f = std::fopen(path.string().c_str(), "rb");
  if (!f) return make_error("{}: cannot open: {}", path.string(), std::strerror(errno));
  std::vector<std::byte> out;
  std::byte chunk[65536];
  for (;;) {
    const std::size_t n = std::fread(chunk, 1, sizeof chunk, f);
    out.insert(out.end(), chunk, chunk + n);
    if (n < sizeof chunk) break;
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return make_error("{}: read error", path.string());
  return out;
}

/// Reads a .param file, text or binary: a file starting with the magic as a little-endian int32
/// is binary (a text file starts with the digit '7'). Errors name the path.
inline Result<ParamFile> read_param(const std::filesystem::path& path) {
  Result<std::vector<std::byte>> bytes = read_file_bytes(path);
  if (!bytes) return bytes.error();
  const std::vector<std::byte>& b = bytes.value();
  constexpr auto m = std::uint32_t(kParamMagic);
  if (b.size() >= 4 && b[0] == std::byte(m & 0xFF) && b[1] == std::byte((m >> 8) & 0xFF) &&
      b[2] == std::byte((m >> 16) & 0xFF) && b[3] == std::byte(m >> 24))
    return parse_param_binary(b, path.string());
  return parse_param_text(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()),
                          path.string());
}

}  // namespace infer::io
