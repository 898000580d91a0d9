#!/usr/bin/python3
"""Writes the .npy fixtures of tests/serializer/npy_test.cc with real numpy.

Run once from anywhere (`/usr/bin/python3 make_npy_fixtures.py`); the outputs are
committed next to this script, so the tests need no Python. Generated with numpy 1.24.2;
the byte-for-byte comparisons in the test expect the header layout of numpy >= 1.23
(64-byte alignment plus the 21-digit growth padding of the first axis).

Values are small formulas the test recomputes:
  floats: arange(6) * 0.5 - 1   -> -1, -0.5, 0, 0.5, 1, 1.5 (exact in f16/f32/f64)
  ints:   arange(6) - 2         -> -2 .. 3
  uint8:  arange(6) + 250       -> 250 .. 255
  uint16/32/64: 2**bits - 6 + arange(6) -> the six largest values
  bool:   arange(6) % 3 == 0    -> T F F T F F
  str:    ["", "a", "bc", "dé", "€", "😀"] as '<U' (UTF-32) and their UTF-8 as '|S' 
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, array, version=None):
    path = os.path.join(HERE, name)
    if version is None:
        np.save(path, array)
    else:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, array, version=version)


def main():
    base = np.arange(6)
    floats = base * 0.5 - 1
    # One file per supported dtype, shape (2, 3), as np.save writes it.
    for descr in ["<f2", "<f4", "<f8"]:
        save(f"{descr[1:]}_2x3.npy", floats.astype(descr).reshape(2, 3))
    for descr in ["|i1", "<i2", "<i4", "<i8"]:
        save(f"{descr[1:]}_2x3.npy", (base - 2).astype(descr).reshape(2, 3))
    save("u1_2x3.npy", (base + 250).astype("|u1").reshape(2, 3))
    for descr, bits in [("<u2", 16), ("<u4", 32), ("<u8", 64)]:
        top = np.array([2**bits - 6 + i for i in range(6)], dtype=descr)
        save(f"{descr[1:]}_2x3.npy", top.reshape(2, 3))
    texts = ["", "a", "bc", "d\u00e9", "\u20ac", "\U0001f600"]
    save("U_2x3.npy", np.array(texts).reshape(2, 3))
    save("S_2x3.npy", np.array([t.encode("utf-8") for t in texts]).reshape(2, 3))
    save("be_U_2x3.npy", np.array(texts).astype(">U1").reshape(2, 3).astype(">U2"))
    save("b1_2x3.npy", (base % 3 == 0).reshape(2, 3))

    # Shapes: 0-d, 1-d (a 1-tuple in the header), zero-size, rank 4.
    save("f4_scalar.npy", np.array(3.5, dtype="<f4"))
    save("i8_1d.npy", np.arange(5, dtype="<i8"))
    save("f4_0x3.npy", np.zeros((0, 3), dtype="<f4"))
    save("i4_rank4.npy", np.arange(24, dtype="<i4").reshape(1, 2, 3, 4))

    # Big-endian data, which the reader byte-swaps.
    save("be_i4_2x3.npy", (base - 2).astype(">i4").reshape(2, 3))
    save("be_f8_2x3.npy", floats.astype(">f8").reshape(2, 3))
    save("be_f2_2x3.npy", floats.astype(">f2").reshape(2, 3))

    # Header versions 2.0 and 3.0 (4-byte header length).
    save("f4_2x3_v2.npy", floats.astype("<f4").reshape(2, 3), version=(2, 0))
    save("f4_2x3_v3.npy", floats.astype("<f4").reshape(2, 3), version=(3, 0))

    # What the reader refuses.
    save("fortran_2x3.npy", np.asfortranarray(floats.astype("<f4").reshape(2, 3)))
    save("c8_2x3.npy", floats.astype("<c8").reshape(2, 3))
    save("structured.npy", np.zeros(3, dtype=[("a", "<i4"), ("b", "<f4")]))


if __name__ == "__main__":
    main()
