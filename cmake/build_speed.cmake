# Build speed, for a first build from a fresh clone (the quick start's demo builds the command line
# only; bench/RESULTS.md, "Quick start from a fresh clone", has the times).
#
# Unity batches (MODELSTAT_UNITY): the libraries and binaries compile 8 sources per translation unit,
# so that the headers they share are parsed once per batch. tools/dev.sh turns it on (a build from
# scratch); it is off by default because an edit then recompiles the whole batch. The tests are
# never batched. Sources in one batch share a translation unit, so file-local names (anonymous
# namespaces) must differ across a library's files: one fact in one place anyway.
option(MODELSTAT_UNITY "Compile the libraries in unity batches of 8 sources (faster from scratch, slower incrementally)" OFF)
# GCC's -Wsubobject-linkage fires when a class declared in a header has a member whose type comes from
# an anonymous namespace of the source file (a pimpl's Impl holding a file-local Plan): inside a unity
# batch the source file counts as a header. Each source is still compiled once, so the ODR risk the
# warning guards against does not exist here.
macro(modelstat_unity_begin)
  if(MODELSTAT_UNITY)
    set(CMAKE_UNITY_BUILD ON)
    set(CMAKE_UNITY_BUILD_BATCH_SIZE 8)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
    endif()
  endif()
endmacro()
macro(modelstat_unity_end)
  set(CMAKE_UNITY_BUILD OFF)
endmacro()

# Precompiled headers: the third-party headers that dominate compile time, parsed once per target
# instead of once per source file. Measured on the CLI's 190 sources (2 cores, no ccache):
# <ATen/ATen.h> alone costs 6.9 s of CPU per source file, <CLI/CLI.hpp> 5.3 s,
# <nlohmann/json.hpp> 1.9 s. Only third-party and standard headers go in: a source file that
# forgets one of its own includes still fails to compile with -DMODELSTAT_PCH=OFF.
option(MODELSTAT_PCH "Precompile the heavy third-party headers (ATen, CLI11, nlohmann/json, GoogleTest) per target" ON)

# modelstat_precompile(TARGET KIND...): KIND is aten, cli, json or gtest.
function(modelstat_precompile target)
  if(NOT MODELSTAT_PCH)
    return()
  endif()
  set(headers <vector> <string> <memory> <map> <unordered_map> <functional> <algorithm>)
  foreach(kind ${ARGN})
    if(kind STREQUAL "aten")
      list(APPEND headers <ATen/ATen.h>)
    elseif(kind STREQUAL "cli")
      list(APPEND headers <CLI/CLI.hpp>)
    elseif(kind STREQUAL "json")
      list(APPEND headers <nlohmann/json.hpp> <fmt/format.h>)
    elseif(kind STREQUAL "gtest")
      list(APPEND headers <gtest/gtest.h>)
    else()
      message(FATAL_ERROR "modelstat_precompile: unknown kind '${kind}'")
    endif()
  endforeach()
  # C++ sources only (a target may also hold CUDA sources).
  set(cxx_headers)
  foreach(h ${headers})
    string(REPLACE ">" "$<ANGLE-R>" h "${h}")
    list(APPEND cxx_headers "$<$<COMPILE_LANGUAGE:CXX>:${h}>")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${cxx_headers})
endfunction()
