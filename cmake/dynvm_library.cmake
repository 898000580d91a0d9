# The one helper through which every folder declares its library, so that layering is
# explicit: a target names the targets it may depend on and nothing else.
#
#   dynvm_library(NAME dynvm_vm SRCS a.cc b.cc DEPS dynvm_kernels absl::status)
# Headers are included by their path from the root ("vm/virtual_machine.h"): the source
# and build trees here, include/dynvm once installed (cmake/dynvm_install.cmake).
include(GNUInstallDirs)
set(DYNVM_INCLUDE_DIRS $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}> $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/dynvm>)

function(dynvm_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  if(ARG_SRCS)
    add_library(${ARG_NAME} STATIC ${ARG_SRCS})
    target_include_directories(${ARG_NAME} PUBLIC ${DYNVM_INCLUDE_DIRS})
    target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS})
    dynvm_warnings(${ARG_NAME})
  else()
    add_library(${ARG_NAME} INTERFACE)
    target_include_directories(${ARG_NAME} INTERFACE ${DYNVM_INCLUDE_DIRS})
    target_link_libraries(${ARG_NAME} INTERFACE ${ARG_DEPS})
  endif()
endfunction()

# Warnings on for our own code; third-party headers come in as system includes.
# GCC 12's -Wmaybe-uninitialized fires at -O2/-O3 inside std::string and
# absl::InlinedVector moves out of StatusOr (false positives, GCC PR 105562 and kin);
# sanitizer builds still catch real uninitialised reads.
function(dynvm_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter
                         $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)
endfunction()

# A binary in build/bin linked against the given targets.
function(dynvm_binary)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
  dynvm_warnings(${ARG_NAME})
endfunction()
