; Non-tail recursion (fib) and mutual recursion (even/odd), with calls that grow the
; frame stack and return through it.
.func @fib(n: int) -> (int) regs 7
  load_consti %1, 2
  lti %2, %0, %1            ; n < 2
  if %2, base, rec
base:
  ret %0
rec:
  load_consti %3, 1
  subi %4, %0, %3
  invoke %5, @fib, (%4)     ; fib(n - 1)
  subi %4, %0, %1
  invoke %6, @fib, (%4)     ; fib(n - 2)
  addi %5, %5, %6
  ret %5
.end

; is_even(n) = n == 0 or is_odd(n - 1), through real (non-tail) calls.
.func @is_even(n: int) -> (bool) regs 4
  load_consti %1, 0
  eqi %2, %0, %1
  if %2, yes, no
yes:
  ret %2
no:
  load_consti %1, 1
  subi %3, %0, %1
  invoke %2, @is_odd, (%3)
  ret %2
.end

.func @is_odd(n: int) -> (bool) regs 4
  load_consti %1, 0
  eqi %2, %0, %1
  if %2, zero, no
zero:
  nei %2, %0, %1            ; false
  ret %2
no:
  load_consti %1, 1
  subi %3, %0, %1
  invoke %2, @is_even, (%3)
  ret %2
.end

; The same pair as tail calls: constant frame depth for any n.
.func @tail_even(n: int) -> (bool) regs 3
  load_consti %1, 0
  eqi %2, %0, %1
  if %2, yes, no
yes:
  ret %2
no:
  load_consti %1, 1
  subi %2, %0, %1
  tail_invoke @tail_odd, (%2)
.end

.func @tail_odd(n: int) -> (bool) regs 3
  load_consti %1, 0
  eqi %2, %0, %1
  if %2, zero, no
zero:
  nei %2, %0, %1
  ret %2
no:
  load_consti %1, 1
  subi %2, %0, %1
  tail_invoke @tail_even, (%2)
.end

; Recurses without a base case: only the call-depth limit stops it.
.func @forever(n: int) -> (int) regs 2
  invoke %1, @forever, (%0)
  ret %1
.end

; swap(a, b, n) swaps its first two arguments n times by tail calls that read the
; registers they write: (1, 2, 3) -> 21, (1, 2, 4) -> 12.
.func @swap(a: int, b: int, n: int) -> (int) regs 5
  load_consti %3, 0
  lei %4, %2, %3
  if %4, done, again
again:
  load_consti %3, 1
  subi %2, %2, %3
  tail_invoke @swap, (%1, %0, %2)
done:
  load_consti %3, 10
  muli %3, %0, %3
  addi %3, %3, %1
  ret %3
.end

; grow(x) tail-calls a function with a larger frame and more parameters than its own:
; the frame grows in place. grow(7) = 7 + 7 * 7 = 56.
.func @grow(x: int) -> (int) regs 1
  tail_invoke @fma, (%0, %0, %0)
.end

.func @fma(a: int, b: int, c: int) -> (int) regs 8
  muli %3, %1, %2
  addi %3, %0, %3
  ret %3
.end
