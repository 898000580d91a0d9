; The bundled example: z = x * scale + y for x, y of shape [n, 4] with any n, and a
; second function that loops over a count with a tail call.
;
;   vm_as examples/dynamic_add.s -o dynamic_add.fbs
;   vm_run dynamic_add.fbs --input=x=2x4xf32=1,2,3,4,5,6,7,8 --input=y=2x4xf32=1,1,1,1,2,2,2,2
.kernel mul = "multiply" (2 -> 1)
.kernel add = "add" (2 -> 1)
.const scale = tensor f32[] hex "00000040"   ; 2.0

.func @main(x: tensor f32[n, 4], y: tensor f32[n, 4]) -> (tensor f32[n, 4]) regs 10
  dim %2, %0, 0                      ; n
  load_consti %3, 16                 ; 4 * sizeof(f32) bytes per row
  muli %3, %2, %3
  alloc_storage %4, %3               ; one storage for the scaled x ...
  alloc_storage %5, %3               ; ... and one for the result
  shape_of %6, %0
  load_consti %7, 0
  alloc_tensor_reg %8, %4, %7, f32, %6
  load_const %9, scale
  invoke_packed mul, 1, (%0, %9, %8)
  alloc_tensor_reg %9, %5, %7, f32, %6
  invoke_packed add, 1, (%8, %1, %9)
  ret %9
.end

; count(i, n) = n, one tail call per step: constant memory for any n.
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
