# Strategy 17's parts, as strategies/CMakeLists.txt builds them and tests/copy_and_patch_arch.cmake
# assembles them for each architecture: the stencils, the images, and the call images of each count
# of slots the engine has (stencil::call_counts, read from its header). Sets CDL_STENCIL_PARTS.
set(cdl_stencils_header ${CMAKE_CURRENT_LIST_DIR}/../strategies/suite/copy_and_patch/stencils.hpp)
file(STRINGS ${cdl_stencils_header} cdl_call_counts REGEX "call_counts\\[\\] = ")
if(NOT CMAKE_SCRIPT_MODE_FILE)  # configured again when the counts change
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${cdl_stencils_header})
endif()
string(REGEX MATCHALL "[0-9]+" cdl_call_counts "${cdl_call_counts}")
set(CDL_STENCIL_PARTS stencils images)
foreach(n ${cdl_call_counts})
  list(APPEND CDL_STENCIL_PARTS calls_${n})
endforeach()
