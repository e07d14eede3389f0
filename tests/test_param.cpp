// The .param readers: every model in models/ parses (text, and binary through to_param_binary)
// with concrete content checked; a hand-written binary file reads as its text twin; one case per
// error class, each checking that the message names the line or offset, the layer and the
// problem; ncnn's float spellings; truncation at every byte is an error; read_param's choice of
// form and its file errors.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <infer/io/param.hpp>
#include <string>
#include <string_view>
#include <vector>

#ifndef INFER_MODELS_DIR
#error "INFER_MODELS_DIR must name the models/ folder (tests/CMakeLists.txt defines it)"
#endif

using Catch::Matchers::Contains;
using infer::io::LayerSpec;
using infer::io::ParamDict;
using infer::io::ParamFile;
using infer::io::ParamValue;
using infer::io::parse_param_binary;
using infer::io::parse_param_text;

namespace {

const std::filesystem::path kModels = INFER_MODELS_DIR;

/// Little-endian int32 fields, written one by one as ncnn's tools do.
struct Bin {
  std::vector<std::byte> bytes;

  Bin& i32(std::initializer_list<std::int32_t> values) {
    for (std::int32_t v : values) {
      const auto u = std::uint32_t(v);
      for (int k = 0; k < 4; ++k) bytes.push_back(std::byte((u >> (8 * k)) & 0xFF));
    }
    return *this;
  }
  Bin& f32(std::initializer_list<float> values) {
    for (float v : values) i32({std::bit_cast<std::int32_t>(v)});
    return *this;
  }
};

ParamFile text_ok(std::string_view text) {
  auto r = parse_param_text(text, "t.param");
  INFO(text);
  if (!r) FAIL(r.message());
  return std::move(r).value();
}

std::string text_error(std::string_view text) {
  auto r = parse_param_text(text, "t.param");
  INFO(text);
  REQUIRE_FALSE(r.ok());
  return r.message();
}

std::string binary_error(const Bin& b) {
  auto r = parse_param_binary(b.bytes, "t.param.bin");
  REQUIRE_FALSE(r.ok());
  return r.message();
}

std::uint32_t bits(const ParamValue& v) {
  return v.kind == ParamValue::float_value ? std::bit_cast<std::uint32_t>(v.f) : std::uint32_t(v.i);
}

/// Two parses describe the same network: types, blob links and every value's 4 bytes (names are
/// compared only when `names`).
void require_same(const ParamFile& a, const ParamFile& b, bool names) {
  REQUIRE(a.layers.size() == b.layers.size());
  REQUIRE(a.blobs.size() == b.blobs.size());
  if (names) REQUIRE(a.blobs == b.blobs);
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    const LayerSpec& x = a.layers[i];
    const LayerSpec& y = b.layers[i];
    INFO("layer " << i << " " << x.type << " '" << x.name << "'");
    REQUIRE(x.type == y.type);
    if (names) REQUIRE(x.name == y.name);
    REQUIRE(x.bottoms == y.bottoms);
    REQUIRE(x.tops == y.tops);
    for (int k = 0; k < ParamDict::kMaxKeys; ++k) {
      INFO("key " << k);
      REQUIRE(x.params.has(k) == y.params.has(k));
      REQUIRE(x.params.is_array(k) == y.params.is_array(k));
      if (!x.params.has(k)) continue;
      const ParamDict::Entry& ex = x.params.entry(k);
      const ParamDict::Entry& ey = y.params.entry(k);
      if (!ex.is_array) REQUIRE(bits(ex.scalar) == bits(ey.scalar));
      REQUIRE(ex.array.size() == ey.array.size());
      for (std::size_t j = 0; j < ex.array.size(); ++j)
        REQUIRE(bits(ex.array[j]) == bits(ey.array[j]));
    }
  }
}

std::vector<std::filesystem::path> model_files() {
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::directory_iterator(kModels))
    if (entry.path().extension() == ".param") out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

int int_of(const LayerSpec& l, int key) {
  REQUIRE(l.params.has(key));
  REQUIRE_FALSE(l.params.is_array(key));
  REQUIRE(l.params.entry(key).scalar.kind == ParamValue::int_value);
  return l.params.entry(key).scalar.i;
}

std::vector<int> ints_of(const LayerSpec& l, int key) {
  REQUIRE(l.params.is_array(key));
  std::vector<int> out;
  for (const ParamValue& v : l.params.entry(key).array) {
    REQUIRE(v.kind == ParamValue::int_value);
    out.push_back(v.i);
  }
  return out;
}

// A small valid file and its binary twin, for the truncation tests.
constexpr std::string_view kSmallText =
    "7767517\n"
    "3 3\n"
    "Input layer0 0 1 blob0 0=4 1=4 2=1\n"
    "Convolution layer1 1 1 blob0 blob1 0=8 1=3 5=1 6=72 -23330=4,3,2,2,8\n"
    "Softmax layer2 1 1 blob1 blob2 0=0 1=1.5 -23303=2,0.5,-1.0\n";

Bin small_binary() {
  Bin b;
  b.i32({7767517, 3, 3});
  b.i32({16, 0, 1, 0}).i32({0, 4, 1, 4, 2, 1, -233});                                  // Input
  b.i32({6, 1, 1, 0, 1}).i32({0, 8, 1, 3, 5, 1, 6, 72, -23330, 4, 3, 2, 2, 8, -233});  // Conv
  b.i32({32, 1, 1, 1, 2}).i32({0, 0, 1}).f32({1.5f});                                  // Softmax
  b.i32({-23303, 2}).f32({0.5f, -1.f}).i32({-233});
  return b;
}

}  // namespace

// --- the models
// --------------------------------------------------------------------------------------

TEST_CASE("param: every model in models/ parses", "[io][param]") {
  const auto files = model_files();
  REQUIRE(files.size() >= 11);
  for (const auto& path : files) {
    INFO(path.string());
    auto r = infer::io::read_param(path);
    if (!r) FAIL(r.message());
    const ParamFile& f = r.value();
    CHECK(f.source == path.string());
    REQUIRE(!f.layers.empty());
    CHECK(f.layers.front().type == "Input");
    CHECK(f.layers.front().line == 3);
    // ncnn's shape hints, where a layer carries them (files converted without a shape, such as
    // FastestDet's and vision_transformer's, have none): key 30 as an int array, 4 (dims w h c)
    // or 5 values per output blob.
    for (const LayerSpec& l : f.layers) {
      INFO(l.type << " '" << l.name << "' line " << l.line);
      REQUIRE(!l.tops.empty());
      if (!l.params.has(30)) continue;
      const std::vector<int> hints = ints_of(l, 30);
      CHECK(hints.size() % l.tops.size() == 0);
    }
    // Only nanodet_m.param holds a line past its declared layers (a Noop joining its outputs).
    CHECK(f.warnings.size() == (path.stem() == "nanodet_m" ? 1u : 0u));
  }
}

TEST_CASE("param: resnet50 content", "[io][param]") {
  auto r = infer::io::read_param(kModels / "resnet50.param");
  REQUIRE(r.ok());
  const ParamFile& f = r.value();
  REQUIRE(f.layers.size() == 106);
  REQUIRE(f.blobs.size() == 122);
  CHECK(f.blobs[0] == "data");

  const LayerSpec& input = f.layers[0];
  CHECK(input.name == "data");
  CHECK(input.bottoms.empty());
  CHECK(input.tops == std::vector<int>{0});
  CHECK(int_of(input, 0) == 224);
  CHECK(int_of(input, 2) == 3);

  // Convolution conv1 1 1 data conv1_conv1_relu -23330=4,3,112,112,64 0=64 1=7 3=2 4=3 5=1
  // 6=9408 9=1
  const LayerSpec& conv = f.layers[1];
  CHECK(conv.type == "Convolution");
  CHECK(conv.name == "conv1");
  CHECK(conv.line == 4);
  CHECK(conv.bottoms == std::vector<int>{0});
  REQUIRE(conv.tops.size() == 1);
  CHECK(f.blobs[std::size_t(conv.tops[0])] == "conv1_conv1_relu");
  CHECK(int_of(conv, 0) == 64);
  CHECK(int_of(conv, 1) == 7);
  CHECK(int_of(conv, 3) == 2);
  CHECK(int_of(conv, 4) == 3);
  CHECK(int_of(conv, 5) == 1);
  CHECK(int_of(conv, 6) == 9408);
  CHECK(int_of(conv, 9) == 1);
  CHECK_FALSE(conv.params.has(2));
  CHECK(ints_of(conv, 30) == std::vector<int>{3, 112, 112, 64});

  // Split splitncnn_0 1 2 pool1 pool1_splitncnn_0 pool1_splitncnn_1: two tops, eight hints.
  const LayerSpec& split = f.layers[3];
  CHECK(split.type == "Split");
  CHECK(split.tops.size() == 2);
  CHECK(ints_of(split, 30) == std::vector<int>{3, 56, 56, 64, 3, 56, 56, 64});

  // Eltwise res2a reads two blobs produced earlier.
  const LayerSpec& add = f.layers[8];
  CHECK(add.type == "Eltwise");
  REQUIRE(add.bottoms.size() == 2);
  CHECK(f.blobs[std::size_t(add.bottoms[0])] == "res2a_branch1_scale2a_branch1");
  CHECK(f.blobs[std::size_t(add.bottoms[1])] == "res2a_branch2c_scale2a_branch2c");
}

TEST_CASE("param: floats and int arrays of the other models", "[io][param]") {
  auto alexnet = infer::io::read_param(kModels / "alexnet.param");
  REQUIRE(alexnet.ok());
  const LayerSpec& lrn = alexnet->layers[2];  // LRN norm1 ... 2=1.000000e-04
  REQUIRE(lrn.type == "LRN");
  REQUIRE(lrn.params.has(2));
  CHECK(lrn.params.entry(2).scalar.kind == ParamValue::float_value);
  CHECK(lrn.params.entry(2).scalar.f == 1.0e-4f);

  auto shufflenet = infer::io::read_param(kModels / "shufflenet_v2.param");
  REQUIRE(shufflenet.ok());
  // Slice slice2 ... -23300=2,58,-233: key 0 as an int array.
  const auto slice = std::find_if(shufflenet->layers.begin(), shufflenet->layers.end(),
                                  [](const LayerSpec& l) { return l.name == "slice2"; });
  REQUIRE(slice != shufflenet->layers.end());
  CHECK(slice->type == "Slice");
  CHECK(ints_of(*slice, 0) == std::vector<int>{58, -233});
}

TEST_CASE("param: every model survives the binary form", "[io][param]") {
  for (const auto& path : model_files()) {
    INFO(path.string());
    auto text = infer::io::read_param(path);
    REQUIRE(text.ok());
    auto bytes = infer::io::to_param_binary(text.value());
    if (!bytes) FAIL(bytes.message());
    auto bin = parse_param_binary(bytes.value(), "x.param.bin");
    if (!bin) FAIL(bin.message());
    require_same(text.value(), bin.value(), false);
    CHECK(bin->layers[1].name == "layer1");
    CHECK(bin->blobs[0] == "blob0");
    CHECK(bin->layers[1].offset > 12);
    CHECK(bin->layers[1].line == 0);
  }
}

TEST_CASE("param: a hand-written binary file reads as its text twin", "[io][param]") {
  const ParamFile text = text_ok(kSmallText);
  const Bin b = small_binary();
  auto bin = parse_param_binary(b.bytes, "small.param.bin");
  if (!bin) FAIL(bin.message());
  require_same(text, bin.value(), true);
  // The binary form keeps raw bits: the Softmax's 1=1.5 reads as a float through ParamReader.
  const LayerSpec& softmax = bin->layers[2];
  CHECK(softmax.type == "Softmax");
  CHECK(softmax.params.entry(1).scalar.kind == ParamValue::raw_value);
  CHECK(softmax.params.entry(1).scalar.f == 1.5f);
  CHECK(softmax.params.entry(3).array[1].f == -1.f);
  CHECK(bin->layers[1].params.entry(6).scalar.i == 72);
  CHECK(bin->layers[1].offset == 12 + 11 * 4);
  // to_param_binary writes exactly these bytes (keys in ascending order, as written here).
  auto again = infer::io::to_param_binary(text);
  REQUIRE(again.ok());
  CHECK(again.value() == b.bytes);
}

TEST_CASE("param: read_param chooses the form by content and names the path", "[io][param]") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("infer_test_param_" + std::to_string(std::uintptr_t(&kSmallText)));
  std::filesystem::create_directories(dir);
  const auto text_path = dir / "small.param";
  const auto bin_path = dir / "small.param.bin";
  const auto bad_path = dir / "bad.param";
  {
    std::ofstream(text_path, std::ios::binary) << kSmallText;
    const Bin b = small_binary();
    std::ofstream(bin_path, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.bytes.data()), std::streamsize(b.bytes.size()));
    std::ofstream(bad_path, std::ios::binary) << "7767517\n1 1\nInput in 0 1 x 0=abc\n";
  }
  auto t = infer::io::read_param(text_path);
  REQUIRE(t.ok());
  auto b = infer::io::read_param(bin_path);
  REQUIRE(b.ok());
  require_same(t.value(), b.value(), true);
  CHECK(b->layers[0].line == 0);
  CHECK(t->layers[0].line == 3);

  auto bad = infer::io::read_param(bad_path);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.message(), Contains(bad_path.string() + ": line 3: layer Input 'in'"));
  CHECK_THAT(bad.message(), Contains("'abc' is not a number"));

  auto missing = infer::io::read_param(dir / "nope.param");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.message(), Contains((dir / "nope.param").string()));
  CHECK_THAT(missing.message(), Contains("cannot open"));
  auto directory = infer::io::read_param(dir);
  REQUIRE_FALSE(directory.ok());
  CHECK_THAT(directory.message(), Contains("is a directory"));

  std::filesystem::remove_all(dir);
}

// --- values
// ------------------------------------------------------------------------------------------

TEST_CASE("param: ncnn's number spellings", "[io][param]") {
  const ParamFile f = text_ok(
      "7767517\n1 1\n"
      "Input in 0 1 x 0=1.000000e-04 1=-1.0 2=0.5 3=6e0 4=+2 5=-7 6=.25 7=1.5E+2 8=2147483647 "
      "9=-2147483648 10=0 11=-0.0 12=3.402823e+38\n");
  const ParamDict& p = f.layers[0].params;
  const auto f_of = [&](int k) {
    REQUIRE(p.entry(k).scalar.kind == ParamValue::float_value);
    return p.entry(k).scalar.f;
  };
  const auto i_of = [&](int k) {
    REQUIRE(p.entry(k).scalar.kind == ParamValue::int_value);
    return p.entry(k).scalar.i;
  };
  CHECK(f_of(0) == 1.0e-4f);
  CHECK(f_of(1) == -1.f);
  CHECK(f_of(2) == 0.5f);
  CHECK(f_of(3) == 6.f);
  CHECK(i_of(4) == 2);
  CHECK(i_of(5) == -7);
  CHECK(f_of(6) == 0.25f);
  CHECK(f_of(7) == 150.f);
  CHECK(i_of(8) == 2147483647);
  CHECK(i_of(9) == -2147483647 - 1);
  CHECK(i_of(10) == 0);
  CHECK(f_of(11) == 0.f);
  CHECK(std::signbit(f_of(11)));
  CHECK(f_of(12) == 3.402823e+38f);

  // Arrays: the counted form, the newer plain form, an empty array, mixed spellings.
  const ParamFile a =
      text_ok("7767517\n1 1\nInput in 0 1 x -23300=3,1,2,3 1=4,5.5 -23302=0 3=-1,2e1\n");
  const ParamDict& q = a.layers[0].params;
  REQUIRE(q.is_array(0));
  CHECK(q.entry(0).array.size() == 3);
  CHECK(q.entry(0).array[2].i == 3);
  REQUIRE(q.is_array(1));
  CHECK(q.entry(1).array[0].kind == ParamValue::int_value);
  CHECK(q.entry(1).array[1].kind == ParamValue::float_value);
  CHECK(q.entry(1).array[1].f == 5.5f);
  REQUIRE(q.is_array(2));
  CHECK(q.entry(2).array.empty());
  CHECK(q.entry(3).array[1].f == 20.f);

  // Tabs, CRLF line ends and blank lines between layer lines are whitespace.
  const ParamFile w = text_ok("7767517\r\n2\t2\r\n\r\nInput\tin 0 1 x\r\n\nReLU r 1 1 x y\r\n\n");
  CHECK(w.layers.size() == 2);
  CHECK(w.layers[1].line == 6);
}

TEST_CASE("param error: values that are not numbers", "[io][param][error]") {
  const auto check = [](std::string_view param, std::string_view problem) {
    const std::string text =
        "7767517\n2 2\nInput in 0 1 x\nReLU relu1 1 1 x y " + std::string(param) + "\n";
    const std::string msg = text_error(text);
    INFO(msg);
    CHECK_THAT(msg, Contains("t.param: line 4: layer ReLU 'relu1'"));
    CHECK_THAT(msg, Contains(std::string(problem)));
  };
  check("0=abc", "key 0: value 'abc' is not a number");
  check("0=1.5x", "'1.5x' is not a number");
  check("0=12abc", "'12abc' is not a number");
  check("0=0x10", "'0x10' is not a number");
  check("0=inf", "'inf' is not a number");
  check("0=nan", "'nan' is not a number");
  check("0=-nan(e)", "'-nan(e)' is not a finite number");
  check("0=1e", "'1e' is not a number");
  check("0=+-1", "'+-1' is not a number");
  check("0=hello", "'hello' is not a number");  // newer ncnn's string values are refused
  check("0=99999999999", "'99999999999' is out of the int32 range");
  check("0=1e39", "'1e39' is out of the float range");
  check("0=", "key 0: missing value");
  check("0=1,,2", "key 0: empty array element");
  check("-23300=2,1,x", "key 0: value 'x' is not a number");
  check("-23300=a,1", "key 0: array count 'a' is not a number");
  check("x=1", "key 'x' in 'x=1' is not a number");
  check("abc", "expected key=value, got 'abc'");
}

TEST_CASE("param error: keys outside 0..31", "[io][param][error]") {
  const auto check = [](std::string_view param, std::string_view problem) {
    const std::string msg = text_error("7767517\n1 1\nInput in 0 1 x " + std::string(param) + "\n");
    INFO(msg);
    CHECK_THAT(msg, Contains("t.param: line 3: layer Input 'in'"));
    CHECK_THAT(msg, Contains(std::string(problem)));
  };
  check("32=1", "key 32 is outside 0..31");
  check("-1=1", "key -1 is outside 0..31");
  check("-23299=1", "key -23299 is outside 0..31");
  check("-23332=0", "array key -23332 names key 32, outside 0..31");
  check("-2147483648=1", "array key -2147483648 names key 2147460348");
  check("1=1 1=2", "key 1 is given twice");
  check("30=1 -23330=1,1", "key 30 is given twice");

  Bin b;
  b.i32({7767517, 1, 1, 16, 0, 1, 0, 32, 5, -233});
  std::string msg = binary_error(b);
  CHECK_THAT(msg,
             Contains("t.param.bin: offset 28: layer Input 'layer0': key 32 is outside 0..31"));
  Bin c;
  c.i32({7767517, 1, 1, 16, 0, 1, 0, -23340, 0, -233});
  msg = binary_error(c);
  CHECK_THAT(msg, Contains("offset 28: layer Input 'layer0': array key -23340 names key 40"));
  Bin d;
  d.i32({7767517, 1, 1, 16, 0, 1, 0, 3, 5, 3, 6, -233});
  CHECK_THAT(binary_error(d), Contains("offset 36: layer Input 'layer0': key 3 is given twice"));
}

TEST_CASE("param error: array counts that do not match the values", "[io][param][error]") {
  std::string msg = text_error("7767517\n1 1\nInput in 0 1 x -23330=4,3,224,224\n");
  CHECK_THAT(msg, Contains("line 3: layer Input 'in': key 30: array count 4 but 3 values given"));
  msg = text_error("7767517\n1 1\nInput in 0 1 x -23330=1,3,224\n");
  CHECK_THAT(msg, Contains("key 30: array count 1 but 2 values given"));
  msg = text_error("7767517\n1 1\nInput in 0 1 x -23330=-1\n");
  CHECK_THAT(msg, Contains("key 30: array count -1 is negative"));

  // Binary: a count larger than the bytes left is refused before anything is allocated.
  Bin b;
  b.i32({7767517, 1, 1, 16, 0, 1, 0, -23330, 1000000000, 1, 2, -233});
  msg = binary_error(b);
  CHECK_THAT(msg, Contains("offset 32: layer Input 'layer0': key 30: array count 1000000000 needs "
                           "4000000000 bytes, only 12 left"));
  Bin c;
  c.i32({7767517, 1, 1, 16, 0, 1, 0, -23330, -5, -233});
  CHECK_THAT(binary_error(c), Contains("offset 32: layer Input 'layer0': key 30: array count -5 "
                                       "is negative"));
}

// --- structure
// ---------------------------------------------------------------------------------------

TEST_CASE("param error: bad magic", "[io][param][error]") {
  CHECK_THAT(text_error("7767518\n1 1\nInput in 0 1 x\n"),
             Contains("t.param: line 1: bad magic: expected 7767517 alone on the line, got "
                      "'7767518'"));
  CHECK_THAT(text_error("7767517 3\n1 1\n"), Contains("line 1: bad magic"));
  CHECK_THAT(text_error("\x01\x02garbage"), Contains("line 1: bad magic: expected 7767517 alone on "
                                                     "the line, got '\\x01\\x02garbage'"));
  CHECK_THAT(text_error(""), Contains("t.param: line 1: empty input"));
  CHECK_THAT(binary_error(Bin{}.i32({7767516, 1, 1})),
             Contains("t.param.bin: offset 0: bad magic: expected 7767517, got 7767516"));
  CHECK_THAT(binary_error(Bin{}), Contains("offset 0: unexpected end of input reading the magic"));
}

TEST_CASE("param error: header counts", "[io][param][error]") {
  CHECK_THAT(text_error("7767517\nx 1\n"), Contains("line 2: layer count: 'x' is not a number"));
  CHECK_THAT(text_error("7767517\n1 1.5\n"), Contains("line 2: blob count: '1.5' is not a number"));
  CHECK_THAT(text_error("7767517\n-1 1\n"), Contains("line 2: layer count -1 must be at least 1"));
  CHECK_THAT(text_error("7767517\n1 0\n"), Contains("line 2: blob count 0 must be at least 1"));
  CHECK_THAT(text_error("7767517\n2000000 1\n"),
             Contains("line 2: layer count 2000000 is absurd (at most 1000000)"));
  CHECK_THAT(text_error("7767517\n1 99999999999\n"),
             Contains("line 2: blob count: '99999999999' is out of the int32 range"));
  CHECK_THAT(text_error("7767517\n1\n"),
             Contains("line 2: expected 'layer_count blob_count', got 1 tokens"));
  CHECK_THAT(text_error("7767517\n"), Contains("line 2: end of input: expected 'layer_count"));
  // A large count that the text cannot hold fails at its end, after no allocation from it.
  CHECK_THAT(text_error("7767517\n1000000 1\nInput in 0 1 x\n"),
             Contains("line 4: end of input after 1 layer lines, the header (line 2) declares "
                      "1000000 layers"));

  CHECK_THAT(binary_error(Bin{}.i32({7767517, 0, 1})),
             Contains("offset 4: layer count 0 must be at least 1"));
  CHECK_THAT(binary_error(Bin{}.i32({7767517, 1, -3})),
             Contains("offset 8: blob count -3 must be at least 1"));
  CHECK_THAT(binary_error(Bin{}.i32({7767517, 1000001, 1})),
             Contains("offset 4: layer count 1000001 is absurd (at most 1000000)"));
  // Within ncnn's bound but more than the bytes can hold: refused before reserving.
  CHECK_THAT(binary_error(Bin{}.i32({7767517, 900000, 1, 16, 0, 1, 0, -233})),
             Contains("offset 4: layer count 900000 is absurd: the 20 bytes after the header hold "
                      "at most 1 layers"));
  CHECK_THAT(binary_error(Bin{}.i32({7767517, 1, 900000, 16, 0, 1, 0, -233})),
             Contains("offset 8: blob count 900000 is absurd: the 20 bytes after the header hold "
                      "at most 5 blob indices"));
}

TEST_CASE("param error: fewer or more layers than declared", "[io][param][error]") {
  CHECK_THAT(text_error("7767517\n3 2\nInput in 0 1 x\nReLU r 1 1 x y\n"),
             Contains("t.param: line 5: end of input after 2 layer lines, the header (line 2) "
                      "declares 3 layers"));

  Bin fewer;
  fewer.i32({7767517, 2, 2, 16, 0, 1, 0, -233, 26, 1, 1, 0, 1});
  CHECK_THAT(binary_error(fewer), Contains("offset 52: layer ReLU 'layer1': unexpected end of "
                                           "input reading a parameter key or the end marker"));
}

// ncnn reads the declared layers and ignores what follows (nanodet_m.param holds one layer line
// more than its header declares): infer loads the same layers and says what it ignored.
TEST_CASE("param: lines or bytes after the declared layers are ignored with a warning",
          "[io][param]") {
  auto text = parse_param_text(
      "7767517\n1 1\nInput in 0 1 x\n\nNoop out 1 1 x y\ngarbage ###\n", "t.param");
  REQUIRE(text.ok());
  CHECK(text->layers.size() == 1);
  CHECK(text->blobs.size() == 1);
  REQUIRE(text->warnings.size() == 1);
  CHECK(text->warnings[0] ==
        "t.param: line 5: 2 lines after the 1 layers the header (line 2) declares ignored, as "
        "ncnn ignores them (first: 'Noop out 1 1 x y')");
  // Without a tail there is no warning; a short file is still an error (above), and so is a
  // blob count the declared layers do not produce.
  auto exact = parse_param_text("7767517\n1 1\nInput in 0 1 x\n", "t.param");
  REQUIRE(exact.ok());
  CHECK(exact->warnings.empty());
  CHECK_THAT(text_error("7767517\n1 2\nInput in 0 1 x\nReLU r 1 1 x y\n"),
             Contains("the header declares 2 blobs, the layer lines name 1"));

  Bin more;
  more.i32({7767517, 1, 1, 16, 0, 1, 0, -233, 26});
  auto binary = parse_param_binary(more.bytes, "t.param.bin");
  REQUIRE(binary.ok());
  CHECK(binary->layers.size() == 1);
  REQUIRE(binary->warnings.size() == 1);
  CHECK(binary->warnings[0] ==
        "t.param.bin: offset 32: 4 bytes after the last of the 1 layers the header declares "
        "ignored, as ncnn ignores them");
}

TEST_CASE("param error: layer lines with missing tokens", "[io][param][error]") {
  CHECK_THAT(text_error("7767517\n2 2\nInput in 0 1 x\nReLU relu1 1\n"),
             Contains("line 4: layer ReLU 'relu1': missing tokens: expected 'type name n_in n_out "
                      "...', got 3 tokens"));
  CHECK_THAT(text_error("7767517\n2 2\nInput in 0 1 x\nReLU\n"),
             Contains("line 4: layer ReLU '': missing tokens"));
  CHECK_THAT(text_error("7767517\n2 2\nInput in 0 1 x\nConcat c 2 1 x\n"),
             Contains("line 4: layer Concat 'c': missing tokens: n_in 2 and n_out 1 need 3 blob "
                      "names, the line has 1 more tokens"));
  CHECK_THAT(text_error("7767517\n2 2\nInput in 0 1 x\nReLU r 1 1 x 0=1\n"),
             Contains("line 4: layer ReLU 'r': expected output blob name 2 of 2 (n_in 1, n_out 1), "
                      "got the parameter '0=1'"));
  CHECK_THAT(text_error("7767517\n1 1\nIn-put in 0 1 x\n"),
             Contains("line 3: layer In-put 'in': layer type 'In-put' is not an identifier"));
}

TEST_CASE("param error: negative or absurd n_in / n_out", "[io][param][error]") {
  CHECK_THAT(text_error("7767517\n2 2\nInput in 0 1 x\nReLU r -1 1 y\n"),
             Contains("line 4: layer ReLU 'r': n_in -1 is negative"));
  CHECK_THAT(text_error("7767517\n2 2\nInput in 0 1 x\nReLU r 1 x x y\n"),
             Contains("line 4: layer ReLU 'r': n_out: 'x' is not a number"));
  CHECK_THAT(text_error("7767517\n2 2\nInput in 0 1 x\nReLU r 1 5000000 x y\n"),
             Contains("line 4: layer ReLU 'r': n_out 5000000 is absurd (at most 1000000)"));

  Bin neg;
  neg.i32({7767517, 1, 1, 16, -1, 1, 0, -233});
  CHECK_THAT(binary_error(neg), Contains("offset 16: layer Input 'layer0': n_in -1 is negative"));
  Bin huge;
  huge.i32({7767517, 1, 1, 16, 0, 2000000000, 0, -233});
  CHECK_THAT(binary_error(huge), Contains("offset 20: layer Input 'layer0': n_out 2000000000 is "
                                          "absurd: 8 bytes are left for blob indices"));
}

TEST_CASE("param error: binary type indices", "[io][param][error]") {
  Bin custom;
  custom.i32({7767517, 1, 1, 256 + 3, 0, 1, 0, -233});
  CHECK_THAT(binary_error(custom), Contains("offset 12: layer ? 'layer0': type index 259 names "
                                            "custom layer 3"));
  Bin unknown;
  unknown.i32({7767517, 1, 1, 200, 0, 1, 0, -233});
  CHECK_THAT(binary_error(unknown),
             Contains("offset 12: layer ? 'layer0': type index 200 is not a built-in ncnn layer "
                      "(0..98)"));
  Bin negative;
  negative.i32({7767517, 1, 1, -4, 0, 1, 0, -233});
  CHECK_THAT(binary_error(negative), Contains("type index -4 is negative"));

  STATIC_REQUIRE(infer::io::ncnn_layer_type_index("Convolution") == 6);
  STATIC_REQUIRE(infer::io::ncnn_layer_type_index("Input") == 16);
  STATIC_REQUIRE(infer::io::ncnn_layer_type_index("ConvolutionDepthWise") == 42);
  STATIC_REQUIRE(infer::io::ncnn_layer_type_index("CumulativeSum") == 98);
  STATIC_REQUIRE(infer::io::ncnn_layer_type_index("Nope") == -1);
  STATIC_REQUIRE(infer::io::ncnn_layer_type_name(26) == "ReLU");
  STATIC_REQUIRE(infer::io::ncnn_layer_type_name(99).empty());

  // to_param_binary cannot write a type without an index.
  const ParamFile f = text_ok("7767517\n1 1\nMyLayer in 0 1 x\n");
  auto bytes = infer::io::to_param_binary(f);
  REQUIRE_FALSE(bytes.ok());
  CHECK_THAT(bytes.message(), Contains("layer MyLayer 'in': type MyLayer has no built-in"));
}

// --- blobs and names
// ---------------------------------------------------------------------------------

TEST_CASE("param error: a blob produced twice", "[io][param][error]") {
  CHECK_THAT(text_error("7767517\n3 2\nInput in 0 1 x\nReLU r 1 1 x y\nReLU r2 1 1 x y\n"),
             Contains("line 5: layer ReLU 'r2': blob 'y' is produced twice (first by layer ReLU "
                      "'r' on line 4)"));
  CHECK_THAT(text_error("7767517\n1 1\nInput in 0 2 x x\n"),
             Contains("line 3: layer Input 'in': blob 'x' is produced twice (first by layer Input "
                      "'in' on line 3)"));
  CHECK_THAT(text_error("7767517\n2 1\nInput in 0 1 x\nReLU r 1 1 x x\n"),
             Contains("line 4: layer ReLU 'r': blob 'x' is produced twice"));

  Bin b;
  b.i32({7767517, 2, 2, 16, 0, 1, 0, -233, 26, 1, 1, 0, 0, -233});
  CHECK_THAT(binary_error(b), Contains("offset 48: layer ReLU 'layer1': blob 'blob0' is produced "
                                       "twice (first by layer Input 'layer0' at offset 12)"));
  Bin self;
  self.i32({7767517, 1, 1, 16, 0, 2, 0, 0, -233});
  CHECK_THAT(binary_error(self), Contains("offset 28: layer Input 'layer0': blob 'blob0' is "
                                          "produced twice (first by layer Input 'layer0'"));
}

TEST_CASE("param error: a layer reading a blob no earlier layer produced", "[io][param][error]") {
  CHECK_THAT(text_error("7767517\n2 2\nInput in 0 1 x\nReLU r 1 1 z y\n"),
             Contains("line 4: layer ReLU 'r': missing blob 'z': no earlier layer produces it"));
  // Produced later is still missing: layers run in file order.
  CHECK_THAT(text_error("7767517\n3 3\nInput in 0 1 x\nReLU r 1 1 y z\nReLU s 1 1 x y\n"),
             Contains("line 4: layer ReLU 'r': missing blob 'y'"));

  Bin b;
  b.i32({7767517, 2, 2, 16, 0, 1, 0, -233, 26, 1, 1, 1, 0, -233});
  CHECK_THAT(binary_error(b), Contains("offset 44: layer ReLU 'layer1': missing blob 'blob1': no "
                                       "earlier layer produces it"));
  Bin range;
  range.i32({7767517, 2, 2, 16, 0, 1, 0, -233, 26, 1, 1, 7, 1, -233});
  CHECK_THAT(binary_error(range), Contains("offset 44: layer ReLU 'layer1': input blob index 7 is "
                                           "outside 0..1 (the header's blob count is 2)"));
}

TEST_CASE("param error: blob count not matching the blobs named", "[io][param][error]") {
  CHECK_THAT(text_error("7767517\n2 3\nInput in 0 1 x\nReLU r 1 1 x y\n"),
             Contains("t.param: line 2: the header declares 3 blobs, the layer lines name 2"));
  CHECK_THAT(text_error("7767517\n2 1\nInput in 0 1 x\nReLU r 1 1 x y\n"),
             Contains("line 2: the header declares 1 blobs, the layer lines name 2"));
  Bin b;
  b.i32({7767517, 1, 3, 16, 0, 1, 0, -233});
  CHECK_THAT(binary_error(b),
             Contains("offset 8: the header declares 3 blobs, the layers produce 1"));
}

TEST_CASE("param error: duplicate layer names", "[io][param][error]") {
  CHECK_THAT(text_error("7767517\n2 2\nInput in 0 1 x\nReLU in 1 1 x y\n"),
             Contains("line 4: layer ReLU 'in': duplicate layer name (first used on line 3)"));
}

TEST_CASE("param error: over-long lines and names", "[io][param][error]") {
  const std::string long_name(300, 'n');
  std::string msg = text_error("7767517\n1 1\nInput " + long_name + " 0 1 x\n");
  // fmt::format, not operator+: GCC 12 -O3 reports a false -Warray-bounds in the inlined
  // concatenation on some -march=native targets.
  CHECK_THAT(msg, Contains(fmt::format("line 3: layer Input '{}...': layer name '",
                                       std::string(48, 'n'))));
  CHECK_THAT(msg, Contains("is 300 bytes long, more than the 255 allowed"));
  msg = text_error("7767517\n1 1\nInput in 0 1 " + long_name + "\n");
  CHECK_THAT(msg, Contains("line 3: layer Input 'in': blob name"));
  CHECK_THAT(msg, Contains("is 300 bytes long"));
  msg = text_error("7767517\n1 1\nIn" + long_name + " in 0 1 x\n");
  CHECK_THAT(msg, Contains("layer type is 302 bytes long, more than the 255 allowed"));
  msg = text_error("7767517\n1 1\nInput in\x01 0 1 x\n");
  CHECK_THAT(msg, Contains("layer Input 'in\\x01': layer name 'in\\x01' contains the control "
                           "byte \\x01"));

  const std::string long_line =
      fmt::format("Input in 0 1 x {}\n", std::string(infer::io::kMaxParamLineBytes, ' '));
  msg = text_error("7767517\n1 1\n" + long_line);
  CHECK_THAT(msg, Contains("t.param: line 3: the line is 1048591 bytes long, more than the "
                           "1048576 allowed"));
}

TEST_CASE("param error: a text file without its final newline is truncated", "[io][param][error]") {
  CHECK_THAT(text_error("7767517\n1 1\nInput in 0 1 x 0=4"),
             Contains("line 3: no newline at the end of the input: the file looks truncated"));
  CHECK_THAT(text_error("7767517"), Contains("line 1: no newline at the end of the input"));
  CHECK_THAT(text_error("7767517\n1 1"), Contains("line 2: no newline at the end of the input"));
  // Trailing blank space after the last newline is fine.
  CHECK(parse_param_text("7767517\n1 1\nInput in 0 1 x\n  \n\t").ok());
}

// --- truncation
// --------------------------------------------------------------------------------------

TEST_CASE("param: truncation at every byte is an error, never a crash", "[io][param][error]") {
  REQUIRE(parse_param_text(kSmallText).ok());
  for (std::size_t n = 0; n < kSmallText.size(); ++n) {
    INFO("text cut to " << n << " bytes");
    auto r = parse_param_text(kSmallText.substr(0, n), "cut.param");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.message(), Contains("cut.param: line "));
  }
  const Bin b = small_binary();
  REQUIRE(parse_param_binary(b.bytes).ok());
  for (std::size_t n = 0; n < b.bytes.size(); ++n) {
    INFO("binary cut to " << n << " bytes");
    auto r = parse_param_binary(std::span(b.bytes).first(n), "cut.param.bin");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.message(), Contains("cut.param.bin: offset "));
  }
  // A real model, cut at every line end and in the middle of every line.
  auto model = infer::io::read_file_bytes(kModels / "squeezenet.param");
  REQUIRE(model.ok());
  const std::string_view text(reinterpret_cast<const char*>(model->data()), model->size());
  REQUIRE(parse_param_text(text).ok());
  for (std::size_t n = 0; n < text.size(); ++n) {
    if (text[n] != '\n' && (n == 0 || text[n - 1] != ' ')) continue;
    INFO("squeezenet cut to " << n << " bytes");
    REQUIRE_FALSE(parse_param_text(text.substr(0, n)).ok());
  }
}
