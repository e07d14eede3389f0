// Compile-cost probe: the smallest real user of infer::Net (load a .param, random weights, run,
// print the output's shape). scripts/compile-cost.sh times its compilation; it also runs:
//   net_user MODEL.param
#include <fmt/core.h>

#include <filesystem>
#include <infer/net.hpp>

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: net_user MODEL.param\n");
    return 2;
  }
  infer::Net net;
  infer::Status st = net.load_param(std::filesystem::path(argv[1]));
  if (st.ok()) st = net.load_random_weights(1);
  if (!st.ok()) {
    fmt::print(stderr, "{}\n", st.message());
    return 1;
  }
  infer::Mat input(net.input_shape(), infer::ElemType::f32);
  input.fill(0.5f);
  auto out = net.run(input);
  if (!out.ok()) {
    fmt::print(stderr, "{}\n", out.error().message);
    return 1;
  }
  fmt::print("{}\n", out->describe());
  return 0;
}
