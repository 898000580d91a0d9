; Programs with unboxed scalar parameters and results, for tests/python/test_dynvm.py
; (assembled by the test with vm_as).

; count(i, n) = n, one tail call per step: each step counts against max_steps.
.func @count(i: int, n: int) -> (int) regs 4
  lei %2, %1, %0
  if %2, done, step
step:
  load_consti %3, 1
  addi %3, %0, %3
  tail_invoke @count, (%3, %1)
done:
  ret %0
.end

; echo(x, flag, n) = (x, flag, n < 0): a float, a bool and an int in; a tuple of
; scalars out.
.func @echo(x: float, flag: bool, n: int) -> (tuple(float, bool, bool)) regs 6
  load_consti %3, 0
  lti %4, %2, %3
  alloc_adt %5, 0, (%0, %1, %4)
  ret %5
.end

; wrap(0, n, x) = (((x))) nested n deep; same(x) = x, for any value.
.func @wrap(i: int, n: int, acc: any) -> (any) regs 6
  lei %3, %1, %0
  if %3, done, step
step:
  alloc_adt %4, 0, (%2)
  load_consti %5, 1
  addi %5, %0, %5
  tail_invoke @wrap, (%5, %1, %4)
done:
  ret %2
.end

.func @same(x: any) -> (any) regs 1
  ret %0
.end
