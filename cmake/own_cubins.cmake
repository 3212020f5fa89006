# Strategy 17's own cubin of each image kernel (learn.hpp's own_cubin): ptxas --entry on the PTX the
# file of every image was assembled from, one cubin a kernel in OUT/<kernel>.cubin, so that an op's
# image loads alone. The engine uses one only where its machine code is the same bytes as the file's.
#
#   cmake -DPTXAS=<ptxas> -DPTX=<file.ptx> -DOUT=<dir> -DSTAMP=<file> -P cmake/own_cubins.cmake
foreach(variable PTXAS PTX OUT STAMP)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "own_cubins.cmake needs -D${variable}=...")
  endif()
endforeach()
file(STRINGS ${PTX} target REGEX "^\\.target sm_[0-9]+[a-z]?")
string(REGEX MATCH "sm_[0-9]+[a-z]?" arch "${target}")
file(STRINGS ${PTX} entries REGEX "^\\.visible \\.entry cdl_(image|call)_")
if(NOT arch OR NOT entries)
  message(FATAL_ERROR "${PTX}: no .target or no image kernel in it")
endif()
file(MAKE_DIRECTORY ${OUT})
foreach(entry ${entries})
  string(REGEX MATCH "cdl_[a-z0-9_]+" kernel "${entry}")
  # as nvcc -cubin -fmad=false assembles the whole file (strategies/CMakeLists.txt)
  execute_process(
    COMMAND ${PTXAS} -arch=${arch} -O3 --fmad=false --entry ${kernel} -o ${OUT}/${kernel}.cubin ${PTX}
    RESULT_VARIABLE status ERROR_VARIABLE errors)
  if(status)
    message(FATAL_ERROR "ptxas --entry ${kernel} ${PTX} failed (${status}):\n${errors}")
  endif()
endforeach()
file(TOUCH ${STAMP})
