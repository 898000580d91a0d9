; The functions tests/tools/run_cli_test.cc runs with vm_run: a dynamic shape, a tuple of
; a tensor and scalars, two tensor outputs, half-precision tensors, a closure, a fatal
; error, and recursion for --max_call_depth.
.kernel add = "add" (2 -> 1)
.kernel mul = "multiply" (2 -> 1)
.const boom = string "boom"

; x + y for any n.
.func @main(x: tensor f32[n, 3], y: tensor f32[n, 3]) -> (tensor f32[n, 3]) regs 9
  dim              %2, %0, 0
  load_consti      %3, 12                   ; 3 * sizeof(f32)
  muli             %4, %2, %3
  alloc_storage    %5, %4
  shape_of         %6, %0
  load_consti      %7, 0
  alloc_tensor_reg %8, %5, %7, f32, %6
  invoke_packed    add, 1, (%0, %1, %8)
  ret              %8
.end

; (x * x, k, f, b)
.func @mixed(x: tensor i32[?], k: int, f: float, b: bool) -> (any) regs 11
  dim              %4, %0, 0
  load_consti      %5, 4
  muli             %5, %4, %5
  alloc_storage    %6, %5
  shape_of         %7, %0
  load_consti      %8, 0
  alloc_tensor_reg %9, %6, %8, i32, %7
  invoke_packed    mul, 1, (%0, %0, %9)
  alloc_adt        %10, 0, (%9, %1, %2, %3)
  ret              %10
.end

; (x, (x,)): two tensor outputs once flattened.
.func @twice(x: tensor f32[2]) -> (any) regs 3
  alloc_adt        %1, 0, (%0)
  alloc_adt        %2, 0, (%0, %1)
  ret              %2
.end

.func @half(x: tensor f16[?], y: tensor bf16[?]) -> (any) regs 3
  alloc_adt        %2, 0, (%0, %1)
  ret              %2
.end

.func @scale(k: int, x: int) -> (int) regs 3
  muli             %2, %0, %1
  ret              %2
.end

.func @closure(k: int) -> (any) regs 2
  alloc_closure    %1, @scale, (%0)
  ret              %1
.end

.func @fail() -> (int) regs 1
  fatal            boom
.end

; depth(n) = 0 after n nested calls.
.func @depth(n: int) -> (int) regs 4
  load_consti      %1, 0
  lei              %2, %0, %1
  if               %2, done, more
done:
  ret              %1
more:
  load_consti      %1, 1
  subi             %3, %0, %1
  invoke           %3, @depth, (%3)
  ret              %3
.end
