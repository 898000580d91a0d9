; Functions the C API test calls: results that alias an argument, nested tuples of
; tensors and scalars, and a result C cannot hold. (Limits run sum_loop.s.)
.const msg = string "a string"

; Returns its argument: the result views the caller's memory.
.func @identity(x: tensor f32[?]) -> (tensor f32[?]) regs 1
  ret %0
.end

; (x, (n, f, b)): four leaves, depth first.
.func @nested(x: tensor f32[?], n: int, f: float, b: bool) -> (any) regs 6
  alloc_adt %4, 0, (%1, %2, %3)
  alloc_adt %5, 0, (%0, %4)
  ret %5
.end

.func @string() -> (any) regs 1
  load_const %0, msg
  ret %0
.end
