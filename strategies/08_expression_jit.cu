// 08 - libNVVM: the program writes the kernel in NVVM IR itself, with no C++ compiler at run time.
//
// Idea.    The op arrives in a small language the program parses (the suite's common/expression.hpp)
//          and lowers to NVVM IR, LLVM's form that libNVVM takes: here the IR of the map loop, with
//          the op's instructions pasted in where it is called. libNVVM optimises it and writes PTX,
//          which the driver assembles (ptxas) as cudaLibraryLoadData loads it.
// Cost.    Per new op: the lowering (microseconds), libNVVM and the driver's ptxas, with no C++
//          front end and no headers to parse: the cheapest compile of a new op in the suite (the
//          report's compile table). Then the template's speed. The price is writing IR, not C++.
// Use it   for a user's formulas in a language of your own, when the compile must be short.
// Build.   nvcc -std=c++20 -O3 -arch=native -I. -I/usr/local/cuda/nvvm/include \
//            strategies/08_expression_jit.cu -o 08 -L/usr/local/cuda/nvvm/lib64 -lnvvm \
//            -Xlinker -rpath=/usr/local/cuda/nvvm/lib64
// See it.  Print the PTX (nvvmGetCompiledResult below): the op's fma.rn.f32 inside the loop.
// Suite.   strategies/suite/08_expression_jit.cu: the language's every construct, the vec form, float64.
#include <nvvm.h>

#include <chrono>
#include <cstring>
#include <string>

#include "strategies/lesson_jit.cuh"

// lesson::map_kernel's loop in NVVM IR (LLVM 7's dialect, typed pointers), around the op's
// instructions, which read %v and leave the result in %r: what a lowering writes for the op. The
// loop is marked not to be unrolled, as the suite's lowering marks it: unrolling a loop whose trip
// count arrives at run time copies the op per step and adds a remainder loop, which lengthens
// libNVVM's and ptxas's work for every new op. The price is this one-element-a-thread form's speed
// when the op is cheap and k large (the report's dispatch figure, 08's scalar row); the suite's vec
// form, with several elements in one loop, does not pay it.
std::string map_ir(const std::string& op) {
  return R"(target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define void @map(float* %x, float* %y, i64 %n, i32 %k) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %bid, %bdim
  %base.64 = zext i32 %base to i64
  %tid.64 = zext i32 %tid to i64
  %i = add i64 %base.64, %tid.64
  %in = icmp ult i64 %i, %n
  br i1 %in, label %start, label %exit
start:
  %px = getelementptr float, float* %x, i64 %i
  %x.i = load float, float* %px
  %any = icmp sgt i32 %k, 0
  br i1 %any, label %loop, label %done
loop:
  %j = phi i32 [ 0, %start ], [ %j.next, %loop ]
  %acc = phi float [ 0.0, %start ], [ %acc.next, %loop ]
  %j.f = sitofp i32 %j to float
  %offset = fmul float %j.f, 0x3F30000000000000 ; 1/4096
  %v = fadd float %x.i, %offset
)" + op + R"(
  %acc.next = fadd float %acc, %r
  %j.next = add i32 %j, 1
  %more = icmp slt i32 %j.next, %k
  br i1 %more, label %loop, label %done, !llvm.loop !2
done:
  %sum = phi float [ 0.0, %start ], [ %acc.next, %loop ]
  %py = getelementptr float, float* %y, i64 %i
  store float %sum, float* %py
  br label %exit
exit:
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
!nvvm.annotations = !{!0}
!0 = !{void (float*, float*, i64, i32)* @map, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0}
!2 = distinct !{!2, !3}
!3 = !{!"llvm.loop.unroll.disable"}
)";
}

// IR -> PTX (libNVVM) -> a kernel the driver assembles as it loads it.
cudaKernel_t compile(const std::string& ir, cudaLibrary_t& library) {
  const std::string arch = "-arch=compute_" + std::to_string(lesson::device_arch());
  const char* options[] = {arch.c_str()};
  nvvmProgram program = nullptr;
  JIT_CHECK(nvvmCreateProgram(&program), program);
  JIT_CHECK(nvvmAddModuleToProgram(program, ir.c_str(), ir.size(), "map"), program);
  JIT_CHECK(nvvmCompileProgram(program, 1, options), program);
  const std::vector<char> ptx = JIT_OUTPUT(program, nvvmGetCompiledResult);
  JIT_CHECK(nvvmDestroyProgram(&program), program);
  return lesson::load(ptx, library);
}

int main() {
  lesson::problem p;
  // v * v + 2 * v + 1, as a lowering of the language's "x * x + 2 * x + 1" writes it.
  const std::string op = R"(  %vv = fmul float %v, %v
  %v2 = fmul float %v, 2.0
  %s = fadd float %vv, %v2
  %r = fadd float %s, 1.0)";
  const auto start = std::chrono::steady_clock::now();
  cudaLibrary_t library = nullptr;
  const cudaKernel_t kernel = compile(map_ir(op), library);
  // The load's ptxas goes through the driver's cache, which answers a PTX text it has seen: a second
  // run of this program loads from it (CUDA_CACHE_DISABLE=1 shows a new op's load every time).
  std::printf("compiled and loaded in %.1f ms (once per new op; the load cached after a first run)\n",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  const int status = lesson::compare(p, {{"nvvm", [&](int k) { lesson::launch_map(kernel, p, k); }}});
  CHECK(cudaLibraryUnload(library));
  return status;
}
