"""dynvm: run executables compiled for the dynvm virtual machine, and compile models.

The runtime (load, VirtualMachine, signatures, the Error classes) is the extension
dynvm._runtime, which links no compiler. compile() loads the compiler extension,
dynvm._compiler (LLVM, ONNX), on first use. See docs/python.md.
"""
import os as _os

from dynvm._runtime import *  # noqa: F401,F403  (the runtime's API is the package's)
from dynvm._runtime import load_bytes as _load_bytes


def compile(model, *, format=None, target_cpu="native", opt_level=2, fuse=True, constants=()):
    """Compiles a model to an Executable, as vm_compile does.

    model: a path (str or os.PathLike) to Relay text or to an ONNX model (*.onnx), or the
        model itself as bytes (a serialized ONNX ModelProto, or Relay text).
    format: "onnx" or "relay"; None decides by the file name (*.onnx is ONNX) or, for bytes,
        by the content (Relay text starts with "#[version", "def" or "type").
    target_cpu: "native" (this machine), "none" (no native code) or an LLVM CPU name.
    opt_level: 0 to 3. fuse: operator fusion. constants: .npy/.npz files for
        meta[relay.Constant][i] of Relay text (vm_compile --const).

    Errors raise dynvm.Error (InvalidArgumentError for a malformed model, ...) with the
    compiler's message. The result has .save(path) to write the executable file.
    """
    from dynvm import _compiler

    if isinstance(model, (bytes, bytearray, memoryview)):
        data, name, base_dir = bytes(model), "<bytes>", "."
        if format is None:
            head = data.lstrip()[:16]
            format = "relay" if head.startswith((b"#[version", b"def", b"type")) else "onnx"
    else:
        name = _os.fsdecode(model)
        with open(name, "rb") as f:
            data = f.read()
        base_dir = _os.path.dirname(name) or "."
        if format is None:
            format = "onnx" if name.endswith(".onnx") else "relay"
    if format not in ("onnx", "relay"):
        raise ValueError(f"format must be 'onnx' or 'relay', got {format!r}")
    executable = _compiler.compile(data, name, base_dir, format == "onnx", target_cpu, opt_level, fuse,
                                   [_os.fsdecode(c) for c in constants])
    return _load_bytes(executable, trust_native=True)  # made here: its native code is ours
