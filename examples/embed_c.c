/* Embedding dynvm from C through libdynvm.so (capi/c_api.h): load an executable, list its
 * functions' signatures, run one on DLPack tensors the program owns, and handle errors.
 *
 *   build/bin/embed_c_example dynamic_add.fbs
 *
 * The executable is examples/dynamic_add.s assembled with vm_as; see docs/embedding.md.
 */
#include <stdio.h>
#include <stdlib.h>

#include "capi/c_api.h"

/* A [rows, 4] f32 tensor over a static buffer: the deleter only counts, since the
 * memory is the program's own. */
typedef struct Matrix {
  float data[3 * 4];
  int64_t shape[2];
  DLManagedTensor managed;
  int released;
} Matrix;

static void CountRelease(DLManagedTensor* self) { ((Matrix*)self->manager_ctx)->released++; }

static DLManagedTensor* MatrixTensor(Matrix* m, int64_t rows) {
  m->shape[0] = rows;
  m->shape[1] = 4;
  m->managed.dl_tensor.data = m->data;
  m->managed.dl_tensor.device.device_type = kDLCPU;
  m->managed.dl_tensor.device.device_id = 0;
  m->managed.dl_tensor.ndim = 2;
  m->managed.dl_tensor.dtype.code = kDLFloat;
  m->managed.dl_tensor.dtype.bits = 32;
  m->managed.dl_tensor.dtype.lanes = 1;
  m->managed.dl_tensor.shape = m->shape;
  m->managed.dl_tensor.strides = NULL;
  m->managed.dl_tensor.byte_offset = 0;
  m->managed.manager_ctx = m;
  m->managed.deleter = CountRelease;
  return &m->managed;
}

static int Check(DynvmStatus status, const char* what) {
  if (status == DYNVM_OK) return 1;
  fprintf(stderr, "embed_c_example: %s: %s: %s\n", what, dynvm_status_name(status),
          dynvm_last_error());
  return 0;
}

static void PrintSignatures(const DynvmExecutable* exe) {
  size_t functions = 0;
  dynvm_executable_num_functions(exe, &functions);
  for (size_t f = 0; f < functions; ++f) {
    const char* name = NULL;
    size_t inputs = 0, outputs = 0;
    dynvm_executable_function_name(exe, f, &name);
    dynvm_function_num_inputs(exe, f, &inputs);
    dynvm_function_num_outputs(exe, f, &outputs);
    printf("function %s(", name);
    for (size_t i = 0; i < inputs; ++i) {
      DynvmValueSpec spec;
      dynvm_function_input(exe, f, i, &spec);
      printf("%s%s: %s", i > 0 ? ", " : "", spec.name, spec.type);
    }
    printf(") ->");
    for (size_t i = 0; i < outputs; ++i) {
      DynvmValueSpec spec;
      dynvm_function_output(exe, f, i, &spec);
      printf(" %s", spec.type);
    }
    printf("\n");
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s exe.fbs\n", argv[0]);
    return 2;
  }
  DynvmExecutable* exe = NULL;
  if (!Check(dynvm_executable_load_file(argv[1], &exe), "load")) return 1;
  PrintSignatures(exe);

  /* A VM with two threads for its kernels and one second per invocation at most. */
  DynvmThreadPool* pool = NULL;
  if (!Check(dynvm_thread_pool_create(2, &pool), "thread pool")) return 1;
  DynvmVmOptions options;
  dynvm_vm_options_init(&options);
  options.thread_pool = pool;
  options.timeout_us = 1000000;
  DynvmVm* vm = NULL;
  if (!Check(dynvm_vm_create(exe, &options, &vm), "vm")) return 1;
  dynvm_thread_pool_release(pool); /* the VM holds it */

  /* z = 2x + y on [3, 4]. The result is dynvm's memory, handed over as DLPack. */
  static Matrix x, y;
  for (int i = 0; i < 12; ++i) {
    x.data[i] = (float)i;
    y.data[i] = 0.5f;
  }
  DynvmValue args[2] = {dynvm_tensor_value(MatrixTensor(&x, 3)),
                        dynvm_tensor_value(MatrixTensor(&y, 3))};
  DynvmValue z;
  size_t count = 0;
  if (!Check(dynvm_vm_invoke(vm, "main", args, 2, &z, 1, &count), "main")) return 1;
  const float* zd = (const float*)z.tensor->dl_tensor.data;
  printf("z: shape [%lld, %lld], z[2][0..3] = %g %g %g %g\n",
         (long long)z.tensor->dl_tensor.shape[0], (long long)z.tensor->dl_tensor.shape[1],
         zd[8], zd[9], zd[10], zd[11]);
  dynvm_value_release(&z);
  printf("inputs released: %d %d\n", x.released, y.released);

  /* A wrong shape is an error naming the argument; the VM stays usable. */
  DynvmValue bad[2] = {dynvm_tensor_value(MatrixTensor(&x, 3)), dynvm_int_value(7)};
  DynvmStatus status = dynvm_vm_invoke(vm, "main", bad, 2, &z, 1, &count);
  printf("wrong argument: %s: %s\n", dynvm_status_name(status), dynvm_last_error());

  DynvmValue loop[2] = {dynvm_int_value(0), dynvm_int_value(1000)};
  if (!Check(dynvm_vm_invoke(vm, "count", loop, 2, &z, 1, &count), "count")) return 1;
  printf("count(0, 1000) = %lld\n", (long long)z.i);

  dynvm_vm_release(vm);
  dynvm_executable_release(exe);
  return 0;
}
