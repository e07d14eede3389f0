// The test program's count of heap allocations: heap_count.cpp replaces operator new (every form)
// for the whole of infer_tests (and infer_tests_avx2), so a test can prove that a forward pass
// makes none.
#pragma once

#include <cstddef>

namespace infer::test {

/// Heap allocations made so far by any thread (operator new of every form; std containers too).
std::size_t heap_allocations();

}  // namespace infer::test
