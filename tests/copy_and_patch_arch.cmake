# One architecture's check of strategy 17 on the host (ctest's copy_and_patch_check_sm_XX): its
# stencils, images and call images compiled for sm_XX as strategies/CMakeLists.txt compiles the
# build's own, then the engine's tests read them (CDL_PLUGIN_DIR): the learning, and the host check
# of random ops, whose machine code must compute their steps (0 wrong; each refusal by its reason).
#
#   cmake -DARCH=80 -DNVCC=nvcc -DROOT=<source dir> -DOUT=<dir> -DTESTS=<cdl_cpu_tests> \
#         -P tests/copy_and_patch_arch.cmake          (or: ctest -R copy_and_patch_check_sm_80)
# With -DBUILT=1, OUT holds the build's own cubins for ARCH (made by strategies/CMakeLists.txt with
# the same command): they are checked as they are.
foreach(variable ARCH NVCC ROOT OUT TESTS)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "copy_and_patch_arch.cmake needs -D${variable}=...")
  endif()
endforeach()
file(MAKE_DIRECTORY ${OUT})
set(parts stencils images calls_1 calls_2 calls_3)
if(BUILT)
  set(parts)
endif()
foreach(part ${parts})
  string(TOUPPER ${part} macro)
  string(REGEX REPLACE "_([0-9])$" "=\\1" macro ${macro})  # calls_N: CDL_CALLS=N
  execute_process(
    COMMAND ${NVCC} -std=c++20 -O3 -arch=sm_${ARCH} -cubin -fmad=false -DCDL_${macro} -I${ROOT}
            -o ${OUT}/cdl_${part}.cubin ${ROOT}/strategies/suite/copy_and_patch/stencils.cu
    RESULT_VARIABLE status ERROR_VARIABLE errors)
  if(status)
    message(FATAL_ERROR "nvcc -arch=sm_${ARCH} -DCDL_${macro} failed (${status}):\n${errors}")
  endif()
endforeach()
message(STATUS "sm_${ARCH}: 17's cubins in ${OUT}; the engine's host check on them:")
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env CDL_PLUGIN_DIR=${OUT} ${TESTS} --gtest_filter=CopyAndPatchDecode.*
  RESULT_VARIABLE status)
if(status)
  message(FATAL_ERROR "sm_${ARCH}: 17's learning or host check failed (${status}): the output above says")
endif()
