// Mat: an n-d blob (1 to 4 dims) in ncnn's layout. The packing axis (w for 1-D, h for 2-D, c for
// 3-D and 4-D) is stored in groups of `elempack` interleaved values; every channel starts on a
// kAlignment boundary. Owning Mats share reference-counted storage; views borrow it.
#pragma once

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <infer/allocator.hpp>
#include <infer/element.hpp>
#include <infer/status.hpp>
#include <stdexcept>
#include <string>

namespace infer {

/// A logical (unpacked) shape: dims in 1..4; unused extents are 1.
struct Shape {
  int dims = 0;
  int w = 1, h = 1, d = 1, c = 1;

  static constexpr Shape of(int w) { return {1, w, 1, 1, 1}; }
  static constexpr Shape of(int w, int h) { return {2, w, h, 1, 1}; }
  static constexpr Shape of(int w, int h, int c) { return {3, w, h, 1, c}; }
  static constexpr Shape of(int w, int h, int d, int c) { return {4, w, h, d, c}; }

  /// Extent of the axis that packing interleaves.
  constexpr int packed_extent() const { return dims == 1 ? w : dims == 2 ? h : c; }
  constexpr std::size_t total() const { return std::size_t(w) * h * d * c; }
  /// Extent of axis `i` counted outermost first (0 = c for 3-D, ...), ncnn's axis numbering.
  constexpr int extent(int axis) const {
    const std::array<int, 4> e = outer_first();
    return e[axis];
  }
  /// Extents outermost first: {w} / {h, w} / {c, h, w} / {c, d, h, w}, padded with 1s.
  constexpr std::array<int, 4> outer_first() const {
    switch (dims) {
      case 1:
        return {w, 1, 1, 1};
      case 2:
        return {h, w, 1, 1};
      case 3:
        return {c, h, w, 1};
      default:
        return {c, d, h, w};
    }
  }
  static constexpr Shape from_outer_first(int dims, const std::array<int, 4>& e) {
    switch (dims) {
      case 1:
        return of(e[0]);
      case 2:
        return of(e[1], e[0]);
      case 3:
        return of(e[2], e[1], e[0]);
      default:
        return of(e[3], e[2], e[1], e[0]);
    }
  }
  constexpr bool operator==(const Shape&) const = default;
};

/// The widest of {16, 8, 4, 1} that is at most `max_pack` and divides `extent`: how DESIGN.md says
/// a packing axis that is not a multiple of the preferred width falls back to a narrower pack.
constexpr int pack_for(int extent, int max_pack) {
  for (int p : {16, 8, 4}) {
    if (p <= max_pack && extent % p == 0) return p;
  }
  return 1;
}

/// Typed, non-owning access to a Mat whose element type and pack are known at compile time.
template <StorageElement T, int Pack>
struct MatView {
  T* data = nullptr;
  int dims = 0;
  int w = 0, h = 0, d = 0, c = 0;  ///< packed extents, as in Mat
  std::size_t cstep = 0;           ///< packed elements between channel starts

  /// Values (not packed elements) of one channel group: w * h * d * Pack.
  std::size_t channel_values() const { return std::size_t(w) * h * d * Pack; }
  T* channel(int q) const { return data + cstep * Pack * q; }
  /// Row y of channel group q (3-D), or of the whole 2-D Mat (q = 0).
  T* row(int q, int y) const { return channel(q) + std::size_t(y) * w * Pack; }
};

/// Where a packed blob's values go: the channel step (in packed elements) and the bytes the blob
/// takes, each channel start aligned to kAlignment. Constexpr so a static graph plans its arena.
struct PackedLayout {
  std::size_t cstep = 0;   ///< packed elements between channel starts (3-D/4-D), else the total
  std::size_t groups = 1;  ///< channel groups (3-D/4-D), 1 otherwise
  std::size_t bytes = 0;   ///< the whole blob, rounded up to kAlignment
};

/// The layout Mat::create gives `shape` stored as `type` packed by `elempack` (which must divide
/// the packing axis).
constexpr PackedLayout packed_layout(const Shape& shape, ElemType type, int elempack) {
  const std::size_t es = elem_size(type) * std::size_t(elempack);
  const std::size_t w = std::size_t(shape.dims == 1 ? shape.w / elempack : shape.w);
  const std::size_t h = std::size_t(shape.dims == 2 ? shape.h / elempack : shape.h);
  const std::size_t plane = w * h * std::size_t(shape.d);
  PackedLayout l;
  l.groups = shape.dims >= 3 ? std::size_t(shape.c / elempack) : 1;
  l.cstep = shape.dims >= 3 ? align_up(plane * es) / es : plane;
  l.bytes = align_up(l.cstep * l.groups * es);
  return l;
}

/// An n-d blob, ncnn's Mat: packed extents w, h, d, c; `elempack` values per packed element.
class Mat {
 public:
  Mat() = default;
  /// Allocates a Mat of logical shape `shape`; throws std::invalid_argument on a bad request (use
  /// Mat::create for a Result instead).
  explicit Mat(const Shape& shape, ElemType type = ElemType::f32, int elempack = 1,
               Allocator* alloc = nullptr) {
    Status s = create(shape, type, elempack, alloc);
    if (!s.ok()) throw std::invalid_argument(s.message());
  }

  Mat(const Mat& o) : Mat() { *this = o; }
  Mat(Mat&& o) noexcept { swap(o); }
  Mat& operator=(const Mat& o) {
    if (this == &o) return *this;
    if (o.block_) o.block_->refs.fetch_add(1, std::memory_order_relaxed);
    release();
    copy_fields(o);
    block_ = o.block_;
    return *this;
  }
  Mat& operator=(Mat&& o) noexcept {
    Mat tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~Mat() { release(); }

  void swap(Mat& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(block_, o.block_);
    std::swap(dims_, o.dims_);
    std::swap(w_, o.w_);
    std::swap(h_, o.h_);
    std::swap(d_, o.d_);
    std::swap(c_, o.c_);
    std::swap(elempack_, o.elempack_);
    std::swap(type_, o.type_);
    std::swap(cstep_, o.cstep_);
  }

  /// (Re)allocates for logical shape `shape`. Keeps the current memory when the Mat already has
  /// this shape, type and pack (so a layer writing into a pre-planned buffer allocates nothing).
  Status create(const Shape& shape, ElemType type, int elempack, Allocator* alloc = nullptr) {
    if (shape.dims < 1 || shape.dims > 4)
      return make_error("Mat::create: dims must be 1 to 4, got {}", shape.dims);
    if (shape.w < 1 || shape.h < 1 || shape.d < 1 || shape.c < 1)
      return make_error("Mat::create: extents must be positive, got w={} h={} d={} c={}", shape.w,
                        shape.h, shape.d, shape.c);
    if (elempack != 1 && elempack != 4 && elempack != 8 && elempack != 16)
      return make_error("Mat::create: elempack must be 1, 4, 8 or 16, got {}", elempack);
    if (shape.packed_extent() % elempack != 0)
      return make_error("Mat::create: packed axis extent {} is not a multiple of elempack {}",
                        shape.packed_extent(), elempack);
    if (data_ && shape == this->shape() && type == type_ && elempack == elempack_) return {};

    // Checked in floating point first: the extents' product may not fit in 64 bits.
    constexpr double kMaxBytes = double(std::size_t(1) << 40);
    const double want = double(shape.w) * shape.h * shape.d * shape.c * double(elem_size(type));
    if (want > kMaxBytes)
      return make_error("Mat::create: {} bytes is more than the 1 TiB limit", want);
    const PackedLayout layout = packed_layout(shape, type, elempack);
    Mat m = wrap(nullptr, shape, type, elempack, layout.cstep);
    const std::size_t bytes = layout.bytes;
    Allocator* a = alloc ? alloc : default_allocator();
    void* p = a->allocate(bytes + sizeof(Block));
    if (!p) return make_error("Mat::create: out of memory allocating {} bytes", bytes);
    m.block_ = new (static_cast<char*>(p) + bytes) Block{{1}, a, bytes + sizeof(Block), p};
    m.data_ = p;
    swap(m);
    return {};
  }
  static Result<Mat> make(const Shape& shape, ElemType type = ElemType::f32, int elempack = 1,
                          Allocator* alloc = nullptr) {
    Mat m;
    INFER_TRY(m.create(shape, type, elempack, alloc));
    return m;
  }

  /// Borrows external memory laid out as this Mat would be with the given channel step (in packed
  /// elements); by default channels are dense (cstep = w*h*d), as a plain CHW buffer is.
  static Mat wrap(void* data, const Shape& shape, ElemType type = ElemType::f32, int elempack = 1,
                  std::size_t cstep = 0) {
    Mat m;
    m.dims_ = shape.dims;
    m.w_ = shape.w;
    m.h_ = shape.h;
    m.d_ = shape.d;
    m.c_ = shape.c;
    m.type_ = type;
    m.elempack_ = elempack;
    if (shape.dims == 1) m.w_ /= elempack;
    if (shape.dims == 2) m.h_ /= elempack;
    if (shape.dims >= 3) m.c_ /= elempack;
    m.cstep_ = cstep ? cstep : std::size_t(m.w_) * m.h_ * m.d_;
    m.data_ = data;
    return m;
  }

  // ---- shape ----
  bool empty() const { return data_ == nullptr; }
  int dims() const { return dims_; }
  int w() const { return w_; }
  int h() const { return h_; }
  int d() const { return d_; }
  int c() const { return c_; }
  int elempack() const { return elempack_; }
  ElemType type() const { return type_; }
  /// Bytes per packed element.
  std::size_t elemsize() const { return elem_size(type_) * elempack_; }
  /// Packed elements between channel starts.
  std::size_t cstep() const { return cstep_; }
  /// Packed elements in the whole buffer including channel padding.
  std::size_t total() const { return cstep_ * c_; }
  std::size_t bytes() const { return total() * elemsize(); }
  /// The logical (unpacked) shape.
  Shape shape() const {
    Shape s{dims_, w_, h_, d_, c_};
    if (dims_ == 1) s.w *= elempack_;
    if (dims_ == 2) s.h *= elempack_;
    if (dims_ >= 3) s.c *= elempack_;
    return s;
  }
  /// Whether channel groups follow each other without padding (so the data is one dense array).
  bool dense() const { return c_ == 1 || cstep_ == std::size_t(w_) * h_ * d_; }

  void* data() const { return data_; }
  template <class T>
  T* data_as() const {
    return static_cast<T*>(data_);
  }
  /// Start of channel group q.
  void* channel_data(int q) const {
    return static_cast<char*>(data_) + cstep_ * std::size_t(q) * elemsize();
  }

  /// Typed view; the caller has checked type() and elempack() (asserted in debug builds).
  template <StorageElement T, int Pack>
  MatView<T, Pack> view() const {
    assert(type_ == elem_type_v<T> && elempack_ == Pack);
    return {static_cast<T*>(data_), dims_, w_, h_, d_, c_, cstep_};
  }
  template <StorageElement T, int Pack>
  bool is() const {
    return type_ == elem_type_v<T> && elempack_ == Pack;
  }

  // ---- views ----
  /// Channel group q of a 3-D/4-D Mat as a 2-D/3-D view sharing the storage (a 4-D Mat's depth
  /// slices become the view's channels). The view keeps elempack: in a packed Mat each of its
  /// elements still holds one value of each of the group's Pack channels.
  Mat channel(int q) const {
    Mat m = *this;
    m.data_ = channel_data(q);
    m.dims_ = dims_ - 1;
    m.c_ = 1;
    if (dims_ == 4) {  // the depth slices become the view's channels
      m.c_ = d_;
      m.d_ = 1;
      m.cstep_ = std::size_t(w_) * h_;
    } else {
      m.cstep_ = std::size_t(w_) * h_;
    }
    return m;
  }
  /// The first `n` rows of an unpacked 2-D Mat as a view (0 <= n <= h()): how a layer whose row
  /// count depends on the data (DetectionOutput: one row per detection) gives its result in the
  /// buffer planned for the most rows. n = 0 gives a Mat of no rows (h() == 0, total() == 0)
  /// that still points at the buffer.
  Mat first_rows(int n) const {
    assert(dims_ == 2 && elempack_ == 1 && n >= 0 && n <= h_);
    Mat m = *this;
    m.h_ = n;
    m.cstep_ = std::size_t(w_) * std::size_t(n);
    return m;
  }
  /// Channel groups [q, q + n) as a view.
  Mat channel_range(int q, int n) const {
    Mat m = *this;
    m.data_ = channel_data(q);
    m.c_ = n;
    return m;
  }
  /// The same values with another logical shape, without copying; fails when the padding
  /// between channels makes that impossible (use reshape() to copy then).
  Result<Mat> reshape_view(const Shape& s) const {
    if (s.total() != shape().total())
      return make_error("Mat::reshape: {} values cannot become {}", shape().total(), s.total());
    if (elempack_ != 1) return make_error("Mat::reshape: only unpacked Mats reshape as views");
    const bool keeps_plane = s.dims >= 3 && dims_ >= 3 && s.c == c_;
    if (!dense() && !keeps_plane)
      return make_error("Mat::reshape: channels are padded (cstep {}), a view is impossible",
                        cstep_);
    Mat m = *this;
    m.dims_ = s.dims;
    m.w_ = s.w;
    m.h_ = s.h;
    m.d_ = s.d;
    m.c_ = s.c;
    if (!keeps_plane) m.cstep_ = s.dims >= 3 ? std::size_t(s.w) * s.h * s.d : s.total();
    return m;
  }
  /// Reshape, copying into a new Mat when a view is impossible.
  Result<Mat> reshape(const Shape& s, Allocator* alloc = nullptr) const {
    if (auto v = reshape_view(s); v.ok()) return v;
    if (s.total() != shape().total() || elempack_ != 1)
      return make_error("Mat::reshape: {} values (pack {}) cannot become {}", shape().total(),
                        elempack_, s.total());
    Mat dst;
    INFER_TRY(dst.create(s, type_, 1, alloc));
    const std::size_t es = elemsize();
    const std::size_t plane = std::size_t(w_) * h_ * d_;
    std::size_t k = 0;  // running value index
    for (int q = 0; q < c_; ++q) {
      for (std::size_t i = 0; i < plane; ++i, ++k) {
        const std::size_t dq = dst.dims_ >= 3 ? k / (std::size_t(dst.w_) * dst.h_ * dst.d_) : 0;
        const std::size_t di = dst.dims_ >= 3 ? k % (std::size_t(dst.w_) * dst.h_ * dst.d_) : k;
        std::memcpy(static_cast<char*>(dst.data_) + (dq * dst.cstep_ + di) * es,
                    static_cast<const char*>(channel_data(q)) + i * es, es);
      }
    }
    return dst;
  }

  /// A deep copy with its own storage (same shape, type and pack).
  Result<Mat> clone(Allocator* alloc = nullptr) const {
    Mat m;
    if (empty()) return m;
    // No values (a detection head's rows when it found none): the shape without memory.
    if (total() == 0) return wrap(nullptr, shape(), type_, elempack_);
    INFER_TRY(m.create(shape(), type_, elempack_, alloc));
    copy_to(m);
    return m;
  }
  /// Copies the values into `dst`, which has the same shape, type and pack.
  void copy_to(const Mat& dst) const {
    const std::size_t plane = std::size_t(w_) * h_ * d_ * elemsize();
    for (int q = 0; q < c_; ++q) std::memcpy(dst.channel_data(q), channel_data(q), plane);
  }

  /// Sets every value to `v` converted to the element type (i8: ncnn's rounding and clamp).
  void fill(float v) {
    switch (type_) {
      case ElemType::f32:
        fill_as<float>(v);
        break;
      case ElemType::f16:
        fill_as<f16>(f32_to_f16(v));
        break;
      case ElemType::bf16:
        fill_as<bf16>(f32_to_bf16(v));
        break;
      case ElemType::i8:
        fill_as<std::int8_t>(float2int8(v));
        break;
      case ElemType::i32:
        fill_as<std::int32_t>(static_cast<std::int32_t>(v));
        break;
    }
  }
  template <class T>
  void fill_as(T v) {
    const std::size_t n = std::size_t(w_) * h_ * d_ * elempack_;
    for (int q = 0; q < c_; ++q) {
      T* p = static_cast<T*>(channel_data(q));
      for (std::size_t i = 0; i < n; ++i) p[i] = v;
    }
  }

  /// "3-D 7x5x12 f16 pack 4" for messages.
  std::string describe() const {
    const Shape s = shape();
    std::string ext = dims_ == 1   ? fmt::format("{}", s.w)
                      : dims_ == 2 ? fmt::format("{}x{}", s.w, s.h)
                      : dims_ == 3 ? fmt::format("{}x{}x{}", s.w, s.h, s.c)
                                   : fmt::format("{}x{}x{}x{}", s.w, s.h, s.d, s.c);
    return fmt::format("{}-D {} {} pack {}", dims_, ext, to_string(type_), elempack_);
  }

 private:
  struct Block {
    std::atomic<int> refs;
    Allocator* alloc;
    std::size_t bytes;
    void* base;
  };

  void release() {
    if (block_ && block_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      Allocator* a = block_->alloc;
      void* base = block_->base;
      std::size_t bytes = block_->bytes;
      block_->~Block();
      a->deallocate(base, bytes);
    }
    block_ = nullptr;
    data_ = nullptr;
  }
  void copy_fields(const Mat& o) {
    data_ = o.data_;
    dims_ = o.dims_;
    w_ = o.w_;
    h_ = o.h_;
    d_ = o.d_;
    c_ = o.c_;
    elempack_ = o.elempack_;
    type_ = o.type_;
    cstep_ = o.cstep_;
  }

  void* data_ = nullptr;
  Block* block_ = nullptr;  ///< null for views of external memory
  int dims_ = 0;
  int w_ = 0, h_ = 0, d_ = 0, c_ = 0;
  int elempack_ = 1;
  ElemType type_ = ElemType::f32;
  std::size_t cstep_ = 0;
};

}  // namespace infer
