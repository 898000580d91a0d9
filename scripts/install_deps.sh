#!/usr/bin/env bash
# Installs the Debian 12 packages dynvm needs to build and test (run as root).
# Does nothing when they are all present, so it is cheap to call before every build.
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache pkg-config
  libabsl-dev libfmt-dev flatbuffers-compiler libflatbuffers-dev libdlpack-dev
  zlib1g-dev  # inflates numpy's compressed .npz archives (serializer/npz.h)
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-numpy   # writes the .npy fixtures of the tests (tests/serializer/testdata)
  libonnx-dev libprotobuf-dev  # the ONNX front end (compiler/frontend/onnx): ONNX's protobuf
                               # classes, checker and shape inference (no protoc needed)
  libonnx-testdata  # ONNX's backend test cases, run by tools/onnx_conformance
  llvm-14-dev  # native kernels (compiler/llvm): LLVM's CMake package, headers and libLLVM-14
  libcpp-httplib-dev nlohmann-json3-dev  # vm_serve: HTTP/1.1 server and JSON (tools/serve);
                                         # JSON also reads TVM's #[metadata] (compiler)
  wrk  # vm_serve's load script (bench/serve_load.sh)
  pybind11-dev python3-dev  # the Python module `dynvm` (python/), for Debian's /usr/bin/python3
  clang-14 libclang-rt-14-dev  # the sanitizer build and its libFuzzer targets (tests/fuzz)
  dpkg-dev file  # cpack -G DEB: dpkg-shlibdeps finds the package's library dependencies
                 # (tests/install/deb_test.sh)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
