// The repacking kernel against the layout formula itself: value (channel, element) must land at
// group channel / Pack, lane channel % Pack, for every pair of widths and every value size, with
// element counts that leave a tail after the register-transposed tiles.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <infer/kernels/pack.hpp>
#include <vector>

namespace {

template <class V>
V tag(int ch, std::size_t i) {
  return static_cast<V>((std::uint32_t(ch) * 1000003u + std::uint32_t(i) * 7919u) & 0x7fffffffu);
}

template <class V, int In, int Out>
void check(int channels, std::size_t n, int threads) {
  // Group steps a little past the packed size, as a Mat's aligned cstep would be.
  const std::size_t in_gstep = n + 3, out_gstep = n + 5;
  std::vector<V> src(std::size_t(channels / In) * in_gstep * In);
  std::vector<V> dst(std::size_t(channels / Out) * out_gstep * Out, V(0));
  for (int ch = 0; ch < channels; ++ch)
    for (std::size_t i = 0; i < n; ++i)
      src[std::size_t(ch / In) * in_gstep * In + i * In + std::size_t(ch % In)] = tag<V>(ch, i);
  infer::kernels::repack<V, In, Out>(src.data(), in_gstep, dst.data(), out_gstep, channels, n,
                                     threads);
  for (int ch = 0; ch < channels; ++ch) {
    for (std::size_t i = 0; i < n; ++i) {
      const V got = dst[std::size_t(ch / Out) * out_gstep * Out + i * Out + std::size_t(ch % Out)];
      if (got != tag<V>(ch, i)) {
        INFO("value size " << sizeof(V) << " pack " << In << " -> " << Out << " channel " << ch
                           << " element " << i << " of " << n);
        REQUIRE(got == tag<V>(ch, i));
      }
    }
  }
}

template <class V, int In>
void check_from() {
  for (int channels : {16, 48}) {
    for (std::size_t n :
         {std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{37}, std::size_t{4099}}) {
      for (int threads : {1, 2}) {
        check<V, In, 1>(channels, n, threads);
        check<V, In, 4>(channels, n, threads);
        check<V, In, 8>(channels, n, threads);
        check<V, In, 16>(channels, n, threads);
      }
    }
  }
}

template <class V>
void check_all() {
  check_from<V, 1>();
  check_from<V, 4>();
  check_from<V, 8>();
  check_from<V, 16>();
}

}  // namespace

TEST_CASE("repack puts every value where the packed layout says", "[convert][kernel]") {
  check_all<std::uint32_t>();
  check_all<std::uint16_t>();
  check_all<std::uint8_t>();
}
