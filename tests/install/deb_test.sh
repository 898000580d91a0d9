#!/bin/sh
# The Debian package (cpack -G DEB, cmake/dynvm_install.cmake) unpacked into a clean
# directory tree (dpkg -x): it is dynvm_<version>_amd64.deb, declares the Debian
# packages its binaries need, every ELF file in it resolves each shared library it needs
# (ldd) to a file some installed Debian package owns (dpkg -S), and its tools and Python
# package work from the tree: vm_compile and vm_run on examples/mlp.relay, dynvm.compile
# on it from Python.
# usage: deb_test.sh BUILD_DIR SOURCE_DIR PYTHON PYTHON_INSTALL_DIR VERSION
set -eu
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) python=$3 pydir=$4 version=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "deb_test.sh: $*" >&2; exit 1; }

cd "$dir"
cpack --config "$build/CPackConfig.cmake" -B "$dir/out" > "$dir/log" 2>&1 || { cat "$dir/log" >&2; fail "cpack failed"; }
deb=$dir/out/dynvm_${version}_amd64.deb
[ -f "$deb" ] || fail "no $deb: $(ls "$dir/out")"
depends=$(dpkg-deb -f "$deb" Depends)
for needed in python3-numpy libabsl libllvm14 libonnx libprotobuf libstdc++6; do
  case "$depends" in *"$needed"*) ;; *) fail "Depends lacks $needed: $depends" ;; esac
done

dpkg -x "$deb" "$dir/root"
# A library's path as ldd prints it may be the merged-/usr alias of the one dpkg records.
owned() {
  dpkg -S "$1" > /dev/null 2>&1 || dpkg -S "/usr$1" > /dev/null 2>&1 ||
    dpkg -S "$(readlink -f "$1")" > /dev/null 2>&1
}
elves=0
: > "$dir/libs"
for f in $(find "$dir/root" -type f -perm -u+x -o -type f -name "*.so*"); do
  [ "$(head -c 4 "$f" | tail -c 3)" = "ELF" ] || continue
  elves=$((elves + 1))
  out=$(LD_LIBRARY_PATH="$dir/root/usr/lib" ldd "$f") || fail "ldd $f: $out"
  case "$out" in *"not found"*) fail "$f: $out" ;; esac
  # The package's own libdynvm.so aside, each library once.
  echo "$out" | awk -v own="$dir/root/" '/=>/ && index($3, own) != 1 { print $3 }' >> "$dir/libs"
done
[ "$elves" -ge 10 ] || fail "only $elves ELF files in the package"
for lib in $(sort -u "$dir/libs"); do
  owned "$lib" || fail "$lib is needed but no Debian package owns it"
done

bin=$dir/root/usr/bin
"$bin/vm_run" --version > /dev/null
"$bin/vm_compile" "$src/examples/mlp.relay" -o "$dir/mlp.fbs"
"$bin/vm_run" "$dir/mlp.fbs" --input=x=1x4xf32=1,1,1,1 --input=w1=3x4xf32=1,0,0,0,0,1,0,0,0,0,1,-1 \
  --input=b1=3xf32=0,0,-1 --input=w2=2x3xf32=1,1,1,1,-1,0 --input=b2=2xf32=0.5,0 \
  --expected_output=1x2xf32=2.5,0 > /dev/null
env -u PYTHONPATH PYTHONPATH="$dir/root/usr/$pydir" "$python" -c "
import sys, numpy as np, dynvm
assert dynvm.__file__.startswith('$dir/root/'), dynvm.__file__
exe = dynvm.compile(sys.argv[1])
w = [np.array(v, np.float32).reshape(s) for v, s in (([1,1,1,1], (1, 4)), ([1,0,0,0,0,1,0,0,0,0,1,-1], (3, 4)),
     ([0,0,-1], (3,)), ([1,1,1,1,-1,0], (2, 3)), ([0.5,0], (2,)))]
np.testing.assert_array_equal(dynvm.VirtualMachine(exe).invoke('main', *w), [[2.5, 0]])
" "$src/examples/mlp.relay"
echo "deb ok: $(basename "$deb"), $elves ELF files"
