// infer::Net: a network read from ncnn's .param and .bin at run time. Loading builds each layer
// from its parameters; the first run for a set of input shapes and requested blobs plans the
// network with the same passes a static graph runs at compile time (fusion, folding, placement,
// conversions, in-place, memory plan) and keeps that plan for later runs. Any blob can be
// requested, as ncnn's extractor allows: the plan then keeps it (its producer is not fused into
// or run in place over).
//
// Concurrency: one loaded network serves any number of threads at once. Its layers and plans are
// shared read-only; each run uses a NetContext (as ncnn's Extractor: the arena and temporaries of
// one caller), either one the caller keeps per thread (no allocation per run after the first) or
// one Net::run takes from a pool. Plans are kept per input shapes and requested blobs, at most
// plan_cache_limit() of them (16 by default), the least recently used dropped first; planning a
// new shape while other threads run is safe. Loading (load_param, load_model, register_layer) is
// not: finish it before the threads start.
//
// Compiled mode (the default): this header only declares the network; its code and its layer
// table (every layer x storage type x pack x epilogue) are compiled once into the library
// infer::runtime, which a program using Net links. Define INFER_HEADER_ONLY (for every file of the
// program) to compile all of it in the including file instead, without the library.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <infer/graph/plan.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/io/param_dict.hpp>
#include <infer/mat.hpp>
#include <infer/option.hpp>
#include <infer/status.hpp>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef INFER_HEADER_ONLY
#define INFER_NET_FUNC inline
#else
/// How NetBase's out-of-line members are defined: `inline` in header-only mode, plain in
/// infer::runtime's sources.
#define INFER_NET_FUNC
#endif

namespace infer {

namespace net {
class AnyLayer;
/// Builds the layer of a .param line (net::make_layer<Storage>).
using LayerFactory = Result<std::unique_ptr<AnyLayer>> (*)(const io::ParamFile&,
                                                           const io::LayerSpec&);
template <class Storage>
Result<std::unique_ptr<AnyLayer>> make_layer(const io::ParamFile& file, const io::LayerSpec& spec);
}  // namespace net

/// A named input of Net::run.
struct NamedMat {
  std::string_view name;
  Mat mat;
};

/// One step of a profiled run: what it ran and how long it took.
struct StepTiming {
  std::string step;
  double ms = 0;
};

class NetBase;

/// One caller's working memory for runs of a NetBase: the arena of the plan it last ran, the
/// layers' temporaries, the outputs of its last run. Keep one per thread: runs through it allocate
/// nothing once a plan's arena exists. Not shareable between threads at once; it must not outlive
/// its network (or be used after the network is moved or loaded again).
class NetContext {
 public:
  explicit NetContext(const NetBase& net);
  NetContext(NetContext&&) noexcept;
  NetContext& operator=(NetContext&&) noexcept;
  ~NetContext();

  /// Runs the network on `inputs` (f32, by Input blob name) and keeps the requested blobs (f32,
  /// pack 1) for output(i), views into this context's memory valid until its next run.
  Status run(std::span<const NamedMat> inputs, std::span<const std::string_view> outputs);
  /// Runs a one-input network; output(0) is blob `output` (default: the last layer's output).
  Status run(const Mat& input, std::string_view output = {});
  /// Requested blob i of the last run (a view: clone() it to keep it past the next run).
  const Mat& output(std::size_t i = 0) const;
  std::size_t output_count() const;

  /// Times each step of the following runs (ncnn's per-layer benchmark); see step_timings().
  void set_profiling(bool on);
  /// The steps of the last profiled run.
  const std::vector<StepTiming>& step_timings() const;

 private:
  friend class NetBase;
  struct Impl;
  const NetBase* net_;
  std::unique_ptr<Impl> impl_;
};

/// The storage-independent network: everything of BasicNet but the choice of layer table.
class NetBase {
 public:
  NetBase(NetBase&&) noexcept;
  NetBase& operator=(NetBase&&) noexcept;
  ~NetBase();

  // ---- loading ----------------------------------------------------------------------------------

  /// Reads a .param file (text or binary form) and builds its layers.
  Status load_param(const std::filesystem::path& path);
  /// Reads .param text held in memory; errors name `source`.
  Status load_param_text(std::string_view text, std::string source = "<memory>");
  /// Builds the layers of a parsed .param.
  Status load_param(io::ParamFile file);

  /// Loads the weights from ncnn .bin bytes (every byte must be used); errors name `source`.
  Status load_model(std::span<const std::byte> bytes, std::string source = "<memory>");
  /// Loads the weights from a .bin file.
  Status load_model(const std::filesystem::path& path);
  /// Loads the weights from any weight source, layer by layer in file order.
  Status load_model(io::ModelBin& mb);
  /// Loads deterministic random weights with sane ranges (io/random_weights.hpp), as ncnn's
  /// benchmark runs models without their weights. `bin`, when given, receives the same weights
  /// as ncnn .bin bytes.
  Status load_random_weights(std::uint64_t seed = 1, std::vector<std::byte>* bin = nullptr);
  /// Loads the random weights ncnn's peer tool ncnn_weights writes for this .param with `seed`,
  /// bit for bit (io::NcnnRandomWeights): the weights ncnn's reference outputs are made with.
  /// `bin`, when given, receives them as the .bin bytes ncnn_weights writes.
  Status load_ncnn_random_weights(std::uint32_t seed = 1234,
                                  std::vector<std::byte>* bin = nullptr);

  // ---- what the network holds -------------------------------------------------------------------

  /// The names of the Input blobs, in file order.
  std::vector<std::string_view> input_names() const;
  /// The shape an Input declares (0=w 1=h 2=c).
  Shape input_shape(std::size_t i = 0) const;
  /// The default output: the first output blob of the last layer.
  std::string_view default_output() const;
  const io::ParamFile& param() const;
  std::size_t layer_count() const;
  const graph::Target& target() const { return target_; }
  const Option& options() const { return opt_; }

  // ---- running ----------------------------------------------------------------------------------

  /// Runs the network on `inputs` (f32, by Input blob name; shapes may differ from those the
  /// .param declares) and returns copies of the requested blobs (f32, pack 1), in the order asked.
  /// Safe from any number of threads at once (each call takes a NetContext from a pool).
  Result<std::vector<Mat>> run(std::span<const NamedMat> inputs,
                               std::span<const std::string_view> outputs) const;
  /// Runs a one-input network and returns blob `output` (default: the last layer's output).
  Result<Mat> run(const Mat& input, std::string_view output = {}) const;
  /// A context for running from one thread without allocating per run (see NetContext).
  NetContext context() const { return NetContext(*this); }

  /// The plan the network runs for these input shapes and outputs (for printing).
  Result<std::shared_ptr<const graph::Plan>> plan(std::span<const NamedMat> inputs,
                                                  std::span<const std::string_view> outputs) const;

  /// How many plans (input shapes x requested blobs) are kept; the least recently used is dropped
  /// when a new one would exceed it (contexts running it keep it until they move on). At least 1.
  void set_plan_cache_limit(std::size_t n);
  std::size_t plan_cache_limit() const;
  /// Plans held now.
  std::size_t plan_cache_size() const;

  // ---- layers of the user's own ---------------------------------------------------------------

  /// Builds a layer of a .param line; what register_layer takes (see <infer/net/custom_layer.hpp>
  /// for the typed form, register_layer<L>(net)).
  using LayerCreator = std::function<Result<std::unique_ptr<net::AnyLayer>>(
      const io::ParamFile&, const io::LayerSpec&)>;
  /// Makes .param lines of type `type` build layers through `creator` (a type the library also
  /// has is then the user's). Call before load_param.
  Status register_layer(std::string type, LayerCreator creator);

 protected:
  /// `make`: the layer table (net::make_layer<Storage>); `storage_types`: its element types (a
  /// graph::storage_mask).
  NetBase(graph::Target target, Option opt, net::LayerFactory make, unsigned storage_types);

 private:
  friend class NetContext;
  struct Compiled;
  struct State;

  const io::LayerSpec& spec_of(int node) const;
  int blob_id(std::string_view name) const;
  /// Checks the inputs and requested blobs and writes the plan cache's key for them.
  Status make_key(std::span<const NamedMat> inputs, std::span<const std::string_view> outputs,
                  std::vector<int>& key) const;
  /// The plan for a key (make_key's), from the cache or made now.
  Result<std::shared_ptr<const Compiled>> compiled_for(const std::vector<int>& key) const;
  Result<std::shared_ptr<const Compiled>> compile(const std::vector<int>& key) const;
  std::string step_text(const Compiled& c, std::size_t k) const;
  const LayerCreator* custom_creator(std::string_view type) const;
  /// The one input and the output blob of the single-input run forms (no allocation).
  Status single_input(const Mat& input, std::string_view output, NamedMat& in,
                      std::string_view& name) const;

  graph::Target target_;
  Option opt_;
  net::LayerFactory make_layer_;
  unsigned storage_types_;  ///< the element types the layer table is instantiated for
  std::unique_ptr<State> state_;
  std::vector<std::pair<std::string, LayerCreator>> custom_;  ///< register_layer's, by type
};

/// A network loaded at run time, instantiated for the element types in Storage (a storage_list;
/// by default f32, and i8 for quantized layers and the int8 values they pass on, whose layer table
/// infer::runtime holds compiled).
template <class Storage = storage_list<f32, i8>>
class BasicNet : public NetBase {
#if !defined(INFER_HEADER_ONLY) && !defined(INFER_NET_LAYER_TABLE)
  static_assert(std::is_same_v<Storage, storage_list<f32, i8>>,
                "infer::BasicNet<Storage>: infer::runtime compiles the layer table of "
                "storage_list<f32, i8> only; include <infer/net/layer_table.hpp> before "
                "<infer/net.hpp> in one file to instantiate this Storage's");
#endif

 public:
  /// `target`: the storage type, widest pack and whether to fuse and run in place (the scalar
  /// reference is `{.max_pack = 1, .fuse = false, .inplace = false}`); `opt`: threads and
  /// allocators.
  explicit BasicNet(graph::Target target = {}, Option opt = {})
      : NetBase(target, opt, &net::make_layer<Storage>, graph::storage_mask(Storage{})) {}
};

/// The network at f32 storage (int8 where its layers are quantized).
using Net = BasicNet<>;

}  // namespace infer

#ifdef INFER_HEADER_ONLY
#include <infer/net/layer_table.hpp>
#include <infer/net/net_impl.hpp>
#endif
