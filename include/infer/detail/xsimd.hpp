// The one place infer includes xsimd. GCC 12.2 (Debian 12) reports its own AVX-512 intrinsics as
// reading an uninitialized variable (the self-initialized `__Y` of _mm512_undefined_*, GCC bug
// 105593, fixed in 12.3) wherever xsimd's math inlines them; a user building with -Werror would
// fail on our headers. The diagnostic state is by location, so silencing it while the intrinsic
// headers are first read keeps it off for exactly those lines and nothing of the user's.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#include <xsimd/xsimd.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
