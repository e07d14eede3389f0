# infer_add_shaders(<target> <dir>)
#   Compiles every <dir>/*.comp (GLSL compute) with glslc at build time, twice: f32 storage and f16
#   storage (-DINFER_FP16_STORAGE=1), and embeds each module as a header
#   <infer_shaders/NAME_f32.hpp> / <infer_shaders/NAME_f16.hpp> defining
#   `infer::shaders::NAME_f32[]` (SPIR-V words), so the program needs no shader compiler where it
#   runs. <target> gets the headers' directory and builds them first. infer's own shaders/ go
#   through it; a custom layer brings its GPU kernel the same way.
set(INFER_SHADERS_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")

function(infer_add_shaders target dir)
  find_program(INFER_GLSLC glslc REQUIRED)
  file(GLOB sources CONFIGURE_DEPENDS "${dir}/*.comp")
  if(NOT sources)
    message(FATAL_ERROR "infer_add_shaders(${target}): no .comp files in ${dir}")
  endif()
  # Files the shaders #include (GL_GOOGLE_include_directive, relative to the shader): a change
  # rebuilds every shader of the directory.
  file(GLOB includes CONFIGURE_DEPENDS "${dir}/*.glsl")
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/infer_shaders_${target}")
  set(headers "")
  foreach(src IN LISTS sources)
    get_filename_component(name "${src}" NAME_WE)
    # A shader may ask for more variants with a line "// infer-variant: coopmat": f16 storage
    # compiled with -DINFER_COOPMAT=1 (GL_NV_cooperative_matrix), embedded as NAME_coopmat; or,
    # with "// infer-variants: coopmat", for that variant alone (a tensor-core-only kernel).
    file(STRINGS "${src}" extra REGEX "^// infer-variants?: ")
    file(STRINGS "${src}" only REGEX "^// infer-variants: ")
    if(only)
      set(variants "")
    else()
      set(variants f32 f16)
    endif()
    foreach(line IN LISTS extra)
      string(REGEX REPLACE "^// infer-variants?: *" "" v "${line}")
      if(NOT v STREQUAL "coopmat")
        message(FATAL_ERROR "${src}: unknown shader variant '${v}' (known: coopmat)")
      endif()
      list(APPEND variants ${v})
    endforeach()
    foreach(variant IN LISTS variants)
      set(fp16 0)
      set(coopmat 0)
      if(variant STREQUAL "f16")
        set(fp16 1)
      elseif(variant STREQUAL "coopmat")
        set(fp16 1)
        set(coopmat 1)
      endif()
      set(spv "${out_dir}/spv/${name}_${variant}.spv")
      set(hpp "${out_dir}/infer_shaders/${name}_${variant}.hpp")
      add_custom_command(OUTPUT "${hpp}"
        COMMAND "${CMAKE_COMMAND}" -E make_directory "${out_dir}/spv" "${out_dir}/infer_shaders"
        COMMAND "${INFER_GLSLC}" -fshader-stage=compute --target-env=vulkan1.1 -O -Werror
                -DINFER_FP16_STORAGE=${fp16} -DINFER_COOPMAT=${coopmat} "${src}" -o "${spv}"
        COMMAND "${CMAKE_COMMAND}" -DSPV=${spv} -DHPP=${hpp} -DNAME=${name}_${variant}
                -P "${INFER_SHADERS_CMAKE_DIR}/InferEmbedSpirv.cmake"
        MAIN_DEPENDENCY "${src}"
        DEPENDS "${INFER_SHADERS_CMAKE_DIR}/InferEmbedSpirv.cmake" ${includes}
        COMMENT "glslc ${name}.comp (${variant})"
        VERBATIM)
      list(APPEND headers "${hpp}")
    endforeach()
  endforeach()
  add_custom_target(${target}_shaders DEPENDS ${headers})
  add_dependencies(${target} ${target}_shaders)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE $<BUILD_INTERFACE:${out_dir}>)
  else()
    target_include_directories(${target} PRIVATE "${out_dir}")
  endif()
endfunction()
