// expect: infer::BasicNet<Storage>: infer::runtime compiles the layer table of storage_list<f32, i8> only
// In compiled mode, a storage list other than infer::runtime's needs the layer table's definition
// (<infer/net/layer_table.hpp>); without it the diagnostic says so, rather than a link error.
#include <infer/net.hpp>

int main() {
  infer::BasicNet<infer::storage_list<infer::f32, infer::f16>> net;
  return int(net.layer_count());
}
