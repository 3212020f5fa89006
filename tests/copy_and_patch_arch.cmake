# One architecture's check of strategy 17 on the host (ctest's copy_and_patch_check_sm_XX): its
# stencils, images and call images assembled for sm_XX, the own cubin of each image kernel of no and
# of one or two calls beside them, then the engine's tests read them (CDL_PLUGIN_DIR): the learning,
# the host check of random ops, whose machine code must compute their steps (0 wrong; each refusal by
# its reason), and the own cubins, the same bytes as the files where the patch writes.
#
#   cmake -DARCH=80 -DNVCC=nvcc -DROOT=<source dir> -DOUT=<dir> -DTESTS=<cdl_cpu_tests> \
#         -P tests/copy_and_patch_arch.cmake          (or: ctest -R copy_and_patch_check_sm_80)
# With -DPTX_DIR=<dir>, the parts' PTX is taken from there (tests/CMakeLists.txt writes it once for
# each family of architectures nvcc writes the same PTX for, and only its .target line differs):
# ptxas then makes the machine code for ARCH, the same instructions as nvcc -cubin -arch=sm_XX
# gives, without compiling the source again for each architecture. Without it, the PTX is nvcc's
# for ARCH. With -DBUILT=1, OUT holds the build's own cubins for ARCH (strategies/CMakeLists.txt):
# they are checked as they are.
foreach(variable ARCH NVCC ROOT OUT TESTS)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "copy_and_patch_arch.cmake needs -D${variable}=...")
  endif()
endforeach()
get_filename_component(nvcc_bin ${NVCC} DIRECTORY)
find_program(PTXAS ptxas HINTS ${nvcc_bin} REQUIRED)
file(MAKE_DIRECTORY ${OUT})
include(${ROOT}/cmake/stencil_parts.cmake)
set(parts ${CDL_STENCIL_PARTS})
if(BUILT)
  set(parts)
endif()
foreach(part ${parts})
  set(ptx ${OUT}/cdl_${part}.ptx)
  if(DEFINED PTX_DIR)
    file(READ ${PTX_DIR}/cdl_${part}.ptx text)
    string(REGEX REPLACE "\n\\.target sm_[0-9]+[a-z]?\n" "\n.target sm_${ARCH}\n" text "${text}")
    file(WRITE ${ptx} "${text}")
  else()
    string(TOUPPER ${part} macro)
    string(REGEX REPLACE "_([0-9]+)$" "=\\1" macro ${macro})  # calls_N: CDL_CALLS=N
    execute_process(
      COMMAND ${NVCC} -std=c++20 -O3 -arch=sm_${ARCH} -ptx -fmad=false -DCDL_${macro} -I${ROOT} -o ${ptx}
              ${ROOT}/strategies/suite/copy_and_patch/stencils.cu
      RESULT_VARIABLE status ERROR_VARIABLE errors)
    if(status)
      message(FATAL_ERROR "nvcc -arch=sm_${ARCH} -DCDL_${macro} -ptx failed (${status}):\n${errors}")
    endif()
  endif()
  # as strategies/CMakeLists.txt assembles the build's own (nvcc -cubin -fmad=false)
  execute_process(COMMAND ${PTXAS} -arch=sm_${ARCH} -O3 --fmad=false -o ${OUT}/cdl_${part}.cubin ${ptx}
                  RESULT_VARIABLE status ERROR_VARIABLE errors)
  if(status)
    message(FATAL_ERROR "ptxas -arch=sm_${ARCH} ${ptx} failed (${status}):\n${errors}")
  endif()
  # the own cubins of the parts the own-cubin test writes its ops into (an op of more calls loads
  # the file on this host, as where the build made none)
  if(part MATCHES "^(images|calls_1|calls_2)$")
    execute_process(COMMAND ${CMAKE_COMMAND} -DPTXAS=${PTXAS} -DPTX=${ptx} -DOUT=${OUT}/cdl_alone
                            -DSTAMP=${OUT}/cdl_alone/${part}.stamp -P ${ROOT}/cmake/own_cubins.cmake
                    RESULT_VARIABLE status)
    if(status)
      message(FATAL_ERROR "sm_${ARCH}: the own cubins of ${part} failed (${status})")
    endif()
  endif()
endforeach()
message(STATUS "sm_${ARCH}: 17's cubins in ${OUT}; the engine's host check on them:")
set(checks CopyAndPatchDecode.*:CopyAndPatchWrite.EachImageLoadsFromItsOwnCubinWithThePatchCopiedIn)
execute_process(COMMAND ${CMAKE_COMMAND} -E env CDL_PLUGIN_DIR=${OUT} ${TESTS} --gtest_filter=${checks}
                RESULT_VARIABLE status)
if(status)
  message(FATAL_ERROR "sm_${ARCH}: 17's learning or host check failed (${status}): the output above says")
endif()
