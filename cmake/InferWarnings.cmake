# Flags for this project's own targets (tests, benchmarks, examples, compile-fail cases). They are
# never put on the exported infer::infer target, so consumers choose their own.

# infer_project_target(<target> [ARCH <march>])
#   Strict warnings as errors, standard C++ without GNU extensions, -march=<march> when given, else
#   -march=native when INFER_NATIVE, ASan + UBSan (compile and link) when INFER_SANITIZE,
#   ThreadSanitizer when INFER_TSAN.
function(infer_project_target tgt)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "ARCH" "")
  set_target_properties(${tgt} PROPERTIES CXX_EXTENSIONS OFF)
  target_compile_options(${tgt} PRIVATE -Wall -Wextra -Wpedantic -Werror)
  # GCC 12 reports its own AVX-512 intrinsics (the `__Y` of _mm512_undefined_*) as "may be used
  # uninitialized" once xsimd's math inlines them, and misfires on sanitizer-instrumented code.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${tgt} PRIVATE -Wno-maybe-uninitialized)
  endif()
  if(arg_ARCH)
    target_compile_options(${tgt} PRIVATE -march=${arg_ARCH})
  elseif(INFER_NATIVE)
    target_compile_options(${tgt} PRIVATE -march=native)
  endif()
  if(INFER_SANITIZE)
    # UBSan without its null, alignment and pointer-overflow checks: they instrument every
    # dereference and pointer step, and in the tests' templates they doubled the build
    # (test_graph_fusion.cpp: 21 s plain, 41 s with ASan, 78 s with ASan + all of UBSan, 41 s
    # without these three, one core of the 2-core Intel CI-kind VM). ASan already stops a null or
    # out-of-bounds access; the SIMD kernels' aligned loads fault when misaligned. The fuzzers
    # (scripts/fuzz.sh, clang) keep all of UBSan on the readers.
    set(sanitize_flags
      -fsanitize=address,undefined -fno-sanitize=null,alignment,pointer-overflow
      -fno-omit-frame-pointer -fno-sanitize-recover=all)
    target_compile_options(${tgt} PRIVATE ${sanitize_flags})
    target_link_options(${tgt} PRIVATE ${sanitize_flags})
  endif()
  if(INFER_TSAN)
    target_compile_options(${tgt} PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
    target_link_options(${tgt} PRIVATE -fsanitize=thread)
  endif()
endfunction()
