# Writes OUT (a header defining FHD_GIT_REVISION) from `git describe` of SRC,
# only when it changed, so --version names the revision actually built.
# Outside a git checkout (a source tarball) the revision is "unknown".
execute_process(COMMAND git -C ${SRC} describe --always --dirty --abbrev=10
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR rev STREQUAL "")
  set(rev "unknown")
endif()
set(text "#define FHD_GIT_REVISION \"${rev}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
