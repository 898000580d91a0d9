"""Writes the .npz fixtures of tests/serializer/npz_test.cc with numpy (run from here):

    /usr/bin/python3 make_npz.py

stored.npz: np.savez of a [2, 3] float32 0..5, an int64 [4] 10..13 and a bool [2]
  (True, False) as positional arrays arr_0..arr_2, then w= a float64 [] 2.5.
deflated.npz: np.savez_compressed of the same.
empty.npz: np.savez with nothing.
"""
import numpy as np

a = np.arange(6, dtype=np.float32).reshape(2, 3)
b = np.arange(10, 14, dtype=np.int64)
c = np.array([True, False])
w = np.float64(2.5)
np.savez("stored.npz", a, b, c, w=w)
np.savez_compressed("deflated.npz", a, b, c, w=w)
np.savez("empty.npz")
