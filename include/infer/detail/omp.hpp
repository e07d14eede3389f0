// OpenMP's run-time functions, or their one-thread meaning when the code is built without OpenMP
// (INFER_OPENMP=OFF, as the ThreadSanitizer build is: GCC's libgomp is not instrumented for it).
// Without OpenMP the `#pragma omp` lines are ignored and each kernel runs on the calling thread.
#pragma once

#ifdef _OPENMP
#include <omp.h>
#else
inline int omp_get_thread_num() { return 0; }
inline int omp_get_num_threads() { return 1; }
inline int omp_get_max_threads() { return 1; }
#endif
