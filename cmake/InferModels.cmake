# infer_add_model(<target> <MODEL.param> [NAMESPACE <ns>] [OUTPUTS <blob>...] [SHAPE <C,H,W>])
#
# Generates <MODEL>.hpp from an ncnn .param with infer-gen at build time (again whenever the
# .param changes) and adds it to <target>, whose sources then `#include "<MODEL>.hpp"` and use
# `infer_models::<MODEL>::Network<>` (or the given namespace): the network as a static graph.
function(infer_add_model target param)
  cmake_parse_arguments(ARG "" "NAMESPACE;SHAPE" "OUTPUTS" ${ARGN})
  if(NOT TARGET infer::infer-gen)
    message(FATAL_ERROR "infer_add_model: infer::infer-gen is not available (build infer's tools)")
  endif()
  get_filename_component(name "${param}" NAME_WLE)  # yolo-fastest-1.1: the last extension only
  get_filename_component(param_path "${param}" ABSOLUTE)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/infer_models/${target}")
  set(header "${dir}/${name}.hpp")
  set(args "")
  if(ARG_NAMESPACE)
    list(APPEND args --namespace "${ARG_NAMESPACE}")
  endif()
  if(ARG_SHAPE)  # the input's shape where the Input line gives none
    list(APPEND args --shape "${ARG_SHAPE}")
  endif()
  foreach(blob IN LISTS ARG_OUTPUTS)
    list(APPEND args --output "${blob}")
  endforeach()
  add_custom_command(
    OUTPUT "${header}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${dir}"
    COMMAND infer::infer-gen "${param_path}" -o "${header}" ${args}
    DEPENDS "${param_path}" infer::infer-gen
    COMMENT "infer-gen ${name}.param"
    VERBATIM)
  target_sources(${target} PRIVATE "${header}")
  target_include_directories(${target} PRIVATE "${dir}")
  # Planning a network of a few hundred layers inside the compiler takes more constexpr steps than
  # GCC allows by default.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -fconstexpr-ops-limit=1073741824)
  elseif(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(${target} PRIVATE -fconstexpr-steps=100000000)
  endif()
endfunction()
