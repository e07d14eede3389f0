// What an ncnn .param file says, as data: each layer's type, name, blob links and its parameter
// dictionary (keys 0..31 holding an int, a float, or an array). The readers (io/param.hpp) fill
// it; io/ncnn_layers.hpp turns each entry into an infer layer. Kept apart from both so either can
// be used alone.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <infer/status.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace infer::io {

/// One parameter value as written. Text files say whether a number is an int or a float; the
/// binary form stores 4 raw bytes that read as either.
struct ParamValue {
  enum Kind : std::uint8_t { int_value, float_value, raw_value };
  Kind kind = int_value;
  std::int32_t i = 0;  ///< int_value: the value; raw_value: the 4 bytes as an int
  float f = 0.f;       ///< float_value: the value; raw_value: the 4 bytes as a float

  static ParamValue of_int(std::int32_t v) { return {int_value, v, float(v)}; }
  static ParamValue of_float(float v) { return {float_value, 0, v}; }
  static ParamValue of_raw(std::uint32_t bits) {
    return {raw_value, std::bit_cast<std::int32_t>(bits), std::bit_cast<float>(bits)};
  }
};

/// A layer's key=value pairs. ncnn's keys: 0..31 for scalars and arrays alike (the text form
/// writes array k as -23300-k). Key 30 as an array is ncnn's shape hint (-23330), which readers
/// keep but layers ignore.
class ParamDict {
 public:
  static constexpr int kMaxKeys = 32;

  struct Entry {
    bool present = false;
    bool is_array = false;
    ParamValue scalar;
    std::vector<ParamValue> array;
  };

  bool has(int key) const { return valid(key) && entries_[std::size_t(key)].present; }
  bool is_array(int key) const { return has(key) && entries_[std::size_t(key)].is_array; }
  const Entry& entry(int key) const { return entries_[std::size_t(key)]; }

  /// Sets a scalar (replacing an earlier value of the key, as ncnn does).
  void set(int key, ParamValue v) {
    Entry& e = entries_[std::size_t(key)];
    e = Entry{true, false, v, {}};
  }
  void set_array(int key, std::vector<ParamValue> values) {
    Entry& e = entries_[std::size_t(key)];
    e = Entry{true, true, {}, std::move(values)};
  }

  static constexpr bool valid(int key) { return key >= 0 && key < kMaxKeys; }

 private:
  Entry entries_[kMaxKeys];
};

/// One layer line of a .param file.
struct LayerSpec {
  std::string type;  ///< ncnn type name ("Convolution")
  std::string name;
  std::vector<int> bottoms, tops;  ///< blob ids, index into ParamFile::blobs
  ParamDict params;
  int line = 0;            ///< 1-based line in a text file; 0 for the binary form
  std::size_t offset = 0;  ///< byte offset of the layer's record in the file
};

/// A whole .param file.
struct ParamFile {
  std::string source;               ///< the file name (or "<memory>") errors name
  std::vector<LayerSpec> layers;    ///< in file order (ncnn's .bin order)
  std::vector<std::string> blobs;   ///< blob names by id (binary files: "blob<N>")
  /// What the reader ignored as ncnn does (lines or bytes after the declared layers), one
  /// message each, naming the file and where; the loaders print them, a caller may check them.
  std::vector<std::string> warnings;
};

/// Reads one layer's parameters for the layer builders: typed getters with ncnn's defaults that
/// record the first problem (wrong kind, value out of range, an array where a scalar belongs) and
/// which keys were read, so a key the layer does not know is reported too. Errors name the file,
/// line, layer and key.
class ParamReader {
 public:
  ParamReader(const ParamFile& file, const LayerSpec& layer) : file_(&file), layer_(&layer) {}

  /// An int key (an int in text form, or raw bytes in binary form); `def` when absent.
  int get(int key, int def) {
    const ParamDict::Entry* e = scalar(key);
    if (!e) return def;
    if (e->scalar.kind == ParamValue::float_value) {
      fail(key, fmt::format("expected an integer, got {}", e->scalar.f));
      return def;
    }
    return e->scalar.i;
  }
  /// A float key (an int written without a point is converted, as ncnn's text reader does).
  float get(int key, float def) {
    const ParamDict::Entry* e = scalar(key);
    if (!e) return def;
    const float v = e->scalar.kind == ParamValue::int_value ? float(e->scalar.i) : e->scalar.f;
    if (!std::isfinite(v)) {
      fail(key, fmt::format("expected a finite number, got {}", v));
      return def;
    }
    return v;
  }
  /// An int array key; empty when absent.
  std::vector<int> get_ints(int key) {
    std::vector<int> out;
    const ParamDict::Entry* e = array(key);
    if (!e) return out;
    for (const ParamValue& v : e->array) {
      if (v.kind == ParamValue::float_value) {
        fail(key, fmt::format("expected integers, got {}", v.f));
        return {};
      }
      out.push_back(v.i);
    }
    return out;
  }
  /// A float array key; empty when absent.
  std::vector<float> get_floats(int key) {
    std::vector<float> out;
    const ParamDict::Entry* e = array(key);
    if (!e) return out;
    for (const ParamValue& v : e->array) {
      const float f = v.kind == ParamValue::int_value ? float(v.i) : v.f;
      if (!std::isfinite(f)) {
        fail(key, fmt::format("expected finite numbers, got {}", f));
        return {};
      }
      out.push_back(f);
    }
    return out;
  }

  /// An array key's values as written (ints, floats, or raw 4-byte words of the binary form);
  /// empty when absent. For a layer that reads an array its own way (Yolov3DetectionOutput's
  /// mask, float bit patterns written as ints).
  std::vector<ParamValue> get_values(int key) {
    const ParamDict::Entry* e = array(key);
    if (!e) return {};
    return std::vector<ParamValue>(e->array.begin(), e->array.end());
  }

  /// Records a range problem of key `key` ("must be >= 1, got 0").
  void fail(int key, std::string what) {
    if (!error_.empty()) return;
    error_ = fmt::format("key {}: {}", key, what);
  }
  /// Records a problem of the layer as a whole.
  void fail(std::string what) {
    if (error_.empty()) error_ = std::move(what);
  }

  /// Ok, or the first problem, including keys present but never read (except the -23330 shape
  /// hint), with file, line, type and name.
  Status finish() {
    if (error_.empty()) {
      for (int k = 0; k < ParamDict::kMaxKeys; ++k) {
        if (k == 30 && layer_->params.is_array(30)) continue;  // ncnn's shape hint
        if (layer_->params.has(k) && !(used_ & (1u << k))) {
          fail(k, fmt::format("not a parameter of {}", layer_->type));
          break;
        }
      }
    }
    if (error_.empty()) return {};
    return make_error("{}: {}layer {} '{}': {}", file_->source, where(), layer_->type,
                      layer_->name, error_);
  }

  const LayerSpec& layer() const { return *layer_; }
  const ParamFile& file() const { return *file_; }

 private:
  std::string where() const {
    if (layer_->line > 0) return fmt::format("line {}: ", layer_->line);
    return fmt::format("offset {}: ", layer_->offset);
  }
  const ParamDict::Entry* scalar(int key) {
    used_ |= 1u << key;
    if (!layer_->params.has(key)) return nullptr;
    const ParamDict::Entry& e = layer_->params.entry(key);
    if (e.is_array) {
      fail(key, "expected a single value, got an array");
      return nullptr;
    }
    return &e;
  }
  const ParamDict::Entry* array(int key) {
    used_ |= 1u << key;
    if (!layer_->params.has(key)) return nullptr;
    const ParamDict::Entry& e = layer_->params.entry(key);
    if (!e.is_array) {
      fail(key, "expected an array (-23300-key=count,values...), got a single value");
      return nullptr;
    }
    return &e;
  }

  const ParamFile* file_;
  const LayerSpec* layer_;
  std::uint32_t used_ = 0;
  std::string error_;
};

}  // namespace infer::io
