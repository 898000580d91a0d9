; Sums 1..n with a tail-recursive loop: the frame is reused, so any n runs in the same
; registers and allocates nothing.
.func @sum(i: int, n: int, acc: int) -> (int) regs 6
  lti %3, %1, %0            ; n < i: done
  if %3, done, body
body:
  addi %4, %2, %0           ; acc + i
  load_consti %5, 1
  addi %5, %0, %5           ; i + 1
  tail_invoke @sum, (%5, %1, %4)
done:
  ret %2
.end
