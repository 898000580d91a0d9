#!/bin/sh
# Installs the build into a temporary prefix and uses only what it installed:
# - the embedding examples, built as an outside CMake project (find_package(dynvm) with
#   the compiler component) and run by tests/examples/examples_test.sh with the
#   installed tools, and the compiler example compiling examples/mlp.relay;
# - the C example again, built with pkg-config's flags for dynvm.pc;
# - the Python package, imported from the prefix with the build tree out of the path,
#   compiling and running the tiny BERT against PyTorch's goldens (test_dynvm.py's
#   CompileTest).
# usage: install_test.sh BUILD_DIR SOURCE_DIR PYTHON PYTHON_INSTALL_DIR
set -eu
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) python=$3 pydir=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
prefix=$dir/prefix

# Each step's output is shown only when it fails.
quiet() {
  "$@" > "$dir/log" 2>&1 || { cat "$dir/log" >&2; echo "install_test.sh: failed: $*" >&2; exit 1; }
}
quiet cmake --install "$build" --prefix "$prefix"
examples=$prefix/share/doc/dynvm/examples
quiet cmake -S "$examples/package" -B "$dir/examples" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix"
quiet cmake --build "$dir/examples"
sh "$src/tests/examples/examples_test.sh" "$prefix/bin/vm_as" "$prefix/bin/vm_run" "$dir/examples/embed" \
  "$examples" "$prefix/bin/vm_compile" "$dir/examples/embed_c"
# The compiler example compiles what vm_compile does: the same program runs alike.
"$dir/examples/compile" "$examples/mlp.relay" "$dir/mlp.fbs" > /dev/null
"$prefix/bin/vm_run" "$dir/mlp.fbs" --input=x=1x4xf32=1,1,1,1 --input=w1=3x4xf32=1,0,0,0,0,1,0,0,0,0,1,-1 \
  --input=b1=3xf32=0,0,-1 --input=w2=2x3xf32=1,1,1,1,-1,0 --input=b2=2xf32=0.5,0 \
  --expected_output=1x2xf32=2.5,0 > /dev/null

# pkg-config: the C example from dynvm.pc's flags alone, run against the installed library.
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs dynvm)
cc "$examples/embed_c.c" $flags -o "$dir/embed_c_pc"
"$prefix/bin/vm_as" "$examples/dynamic_add.s" -o "$dir/add.fbs"
LD_LIBRARY_PATH="$prefix/lib" "$dir/embed_c_pc" "$dir/add.fbs" | grep -q "^count(0, 1000) = 1000$"

cd "$dir"
env -u PYTHONPATH PYTHONPATH="$prefix/$pydir" DYNVM_EXPECTED_PACKAGE_DIR="$prefix/$pydir/dynvm" \
  "$python" "$src/tests/python/test_dynvm.py" CompileTest
echo "install ok"
