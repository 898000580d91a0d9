; A List ADT (Nil = tag 0, Cons(head, tail) = tag 1) built by a loop, mapped with a
; closure that captured a value, and folded with a closure that captured nothing.
;   main(n, k) = foldl(plus, 0, map(scale(k), [n, n-1, ..., 1])) = k * n * (n + 1) / 2

.func @build(i: int, n: int, acc: any) -> (any) regs 7
  lti %3, %1, %0
  if %3, done, body
body:
  alloc_adt %4, 1, (%0, %2)          ; Cons(i, acc)
  load_consti %5, 1
  addi %6, %0, %5
  tail_invoke @build, (%6, %1, %4)
done:
  ret %2
.end

.func @map(f: any, l: any) -> (any) regs 8
  get_tag %2, %1
  load_consti %3, 0
  eqi %3, %2, %3
  if %3, nil, cons
nil:
  ret %1
cons:
  get_field %4, %1, 0
  get_field %5, %1, 1
  invoke_closure %6, %0, (%4)        ; f(head)
  invoke %7, @map, (%0, %5)          ; map(f, tail)
  alloc_adt %6, 1, (%6, %7)
  ret %6
.end

.func @foldl(f: any, acc: any, l: any) -> (any) regs 7
  get_tag %3, %2
  load_consti %4, 0
  eqi %4, %3, %4
  if %4, nil, cons
nil:
  ret %1
cons:
  get_field %5, %2, 0
  get_field %6, %2, 1
  invoke_closure %3, %0, (%1, %5)    ; f(acc, head)
  tail_invoke @foldl, (%0, %3, %6)
.end

.func @scale(k: int, x: int) -> (int) regs 3
  muli %2, %0, %1
  ret %2
.end

.func @plus(a: int, b: int) -> (int) regs 3
  addi %2, %0, %1
  ret %2
.end

.func @main(n: int, k: int) -> (int) regs 9
  alloc_adt %2, 0, ()                ; Nil
  load_consti %3, 1
  invoke %4, @build, (%3, %0, %2)
  alloc_closure %5, @scale, (%1)     ; scale(k)
  invoke %6, @map, (%5, %4)
  alloc_closure %7, @plus, ()
  load_consti %8, 0
  invoke %2, @foldl, (%7, %8, %6)
  ret %2
.end
