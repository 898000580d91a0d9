#!/usr/bin/env python3
"""Tests of scripts/check_layering.py: the repository passes, and each rule fails on a
tree with one planted bad include, naming the file, the line and the rule."""

import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "check_layering.py")


def run(root):
    """(exit code, stdout) of the check over `root`."""
    done = subprocess.run([sys.executable, SCRIPT, "--root", root], capture_output=True,
                          text=True, check=False)
    return done.returncode, done.stdout


class CheckLayeringTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        # A small tree that keeps every rule.
        self.write("objects/ndarray.h", '#include "base/status_macros.h"\n')
        self.write("kernels/kernel.h", '#include "objects/ndarray.h"\n')
        self.write("kernels/gemm/gemm.cc", '#include "kernels/kernel.h"\n')
        self.write("vm/executable.h", '#include "kernels/kernel.h"\n#include <vector>\n')
        self.write("compiler/llvm/codegen.cc", '#include <llvm/IR/Module.h>\n'
                   '#include "kernels/gemm/gemm.h"\n#include "vm/executable.h"\n')
        self.write("tools/vm_run.cc", '#include "kernels/api.h"\n#include "compiler/x.h"\n')
        self.write("tests/vm/any_test.cc", '#include "tools/vm_run.h"\n')

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "a", encoding="utf-8") as f:
            f.write(text)

    def assert_fails(self, expected_location, expected_words):
        code, out = run(self.root)
        self.assertEqual(code, 1, out)
        self.assertIn(expected_location, out)
        for word in expected_words:
            self.assertIn(word, out)

    def test_repository_passes(self):
        code, out = run(ROOT)
        self.assertEqual(code, 0, out)

    def test_small_tree_passes(self):
        code, out = run(self.root)
        self.assertEqual((code, out), (0, ""))

    def test_include_from_a_layer_above_fails(self):
        self.write("vm/executable.h", '#include "serializer/executable_file.h"\n')
        self.assert_fails("vm/executable.h:3:", ["serializer/executable_file.h",
                                                  "a layer above"])

    def test_include_from_a_peer_fails(self):
        self.write("capi/c_api.cc", '#include "tools/run/input_parser.h"\n')
        self.assert_fails("capi/c_api.cc:1:", ["peer tools/"])

    def test_runtime_including_llvm_onnx_or_protobuf_fails(self):
        for header, name in [("llvm/IR/Module.h", "LLVM"), ("onnx/onnx_pb.h", "ONNX"),
                             ("google/protobuf/message.h", "protobuf")]:
            with self.subTest(header=header):
                self.tearDown()
                self.setUp()
                self.write("kernels/gemm/gemm.cc", f"#include <{header}>\n")
                self.assert_fails("kernels/gemm/gemm.cc:2:", [name, header])

    def test_kernels_core_including_a_family_fails(self):
        self.write("kernels/kernel.h", '#include "kernels/gemm/gemm.h"\n')
        self.assert_fails("kernels/kernel.h:2:", ["kernels core", "kernel family"])

    def test_vm_including_a_kernel_family_fails(self):
        self.write("vm/executable.h", '#include "kernels/elementwise/binary.h"\n')
        self.assert_fails("vm/executable.h:3:", ["only the kernels core"])

    def test_missing_root_is_an_error(self):
        code, _ = run(os.path.join(self.root, "absent"))
        self.assertEqual(code, 2)


if __name__ == "__main__":
    unittest.main()
