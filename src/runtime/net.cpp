// infer::runtime: NetBase, the storage-independent code of infer::Net.
#define INFER_RUNTIME_SOURCE
#include <infer/net/net_impl.hpp>
