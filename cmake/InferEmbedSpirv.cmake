# cmake -DSPV=<file.spv> -DHPP=<file.hpp> -DNAME=<identifier> -P InferEmbedSpirv.cmake
# Writes SPIR-V as a C++ header: `inline constexpr std::uint32_t infer::shaders::NAME[]`.
file(READ "${SPV}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR rem "${n} % 8")
if(NOT rem EQUAL 0 OR n EQUAL 0)
  message(FATAL_ERROR "${SPV}: not SPIR-V (${n} hex digits)")
endif()
# Little-endian words: bytes b0 b1 b2 b3 -> 0xb3b2b1b0.
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," words "${hex}")
string(REGEX REPLACE "(0x[0-9a-f]+u,0x[0-9a-f]+u,0x[0-9a-f]+u,0x[0-9a-f]+u,0x[0-9a-f]+u,0x[0-9a-f]+u,)" "\\1\n  " words "${words}")
get_filename_component(src "${SPV}" NAME)
file(WRITE "${HPP}.tmp" "// Generated from ${src} by infer's build (glslc); do not edit.\n#pragma once\n\n#include <cstdint>\n\nnamespace infer::shaders {\ninline constexpr std::uint32_t ${NAME}[] = {\n  ${words}\n};\n}  // namespace infer::shaders\n")
file(RENAME "${HPP}.tmp" "${HPP}")
