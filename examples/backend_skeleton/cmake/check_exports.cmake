# Checks that a plugin library exports exactly the four backend ABI entry points: a stray
# exported symbol would clash with the host's or another plugin's.
# Usage: cmake -DNM=<nm> -DLIBRARY=<libortc_backend_npu.so> -P check_exports.cmake
execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY}
  OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${LIBRARY}")
endif()
string(REGEX MATCHALL "[^\n]+" lines "${listing}")
set(found "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^.* " "" symbol "${line}")
  list(APPEND found "${symbol}")
endforeach()
list(SORT found)
set(expected ortc_backend_compiler_create ortc_backend_compiler_release ortc_backend_create
  ortc_backend_release)
if(NOT found STREQUAL expected)
  message(FATAL_ERROR "exported symbols are '${found}', expected '${expected}'")
endif()
message(STATUS "exports: ${found}")
