"""Tests of the Python module `dynvm` (python/, docs/python.md).

Run by ctest as `python_dynvm_test` with Debian's /usr/bin/python3, PYTHONPATH at the
built module and, in the environment: DYNVM_BERT_MINI_EXE (tests/models/bert/bert_mini.onnx
compiled by the fixture `bert_mini_exe`), DYNVM_GOLDEN_DIR (its PyTorch goldens),
DYNVM_VM_COMPILE and DYNVM_VM_AS (to build programs.relay and scalars.s beside this file),
DYNVM_BERT_MINI_ONNX (the model, for dynvm.compile).
"""

import gc
import glob
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import unittest

import numpy as np

import dynvm

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BUILD = ROOT / "build"

BERT_EXE = os.environ.get("DYNVM_BERT_MINI_EXE", str(BUILD / "testdata" / "bert_mini.fbs"))
GOLDEN_DIR = os.environ.get("DYNVM_GOLDEN_DIR", str(ROOT / "tests" / "models" / "bert" / "golden"))
VM_COMPILE = os.environ.get("DYNVM_VM_COMPILE", str(BUILD / "bin" / "vm_compile"))
VM_AS = os.environ.get("DYNVM_VM_AS", str(BUILD / "bin" / "vm_as"))
BERT_ONNX = os.environ.get("DYNVM_BERT_MINI_ONNX", str(ROOT / "tests" / "models" / "bert" / "bert_mini.onnx"))

# dynvm against PyTorch on the tiny BERT: the largest absolute difference allowed in
# either output (float32; measured differences are around 1e-6).
TOLERANCE = 1e-4

INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def golden_cases():
    """{"b2_s7": {"input_ids": array, ..., "pooler_output": array}, ...}"""
    cases = {}
    for path in sorted(glob.glob(os.path.join(GOLDEN_DIR, "*_input_ids.npy"))):
        case = os.path.basename(path)[: -len("_input_ids.npy")]
        cases[case] = {
            name: np.load(os.path.join(GOLDEN_DIR, f"{case}_{name}.npy"))
            for name in INPUTS + ("last_hidden_state", "pooler_output")
        }
    return cases


def max_abs(a, b):
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


class BertTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.exe = dynvm.load(BERT_EXE, trust_native=True)
        cls.cases = golden_cases()
        assert "b2_s7" in cls.cases and "b1_s64" in cls.cases, sorted(cls.cases)

    def inputs(self, case):
        return {name: self.cases[case][name] for name in INPUTS}

    def assert_matches_golden(self, case, hidden, pooled):
        golden = self.cases[case]
        self.assertEqual(hidden.shape, golden["last_hidden_state"].shape)
        self.assertEqual(pooled.shape, golden["pooler_output"].shape)
        self.assertEqual(hidden.dtype, np.float32)
        self.assertLess(max_abs(hidden, golden["last_hidden_state"]), TOLERANCE, case)
        self.assertLess(max_abs(pooled, golden["pooler_output"]), TOLERANCE, case)

    def test_memory_limit_is_memory_error_and_vm_recovers(self):
        # 64 KiB cannot hold a [2, 512, 64] f32 activation (256 KiB); [2, 7] fits easily.
        vm = dynvm.VirtualMachine(self.exe, max_memory_bytes=64 << 10)
        with self.assertRaises(MemoryError) as caught:
            vm.invoke("main", **self.inputs("b2_s512"))
        self.assertIsInstance(caught.exception, dynvm.ResourceExhaustedError)
        self.assertIn("memory limit of 65536 bytes for this invocation exceeded", str(caught.exception))
        self.assert_matches_golden("b2_s7", *vm.invoke("main", **self.inputs("b2_s7")))

    def test_matches_pytorch_goldens(self):
        vm = dynvm.VirtualMachine(self.exe)
        for case in self.cases:
            with self.subTest(case=case):
                out = vm.invoke("main", **self.inputs(case))
                self.assertIsInstance(out, tuple)
                self.assertEqual(len(out), 2)
                self.assert_matches_golden(case, *out)

    def test_positional_named_and_keyword_calls_agree(self):
        vm = dynvm.VirtualMachine(self.exe)
        args = [self.cases["b2_s7"][name] for name in INPUTS]
        by_keyword = vm.invoke("main", **self.inputs("b2_s7"))
        by_position = vm.invoke("main", *args)
        mixed = vm.invoke("main", args[0], token_type_ids=args[2], attention_mask=args[1])
        named = vm.invoke_named("main", *args)
        self.assertEqual(list(named), ["last_hidden_state", "pooler_output"])
        for i, name in enumerate(named):
            np.testing.assert_array_equal(by_keyword[i], by_position[i])
            np.testing.assert_array_equal(by_keyword[i], mixed[i])
            np.testing.assert_array_equal(by_keyword[i], named[name])

    def test_signature(self):
        # main, and the packed-token encoder the compiler derives from it.
        self.assertEqual([f.name for f in self.exe.functions], ["main", "main_packed"])
        self.assertEqual([p.name for p in self.exe.function("main_packed").inputs],
                         ["input_ids", "token_type_ids", "offsets"])
        main = self.exe.function("main")
        self.assertEqual([p.name for p in main.inputs], list(INPUTS))
        for p in main.inputs:
            self.assertEqual(p.kind, "tensor")
            self.assertEqual(p.dtype, np.dtype("int64"))
            self.assertEqual(p.shape, ["batch", "sequence"])
            self.assertEqual(p.fields, [])
        self.assertEqual(len(main.outputs), 1)
        result = main.outputs[0]
        self.assertEqual(result.kind, "tuple")
        self.assertIsNone(result.dtype)
        self.assertIsNone(result.shape)
        self.assertEqual([f.name for f in result.fields], ["last_hidden_state", "pooler_output"])
        self.assertEqual(result.fields[0].shape, ["batch", "sequence", 64])
        self.assertEqual(result.fields[1].dtype, np.dtype("float32"))
        self.assertIn("input_ids: tensor i64[batch, sequence]", repr(main))
        self.assertIn("pooler_output: tensor f32[batch, 64]", repr(main))
        self.assertEqual(repr(main.inputs[0]), "ValueSpec(input_ids: tensor i64[batch, sequence])")
        self.assertIn("main", repr(self.exe))

    def test_outputs_view_runtime_memory(self):
        vm = dynvm.VirtualMachine(self.exe)
        hidden, pooled = vm.invoke("main", **self.inputs("b2_s7"))
        for out in (hidden, pooled):
            owner = out.base
            self.assertIsInstance(owner, dynvm.Tensor)
            # The array's data is the runtime tensor's, not a copy.
            self.assertEqual(owner.data_ptr, out.ctypes.data)
            self.assertEqual(owner.shape, out.shape)
            self.assertEqual(owner.dtype, out.dtype)
            self.assertEqual(owner.data_ptr % 64, 0)  # the runtime's allocator aligns so
            self.assertFalse(out.flags.writeable)
            self.assertFalse(out.flags.owndata)
            with self.assertRaises(ValueError):
                out[0] = 0
        # The VM reuses its pooled memory across calls, but not memory an array still
        # views: after more runs the first results are intact.
        for _ in range(3):
            vm.invoke("main", **self.inputs("b1_s64"))
        self.assert_matches_golden("b2_s7", hidden, pooled)

    def test_outputs_outlive_vm_and_executable(self):
        exe = dynvm.load(BERT_EXE, trust_native=True)
        vm = dynvm.VirtualMachine(exe, num_threads=1)
        hidden, pooled = vm.invoke("main", **self.inputs("b1_s64"))
        named = vm.invoke_named("main", **self.inputs("b2_s7"))
        del vm, exe
        gc.collect()
        self.assert_matches_golden("b1_s64", hidden, pooled)
        self.assert_matches_golden("b2_s7", named["last_hidden_state"], named["pooler_output"])

    def test_two_vms_on_two_threads_share_an_executable(self):
        reference = {case: dynvm.VirtualMachine(self.exe).invoke("main", **self.inputs(case))
                     for case in ("b2_s7", "b1_s64", "b3_s128")}
        results, errors = {}, []

        def work(worker):
            try:
                vm = dynvm.VirtualMachine(self.exe, num_threads=1)
                for round_ in range(3):
                    for case in reference:
                        results[(worker, round_, case)] = vm.invoke("main", **self.inputs(case))
            except Exception as e:  # reported below, on the main thread
                errors.append(e)

        threads = [threading.Thread(target=work, args=(w,)) for w in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(results), 2 * 3 * len(reference))
        for (_, _, case), (hidden, pooled) in results.items():
            self.assertLess(max_abs(hidden, reference[case][0]), 1e-5, case)
            self.assertLess(max_abs(pooled, reference[case][1]), 1e-5, case)
            self.assert_matches_golden(case, hidden, pooled)

    def test_one_vm_called_from_threads_serializes(self):
        vm = dynvm.VirtualMachine(self.exe)
        outputs, errors = [], []

        def work():
            try:
                for _ in range(4):
                    outputs.append(vm.invoke("main", **self.inputs("b2_s7")))
            except Exception as e:
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(outputs), 12)
        for hidden, pooled in outputs:
            self.assert_matches_golden("b2_s7", hidden, pooled)

    def test_num_threads(self):
        self.assertEqual(dynvm.VirtualMachine(self.exe, num_threads=2).num_threads, 2)
        self.assertGreaterEqual(dynvm.VirtualMachine(self.exe).num_threads, 1)
        with self.assertRaisesRegex(dynvm.InvalidArgumentError, "num_threads must be at least 1"):
            dynvm.VirtualMachine(self.exe, num_threads=0)

    def test_errors_name_the_problem_and_leave_the_vm_usable(self):
        vm = dynvm.VirtualMachine(self.exe)
        good = self.inputs("b2_s7")
        ids = good["input_ids"]
        bad_calls = [
            # (what, call, exception classes, message pattern)
            ("unknown function", lambda: vm.invoke("nope", **good),
             (dynvm.NotFoundError, LookupError), r"no function 'nope'.*it has main"),
            ("wrong dtype", lambda: vm.invoke("main", **{**good, "input_ids": ids.astype(np.int32)}),
             (dynvm.InvalidArgumentError, ValueError), r"argument 0 \('input_ids'\).*i32.*dtype"),
            ("wrong rank", lambda: vm.invoke("main", **{**good, "attention_mask": ids.reshape(-1)}),
             (dynvm.InvalidArgumentError, ValueError), r"argument 1 \('attention_mask'\).*rank"),
            ("inconsistent dims", lambda: vm.invoke("main", **{**good, "token_type_ids": ids[:1]}),
             (dynvm.InvalidArgumentError, ValueError), r"argument 2 \('token_type_ids'\)"),
            ("missing input", lambda: vm.invoke("main", input_ids=ids, token_type_ids=ids),
             (dynvm.InvalidArgumentError, ValueError), r"missing input for 'main': 'attention_mask' \(argument 1, tensor i64"),
            ("unknown keyword", lambda: vm.invoke("main", **good, position_ids=ids),
             (dynvm.InvalidArgumentError, ValueError), r"unknown input name 'position_ids': 'main' has parameters input_ids, "),
            ("given twice", lambda: vm.invoke("main", ids, **good),
             (dynvm.InvalidArgumentError, ValueError), r"input 'input_ids' \(argument 0 of 'main'\) given twice \(again by keyword 'input_ids'\)"),
            ("too many", lambda: vm.invoke("main", ids, ids, ids, ids),
             (dynvm.InvalidArgumentError, ValueError), r"too many inputs: 'main' takes 3 \(.*\) but positional argument 3 would be"),
            ("not a tensor", lambda: vm.invoke("main", **{**good, "input_ids": [[1, 2]]}),
             (dynvm.InvalidArgumentError, ValueError), r"'input_ids'.*expected a tensor.*list"),
        ]
        for what, call, classes, pattern in bad_calls:
            with self.subTest(what):
                with self.assertRaisesRegex(classes[0], pattern) as caught:
                    call()
                for cls in classes + (dynvm.Error, RuntimeError):
                    self.assertIsInstance(caught.exception, cls)
                self.assertIsInstance(caught.exception.code, str)
                self.assert_matches_golden("b2_s7", *vm.invoke("main", **good))


class LoadTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.data = pathlib.Path(BERT_EXE).read_bytes()

    def test_load_bytes_and_paths(self):
        ids = np.load(os.path.join(GOLDEN_DIR, "b2_s7_input_ids.npy"))
        mask = np.ones_like(ids)
        expected = dynvm.VirtualMachine(dynvm.load(BERT_EXE, trust_native=True)).invoke("main", ids, mask, mask)
        for source in (self.data, bytearray(self.data), memoryview(self.data)):
            exe = dynvm.load_bytes(source, trust_native=True)
            out = dynvm.VirtualMachine(exe).invoke("main", ids, mask, mask)
            np.testing.assert_array_equal(out[0], expected[0])
        self.assertEqual([f.name for f in dynvm.load(pathlib.Path(BERT_EXE), trust_native=True).functions],
                         ["main", "main_packed"])

    def test_native_code_runs_only_when_trusted(self):
        # The fixture was compiled with native code: untrusted, a RuntimeWarning, and the
        # evaluator's results within the goldens' tolerance of the trusted ones.
        ids = np.load(os.path.join(GOLDEN_DIR, "b2_s7_input_ids.npy"))
        mask = np.ones_like(ids)
        with self.assertWarnsRegex(RuntimeWarning, "native code is not trusted"):
            untrusted = dynvm.load(BERT_EXE)
        trusted = dynvm.load(BERT_EXE, trust_native=True)
        self.assertTrue(untrusted.native_code_ignored)
        self.assertFalse(trusted.native_code_ignored)
        with self.assertWarnsRegex(RuntimeWarning, "trust_native=True runs it"):
            self.assertTrue(dynvm.load_bytes(self.data).native_code_ignored)
        self.assertFalse(dynvm.load_bytes(self.data, trust_native=True).native_code_ignored)
        a = dynvm.VirtualMachine(untrusted).invoke("main", ids, mask, mask)
        b = dynvm.VirtualMachine(trusted).invoke("main", ids, mask, mask)
        for x, y in zip(a, b):
            self.assertLess(max_abs(x, y), TOLERANCE)

    def test_unreadable_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            missing = os.path.join(tmp, "missing.fbs")
            with self.assertRaisesRegex(dynvm.NotFoundError, "missing.fbs"):
                dynvm.load(missing)
            with self.assertRaisesRegex(dynvm.InvalidArgumentError, "not a regular file"):
                dynvm.load(tmp)

    def test_corrupt_bytes(self):
        d = self.data
        corrupt = {
            "empty": (b"", "smaller than the 64-byte executable header"),
            "truncated": (d[: len(d) // 2], "truncated"),
            "bad magic": (b"\xff" * 8 + d[8:], "not a dynvm executable"),
            "flipped metadata": (d[:200] + bytes(b ^ 0x5A for b in d[200:400]) + d[400:],
                                 "FlatBuffers verification"),
        }
        for what, (data, pattern) in corrupt.items():
            with self.subTest(what):
                with self.assertRaisesRegex(dynvm.InvalidArgumentError, pattern):
                    dynvm.load_bytes(data)

    def test_error_classes(self):
        for cls, builtin in ((dynvm.InvalidArgumentError, ValueError),
                             (dynvm.NotFoundError, LookupError),
                             (dynvm.ResourceExhaustedError, MemoryError),
                             (dynvm.DeadlineExceededError, TimeoutError),
                             (dynvm.UnimplementedError, NotImplementedError)):
            self.assertTrue(issubclass(cls, dynvm.Error), cls)
            self.assertTrue(issubclass(cls, builtin), cls)
        self.assertTrue(issubclass(dynvm.Error, RuntimeError))


class CompileTest(unittest.TestCase):
    """dynvm.compile: the compiler extension, loaded on first use. tests/install runs this
    class on the installed package, naming it in DYNVM_EXPECTED_PACKAGE_DIR."""

    @classmethod
    def setUpClass(cls):
        expected = os.environ.get("DYNVM_EXPECTED_PACKAGE_DIR")
        for module in (dynvm, dynvm._runtime) if expected else ():
            found = os.path.realpath(module.__file__)
            if not found.startswith(os.path.realpath(expected)):
                raise AssertionError(f"{module.__name__} is {found}, expected it under {expected}")

    def test_compiles_onnx_and_matches_pytorch(self):
        for model in (BERT_ONNX, pathlib.Path(BERT_ONNX), pathlib.Path(BERT_ONNX).read_bytes()):
            for target_cpu in ("native", "none"):
                with self.subTest(type=type(model).__name__, target_cpu=target_cpu):
                    exe = dynvm.compile(model, target_cpu=target_cpu)
                    self.assertEqual([f.name for f in exe.functions], ["main", "main_packed"])
                    vm = dynvm.VirtualMachine(exe)
                    for case, golden in golden_cases().items():
                        hidden, pooled = vm.invoke("main", **{n: golden[n] for n in INPUTS})
                        self.assertLess(max_abs(hidden, golden["last_hidden_state"]), TOLERANCE, case)
                        self.assertLess(max_abs(pooled, golden["pooler_output"]), TOLERANCE, case)

    def test_compiles_relay_text_and_saves(self):
        text = (ROOT / "examples" / "mlp.relay").read_bytes()
        with tempfile.TemporaryDirectory() as tmp:
            for exe in (dynvm.compile(text, opt_level=0, fuse=False),
                        dynvm.compile(ROOT / "examples" / "mlp.relay", opt_level=3)):
                path = os.path.join(tmp, "mlp.fbs")
                exe.save(path)
                again = dynvm.load(path)
                rng = np.random.default_rng(5)
                x, w1, b1, w2, b2 = (rng.standard_normal(s).astype(np.float32)
                                     for s in ((5, 4), (3, 4), (3,), (2, 3), (2,)))
                first = dynvm.VirtualMachine(exe).invoke("main", x, w1, b1, w2, b2)
                np.testing.assert_array_equal(dynvm.VirtualMachine(again).invoke("main", x, w1, b1, w2, b2), first)
                want = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
                np.testing.assert_allclose(first, want, rtol=1e-5, atol=1e-5)

    def test_errors_carry_the_compilers_message(self):
        with self.assertRaisesRegex(dynvm.InvalidArgumentError, r"(?s)<bytes>:2:\d+: unbound variable %y.*\^"):
            dynvm.compile(b'#[version = "0.0.5"]\ndef @main(%x: Tensor[(2), float32]) { add(%x, %y) }\n')
        with self.assertRaisesRegex(dynvm.InvalidArgumentError, "model"):
            dynvm.compile(b"\x08\x07garbage that is no ModelProto", format="onnx")
        with self.assertRaisesRegex(dynvm.InvalidArgumentError, "opt_level must be 0 to 3"):
            dynvm.compile(ROOT / "examples" / "mlp.relay", opt_level=7)
        with self.assertRaisesRegex(ValueError, "format must be"):
            dynvm.compile(b"def", format="tflite")
        with self.assertRaises(FileNotFoundError):
            dynvm.compile("/nonexistent/model.onnx")

    def test_runtime_import_loads_no_compiler(self):
        probe = ("import dynvm, sys\n"
                 "maps = open('/proc/self/maps').read()\n"
                 "assert 'dynvm._compiler' not in sys.modules\n"
                 "assert 'libLLVM' not in maps and 'libonnx' not in maps and 'libprotobuf' not in maps\n"
                 "dynvm.compile(sys.argv[1], target_cpu='none')\n"
                 "assert 'libLLVM' in open('/proc/self/maps').read()\n")
        subprocess.run([sys.executable, "-c", probe, str(ROOT / "examples" / "mlp.relay")], check=True)


def build(tool, source, out):
    subprocess.run([tool, str(source), "-o", str(out)], check=True, capture_output=True)
    return dynvm.load(out)


class DlpackOnly:
    """A tensor reachable only through __dlpack__ (as a PyTorch tensor is)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class ProgramsTest(unittest.TestCase):
    """tests/python/programs.relay: what crosses the boundary without copies."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.exe = build(VM_COMPILE, HERE / "programs.relay", pathlib.Path(cls.tmp.name) / "p.fbs")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        self.vm = dynvm.VirtualMachine(self.exe)
        self.x = np.arange(12, dtype=np.float32).reshape(3, 4)

    def test_contiguous_input_is_not_copied(self):
        out = self.vm.invoke("identity", self.x)
        self.assertTrue(np.shares_memory(out, self.x))
        self.assertEqual(out.base.data_ptr, self.x.ctypes.data)
        flat = self.vm.invoke("flatten", x=self.x)
        self.assertEqual(flat.shape, (12,))
        self.assertTrue(np.shares_memory(flat, self.x))
        np.testing.assert_array_equal(flat, self.x.reshape(-1))

    def test_input_stays_alive_while_viewed(self):
        x = np.arange(8, dtype=np.float32).reshape(2, 4) * 3
        out = self.vm.invoke("identity", x)
        del x
        gc.collect()
        np.testing.assert_array_equal(out, np.arange(8, dtype=np.float32).reshape(2, 4) * 3)

    def test_non_contiguous_and_misaligned_inputs_are_copied(self):
        strided = self.x[:, ::-1]
        out = self.vm.invoke("identity", strided)
        np.testing.assert_array_equal(out, strided)
        self.assertFalse(np.shares_memory(out, self.x))
        raw = np.zeros(4 * 12 + 1, np.uint8)
        misaligned = np.frombuffer(raw.data, np.float32, count=12, offset=1).reshape(3, 4)
        self.assertFalse(misaligned.flags.aligned)
        out = self.vm.invoke("identity", misaligned)
        np.testing.assert_array_equal(out, misaligned)
        self.assertFalse(np.shares_memory(out, raw))
        self.assertEqual(out.base.data_ptr % 64, 0)

    def test_dlpack_input_is_not_copied(self):
        x = self.x.copy()
        out = self.vm.invoke("identity", DlpackOnly(x))
        self.assertEqual(out.base.data_ptr, x.ctypes.data)
        del x
        gc.collect()
        np.testing.assert_array_equal(out, self.x)

    def test_scalars_for_rank_0_tensors_and_nested_tuples(self):
        out = self.vm.invoke("pair", self.x, 7, 2.5)
        self.assertIsInstance(out, tuple)
        self.assertIsInstance(out[1], tuple)
        self.assertTrue(np.shares_memory(out[0], self.x))
        self.assertEqual(out[1][0], 7)
        self.assertEqual(out[1][0].dtype, np.int64)
        self.assertEqual(out[1][1], 2.5)
        self.assertEqual(out[1][1].dtype, np.float32)
        self.assertEqual(self.vm.invoke("depth", np.int64(6)), 6)

    def test_call_depth_limit_is_memory_error(self):
        vm = dynvm.VirtualMachine(self.exe, max_call_depth=50)
        with self.assertRaisesRegex(MemoryError, "call depth") as caught:
            vm.invoke("depth", 100)
        self.assertIsInstance(caught.exception, dynvm.ResourceExhaustedError)
        self.assertEqual(caught.exception.code, "RESOURCE_EXHAUSTED")
        self.assertEqual(vm.invoke("depth", 10), 10)


class ScalarsTest(unittest.TestCase):
    """tests/python/scalars.s: unboxed int, float and bool parameters and results."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.exe = build(VM_AS, HERE / "scalars.s", pathlib.Path(cls.tmp.name) / "s.fbs")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_scalars_in_and_out(self):
        vm = dynvm.VirtualMachine(self.exe)
        count = vm.invoke("count", 0, n=5)
        self.assertIs(type(count), int)
        self.assertEqual(count, 5)
        self.assertEqual(vm.invoke("count", np.int32(1), np.int64(4)), 4)
        out = vm.invoke("echo", 1.5, True, -3)
        self.assertEqual(out, (1.5, True, True))
        self.assertEqual([type(v) for v in out], [float, bool, bool])
        self.assertEqual(vm.invoke("echo", 2, np.bool_(False), 3), (2.0, False, False))
        self.assertEqual(vm.invoke_named("count", 0, 2), {"output_0": 2})
        self.assertEqual([p.kind for p in self.exe.function("echo").inputs], ["float", "bool", "int"])

    def test_bad_scalars(self):
        vm = dynvm.VirtualMachine(self.exe)
        with self.assertRaisesRegex(dynvm.InvalidArgumentError, r"input 'n' \(argument 1 of 'count'\): expected an int, got a str"):
            vm.invoke("count", 0, "5")
        with self.assertRaisesRegex(dynvm.InvalidArgumentError, "does not fit in int64"):
            vm.invoke("count", 0, 2**70)
        with self.assertRaisesRegex(dynvm.InvalidArgumentError, r"input 'flag' \(argument 1 of 'echo'\): expected a bool"):
            vm.invoke("echo", 1.0, 1, 1)

    def test_step_limit_is_memory_error_and_vm_recovers(self):
        vm = dynvm.VirtualMachine(self.exe, max_steps=10)
        with self.assertRaisesRegex(dynvm.ResourceExhaustedError, "step limit"):
            vm.invoke("count", 0, 100)
        self.assertEqual(vm.invoke("count", 0, 5), 5)

    def test_nesting_is_bounded_both_ways(self):
        vm = dynvm.VirtualMachine(self.exe)
        self.assertEqual(vm.invoke("wrap", 0, 3, 7), (((7,),),))
        self.assertEqual(vm.invoke("same", ((1, 2.5), [True])), ((1, 2.5), (True,)))
        # A program may nest results deeper than Python conversion goes: an error, not a
        # stack overflow.
        with self.assertRaisesRegex(dynvm.UnimplementedError, "nested more than 100 deep"):
            vm.invoke("wrap", 0, 10000, 1)
        # A list that contains itself.
        cyclic = []
        cyclic.append(cyclic)
        with self.assertRaisesRegex(dynvm.InvalidArgumentError, "nested more than 100 deep"):
            vm.invoke("same", cyclic)
        self.assertEqual(vm.invoke("count", 0, 5), 5)

    def test_timeout_is_timeout_error_and_vm_recovers(self):
        vm = dynvm.VirtualMachine(self.exe, timeout=0.005)
        # 10^12 loop steps would take hours: the 5 ms deadline ends the invocation.
        with self.assertRaises(TimeoutError) as caught:
            vm.invoke("count", 0, 10**12)
        self.assertIsInstance(caught.exception, dynvm.DeadlineExceededError)
        self.assertIn("deadline exceeded", str(caught.exception))
        self.assertEqual(caught.exception.code, "DEADLINE_EXCEEDED")
        self.assertEqual(vm.invoke("count", 0, 5), 5)
        for bad in (0, -1.0, float("nan")):
            with self.assertRaisesRegex(ValueError, "timeout must be a positive number"):
                dynvm.VirtualMachine(self.exe, timeout=bad)
        with self.assertRaisesRegex(dynvm.InvalidArgumentError, "max_memory_bytes at least 0"):
            dynvm.VirtualMachine(self.exe, max_memory_bytes=-1)


if __name__ == "__main__":
    unittest.main()
