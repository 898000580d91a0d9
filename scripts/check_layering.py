#!/usr/bin/env python3
"""Checks the layering of DESIGN.md on every #include of the tree.

The folders form a stack; a file may include from its own folder and from folders
below it, never from one above it or from a peer on the same level:

    base < objects < kernels < vm < serializer < codec < compiler < tools | python | capi

Two finer rules hold inside that stack:

  * kernels/ has a core (the calling convention, registry, thread pool, CPU features and
    scratch memory: the files at the top of kernels/ that `dynvm_kernels_core` builds).
    The core includes no kernel family, and vm/, serializer/, codec/ and compiler/ir/
    include only the core of kernels/ (kernels/api.h, the library's registration, is
    for what binds executables: tools, python, capi and the compiler's passes).
  * The runtime (base, objects, kernels, vm, serializer, codec) includes no LLVM, ONNX
    or protobuf header: `ldd vm_run` must show none of them.

tests/, bench/, examples/ and fuzz targets may include anything. Prints one line per
violation, `path:line: what is wrong`, and exits 1 if there is any, else 0.

    scripts/check_layering.py            # the repository this script lives in
    scripts/check_layering.py --root DIR # another tree (the check's own test)
"""

import argparse
import os
import re
import sys

# Each layer's folders; a folder may include from its own layer's folder and any
# layer before it.
LAYERS = [
    ["base"],
    ["objects"],
    ["kernels"],
    ["vm"],
    ["serializer"],
    ["codec"],
    ["compiler"],
    ["tools", "python", "capi"],
]
RANK = {folder: rank for rank, folders in enumerate(LAYERS) for folder in folders}
RUNTIME = {"base", "objects", "kernels", "vm", "serializer", "codec"}

# The files of the kernels core, as kernels/CMakeLists.txt builds `dynvm_kernels_core`.
KERNELS_CORE = {
    "kernels/kernel.h", "kernels/kernel.cc", "kernels/thread_pool.h",
    "kernels/thread_pool.cc", "kernels/cpu_features.h", "kernels/cpu_features.cc",
    "kernels/scratch.h", "kernels/scratch.cc", "kernels/deadline.h",
}
# Folders that see only the kernels core (as a path prefix).
CORE_ONLY = ("vm/", "serializer/", "codec/", "compiler/ir/")

# Headers the runtime must not see, by the first component of their path.
FOREIGN = {"llvm": "LLVM", "llvm-c": "LLVM", "onnx": "ONNX", "google": "protobuf"}

SOURCE = re.compile(r"\.(h|hpp|cc|cpp|c|def|inc)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def violations(root):
    """Yields (path, line, message) for every include that breaks a rule."""
    for folder in sorted(RANK):
        top = os.path.join(root, folder)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for name in sorted(filenames):
                if not SOURCE.search(name):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                yield from check_file(root, path, folder)


def check_file(root, path, folder):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for number, text in enumerate(f, start=1):
            match = INCLUDE.match(text)
            if not match:
                continue
            included = match.group(2)
            message = check_include(path, folder, included)
            if message:
                yield path, number, message


def check_include(path, folder, included):
    """What is wrong with `path` (in top-level `folder`) including `included`, or None."""
    first = included.split("/", 1)[0]
    if folder in RUNTIME and first in FOREIGN and "/" in included:
        return (f"the runtime includes {FOREIGN[first]} header '{included}': "
                f"only compiler/ may depend on {FOREIGN[first]}")
    if first not in RANK or first == folder:
        if first == "kernels" and path in KERNELS_CORE and included not in KERNELS_CORE:
            return (f"the kernels core includes '{included}': the core "
                    f"({', '.join(sorted(h for h in KERNELS_CORE if h.endswith('.h')))}) "
                    f"includes no kernel family")
        return None
    if RANK[first] > RANK[folder]:
        return (f"{folder}/ includes '{included}' from {first}/, a layer above it: "
                f"expected only {', '.join(allowed(folder))}")
    if RANK[first] == RANK[folder]:
        return (f"{folder}/ includes '{included}' from its peer {first}/: "
                f"expected only {', '.join(allowed(folder))}")
    if first == "kernels" and path.startswith(CORE_ONLY) and included not in KERNELS_CORE:
        return (f"{path.rsplit('/', 1)[0]}/ includes '{included}': it may include only "
                f"the kernels core (kernels/kernel.h, thread_pool.h, cpu_features.h, "
                f"scratch.h, deadline.h)")
    return None


def allowed(folder):
    return [f"{f}/" for f in sorted(RANK, key=lambda f: (RANK[f], f))
            if RANK[f] < RANK[folder] or f == folder]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), help="the tree to check (default: this repository)")
    args = parser.parse_args()
    if not os.path.isdir(args.root):
        print(f"check_layering: --root {args.root}: not a directory", file=sys.stderr)
        return 2
    found = 0
    for path, line, message in violations(args.root):
        print(f"{path}:{line}: {message}")
        found += 1
    if found:
        print(f"check_layering: {found} include(s) break the layering", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
