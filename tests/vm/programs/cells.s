; Reference cells: a one-field ADT whose field set_field replaces.
;   bump(c, k) writes c's value + k into c and returns what c holds then.
;   poke(x, v) sets field 1 of x to v: an error unless x is an ADT with a field 1 and v
;   does not reach x.

.func @bump(c: any, k: int) -> (int) regs 4
  get_field %2, %0, 0
  addi %3, %2, %1
  set_field %0, 0, %3
  get_field %2, %0, 0
  ret %2
.end

.func @poke(x: any, v: any) -> (any) regs 2
  set_field %0, 1, %1
  ret %0
.end
