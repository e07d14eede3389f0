# infer_add_runtime(<name> [SOURCES_DIR <dir>])
#
# Adds static library <name>: infer::Net's code and layer table compiled once (what the exported
# infer::runtime target is), from infer's src/runtime/ sources. infer's own build makes
# infer::runtime with it; a consumer of the installed package can call it to compile the runtime
# with its own flags (its -march, its sanitizers) instead of linking the installed one.
function(infer_add_runtime name)
  cmake_parse_arguments(ARG "" "SOURCES_DIR" "" ${ARGN})
  if(NOT ARG_SOURCES_DIR)
    # In infer's source tree: ../src/runtime; installed (this file in <prefix>/lib/cmake/infer):
    # <prefix>/share/infer/runtime.
    set(ARG_SOURCES_DIR "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../src/runtime")
    if(NOT EXISTS "${ARG_SOURCES_DIR}/net.cpp")
      set(ARG_SOURCES_DIR "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../../../share/infer/runtime")
    endif()
  endif()
  file(GLOB sources CONFIGURE_DEPENDS "${ARG_SOURCES_DIR}/*.cpp")
  if(NOT sources)
    message(FATAL_ERROR "infer_add_runtime: no infer runtime sources in ${ARG_SOURCES_DIR}")
  endif()
  add_library(${name} STATIC ${sources})
  target_link_libraries(${name} PUBLIC infer::infer)
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
