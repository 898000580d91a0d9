; z = x + y for any n: the output's storage size is shape arithmetic on n, its shape
; is the input's, and the add kernel reads the extents at run time.
.kernel add = "add" (2 -> 1)
.const boom = string "boom: this program always fails"

.func @main(x: tensor f32[n, 768], y: tensor f32[n, 768]) -> (tensor f32[n, 768]) regs 9
  dim %2, %0, 0
  load_consti %3, 3072               ; 768 * sizeof(f32)
  muli %4, %2, %3
  alloc_storage %5, %4
  shape_of %6, %0
  load_consti %7, 0
  alloc_tensor_reg %8, %5, %7, f32, %6
  invoke_packed add, 1, (%0, %1, %8)
  ret %8
.end

; Adds tensors of any shapes into an output shaped like x: the kernel rejects what does
; not broadcast to it.
.func @add_like_x(x: tensor f32[?, ?], y: tensor f32[?, ?]) -> (tensor f32[?, ?]) regs 7
  shape_of %2, %0
  dim %3, %0, 0
  dim %4, %0, 1
  muli %3, %3, %4
  load_consti %4, 4
  muli %3, %3, %4
  alloc_storage %5, %3
  load_consti %4, 0
  alloc_tensor_reg %6, %5, %4, f32, %2
  invoke_packed add, 1, (%0, %1, %6)
  ret %6
.end

.func @fail() -> (int) regs 1
  fatal boom
.end

; x + y broadcast, with the output shape from the kernel's shape function (what a
; compiler emits for `?` output dims).
.func @broadcast_add(x: tensor f32[?, ?], y: tensor f32[?]) -> (tensor f32[?, ?]) regs 8
  invoke_shape_fn add, 1, (%0, %1, %2)
  dim %3, %2, 0
  dim %4, %2, 1
  muli %3, %3, %4
  load_consti %4, 4
  muli %3, %3, %4
  alloc_storage %5, %3
  load_consti %6, 0
  alloc_tensor_reg %7, %5, %6, f32, %2
  invoke_packed add, 1, (%0, %1, %7)
  ret %7
.end

; The first field of a pair whose fields share the extent n.
.func @first(p: tuple(x: tensor f32[n, 768], tensor f32[n, 768])) -> (tensor f32[n, 768]) regs 2
  get_field %1, %0, 0
  ret %1
.end

; A copy of x in memory of its own (what the memory limit must count too).
.func @copy(x: tensor f32[?, ?]) -> (tensor f32[?, ?]) regs 2
  device_copy %1, %0, 1, 1
  ret %1
.end
