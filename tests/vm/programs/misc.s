; Static allocation, constants, views, copies, shapes, a 0-d tensor condition, integer
; division rounding, and a tuple result.
.kernel mul = "multiply" (2 -> 1)
.const w = tensor f32[2, 3] hex "0000803f0000004000004040000080400000a0400000c040"
.const yes = tensor bool[] hex "01"
.const msg = string "unreachable"

.func @main(x: tensor f32[2, 3]) -> (any) regs 16
  load_const %1, w
  load_consti %2, 24
  alloc_storage %3, %2
  alloc_tensor %4, %3, 0, f32, [2, 3]
  invoke_packed mul, 1, (%0, %1, %4)       ; x * w
  load_consti %5, 3
  load_consti %6, 2
  make_shape %7, (%5, %6)
  reshape_tensor %8, %4, %7                ; a [3, 2] view of the product
  device_copy %9, %8, 1, 1                 ; a copy with its own storage
  load_const %10, yes
  if %10, t, f
t:
  load_consti %11, -7
  divi %12, %11, %6                        ; -7 // 2 = -4
  modi %13, %11, %6                        ; -7 % 2 = 1
  mini %14, %12, %13
  maxi %15, %12, %13
  alloc_adt %11, 0, (%8, %9, %12, %13, %14, %15)
  kill %4
  move %0, %11
  ret %0
f:
  fatal msg
.end
