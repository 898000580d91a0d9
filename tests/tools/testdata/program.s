; Every opcode, constant kind and attribute kind of the dynvm assembly text, in a
; program that verifies. The example of docs/assembly.md; assembled by
; tests/tools/asm_test.cc and asm_cli_test.sh, which expect it to use every opcode.
;
; main(x, steps) = finish(step^steps(softmax(x + bias)), n)
.producer "dynvm asm test"

.kernel add = "add" (2 -> 1)
.kernel softmax = "softmax" (1 -> 1) {axis = -1, eps = 1e-05, mode = "fast\tpath", axes = [1, 0], scales = [0.5, 2.0], unused = f64[]}

.const w = tensor f32[2, 3] npy "w.npy"            ; read when assembled, inline in vm_dis
.const bias = tensor f32[3] hex "0000803f000000400000c03f"
.const mask = tensor bool[2] hex "0100"
.const message = string "shape check failed\n"
.const seven = int 7
.const half = float 0.5
.const yes = bool true

.func @main(x: tensor f32[n, 3], steps: int) -> (tensor f32[n, 3]) regs 16
  dim              %2, %0, 0                ; n
  load_consti      %3, 24                   ; two f32 rows of 3
  muli             %4, %2, %3
  alloc_storage    %5, %4                   ; one storage for both tensors below
  shape_of         %6, %0
  load_consti      %7, 0
  alloc_tensor_reg %8, %5, %7, f32, %6
  load_const       %9, bias
  invoke_shape_fn  add, 1, (%0, %9, %6)     ; %6 := shape of x + bias (the same)
  invoke_packed    add, 1, (%0, %9, %8)     ; %8 := x + bias
  load_consti      %10, 2
  divi             %11, %4, %10
  alloc_tensor_reg %12, %5, %11, f32, %6
  invoke_packed    softmax, 1, (%8, %12)    ; %12 := softmax(%8)
  kill             %8
  load_consti      %13, 0                   ; i
  load_consti      %14, 1
loop:
  lti              %15, %13, %1
  if               %15, body, done
body:
  invoke           %12, @step, (%12)
  addi             %13, %13, %14
  goto             loop
done:
  tail_invoke      @finish, (%12, %2)
.end

; Returns `t` through a reshape, a copy, a tuple and a closure after checking its shape.
.func @finish(t: tensor f32[n, 3], n: int) -> (tensor f32[n, 3]) regs 24
  load_consti      %2, 3
  make_shape       %3, (%1, %2)
  reshape_tensor   %4, %0, %3
  device_copy      %5, %4, 1, 1
  alloc_adt        %6, 0, (%5, %1)
  get_tag          %7, %6
  get_field        %8, %6, 0
  set_field        %6, 1, %1
  alloc_closure    %9, @identity, ()
  invoke_closure   %10, %9, (%8)
  subi             %11, %1, %2
  modi             %12, %1, %2
  mini             %13, %11, %12
  maxi             %14, %11, %12
  eqi              %15, %13, %14
  nei              %16, %13, %14
  load_constf      %17, -0.1
  load_const       %18, seven
  load_const       %19, half
  load_const       %20, yes
  move             %21, %10
  lei              %22, %7, %1
  if               %22, ok, fail
ok:
  ret              %21
fail:
  fatal            message
.end

.func @step(t: tensor f32[?, 3]) -> (tensor f32[?, 3]) regs 5
  load_consti      %1, 24
  alloc_storage    %2, %1
  alloc_tensor     %3, %2, 0, f32, [2, 3]
  load_const       %4, w
  invoke_packed    add, 1, (%4, %4, %3)
  ret              %0
.end

.func @identity(value: any) -> (any) regs 1
  ret              %0
.end
