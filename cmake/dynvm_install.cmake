# What `cmake --install build --prefix P` puts under P, the CMake package and pkg-config
# file that let an outside project use it, and the Debian package `cpack -G DEB` makes of
# it (docs/embedding.md, "Installing"):
#
#   bin/                 vm_compile, vm_run, vm_serve, vm_as, vm_dis, onnx_conformance,
#                        onnx_operators
#   lib/                 libdynvm.so.N (the C API), the static libraries of the C++
#                        runtime and compiler
#   include/dynvm/       their headers, by folder as in the tree ("vm/virtual_machine.h")
#   lib/cmake/dynvm/     dynvmConfig.cmake: targets dynvm::runtime, dynvm::c and, with
#                        COMPONENTS compiler, dynvm::compiler
#   lib/pkgconfig/       dynvm.pc (the C API)
#   lib/python3.X/dist-packages/dynvm/   the Python package (python/CMakeLists.txt)
#   share/doc/dynvm/     docs/, and examples/ with a CMake project building them
#
# Runtime targets carry no LLVM, ONNX or protobuf: they are another export set, loaded
# only for the compiler component.
include(CMakePackageConfigHelpers)

# The C++ runtime, for dynvm::runtime: the libraries up to codec (DESIGN.md's layers).
set(DYNVM_RUNTIME_LIBRARIES dynvm_base dynvm_objects dynvm_kernels_core dynvm_kernels dynvm_vm
    dynvm_serializer dynvm_codec)
# The compiler, for dynvm::compiler: IR, front ends, passes, code generation, LLVM.
set(DYNVM_COMPILER_LIBRARIES dynvm_compiler_ir dynvm_relay_text dynvm_compiler_ops dynvm_compiler_passes
    dynvm_codegen dynvm_llvm_codegen dynvm_compiler dynvm_onnx_proto dynvm_onnx)

# Exported as dynvm::<name without the dynvm_ prefix>; the driver library's name is
# taken by the umbrella target dynvm::compiler.
foreach(lib IN LISTS DYNVM_RUNTIME_LIBRARIES DYNVM_COMPILER_LIBRARIES)
  string(REGEX REPLACE "^dynvm_" "" name ${lib})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${name})
endforeach()
set_target_properties(dynvm_compiler PROPERTIES EXPORT_NAME compiler_driver)
set_target_properties(dynvm PROPERTIES EXPORT_NAME c)

add_library(dynvm_runtime INTERFACE)
target_link_libraries(dynvm_runtime INTERFACE dynvm_serializer dynvm_codec dynvm_kernels)
set_target_properties(dynvm_runtime PROPERTIES EXPORT_NAME runtime)
add_library(dynvm_compiler_package INTERFACE)
target_link_libraries(dynvm_compiler_package INTERFACE dynvm_compiler dynvm_onnx dynvm_relay_text)
set_target_properties(dynvm_compiler_package PROPERTIES EXPORT_NAME compiler)

set(DYNVM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/dynvm)
install(TARGETS ${DYNVM_RUNTIME_LIBRARIES} dynvm_runtime dynvm EXPORT dynvmRuntimeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS ${DYNVM_COMPILER_LIBRARIES} dynvm_compiler_package EXPORT dynvmCompilerTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT dynvmRuntimeTargets NAMESPACE dynvm:: DESTINATION ${DYNVM_CMAKE_DIR})
install(EXPORT dynvmCompilerTargets NAMESPACE dynvm:: DESTINATION ${DYNVM_CMAKE_DIR})
configure_package_config_file(cmake/dynvmConfig.cmake.in ${PROJECT_BINARY_DIR}/dynvmConfig.cmake
                              INSTALL_DESTINATION ${DYNVM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dynvmConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dynvmConfig.cmake ${PROJECT_BINARY_DIR}/dynvmConfigVersion.cmake
        DESTINATION ${DYNVM_CMAKE_DIR})

# Headers: every header of the installed layers, and the generated ones.
foreach(dir base objects kernels vm serializer codec capi compiler)
  install(DIRECTORY ${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dynvm/${dir}
          FILES_MATCHING PATTERN "*.h" PATTERN "*.def" PATTERN "testing" EXCLUDE)
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/serializer/executable_generated.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dynvm/serializer)
install(FILES ${PROJECT_BINARY_DIR}/capi/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dynvm/capi)

file(RELATIVE_PATH DYNVM_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(cmake/dynvm.pc.in ${PROJECT_BINARY_DIR}/dynvm.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/dynvm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(TARGETS vm_compile vm_run vm_serve vm_as vm_dis onnx_conformance onnx_operators
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES examples/embed.cc examples/embed_c.c examples/compile.cc examples/mlp.relay examples/dynamic_add.s
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(FILES examples/package/CMakeLists.txt DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/package)

# cpack -G DEB: dynvm_<version>_amd64.deb. Library dependencies come from
# dpkg-shlibdeps; building against dynvm::runtime also needs the -dev packages of its
# public dependencies, suggested.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME dynvm)
set(CPACK_PACKAGE_VENDOR "dynvm")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Runtime and compiler for dynamic neural networks")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "dynvm developers <dynvm@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= 3.11), python3 (<< 3.12), python3-numpy")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "libabsl-dev, libflatbuffers-dev, libdlpack-dev, zlib1g-dev, llvm-14-dev, libonnx-dev, libprotobuf-dev, nlohmann-json3-dev")
include(CPack)
