# Runs one of the C recorder's programs for CTest (cmake -P): COMMAND (its arguments joined
# by "|") in WORKDIR, emptied first; fails unless it exits 0 and its standard output has as
# many lines as EXPECTED (a file of regular expressions, one a line) and each line matches
# its expression whole; with MAGIC (a file the program wrote, in WORKDIR), also unless that
# file starts with the stream's magic, AABBSTRM.
foreach(var COMMAND WORKDIR EXPECTED)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_check.cmake needs -D${var}=...")
  endif()
endforeach()
string(REPLACE "|" ";" command "${COMMAND}")
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
execute_process(COMMAND ${command}
                WORKING_DIRECTORY "${WORKDIR}"
                RESULT_VARIABLE code
                OUTPUT_VARIABLE out
                ERROR_VARIABLE err
                TIMEOUT 60)
if(NOT code STREQUAL "0")
  message(FATAL_ERROR "${command}\nexited with ${code}\nstdout:\n${out}\nstderr:\n${err}")
endif()
file(STRINGS "${EXPECTED}" expected)
string(REGEX REPLACE "\n$" "" trimmed "${out}")
string(REPLACE ";" "\\;" trimmed "${trimmed}")
string(REPLACE "\n" ";" lines "${trimmed}")
list(LENGTH lines got_n)
list(LENGTH expected want_n)
if(NOT got_n EQUAL want_n)
  message(FATAL_ERROR "${command}\nprinted ${got_n} lines, expected ${want_n}:\n${out}")
endif()
math(EXPR last "${want_n} - 1")
foreach(i RANGE ${last})
  list(GET lines ${i} line)
  list(GET expected ${i} pattern)
  if(NOT line MATCHES "^${pattern}$")
    message(FATAL_ERROR "${command}\nline ${i}:\n  ${line}\ndoes not match\n  ${pattern}\n"
                        "stdout:\n${out}")
  endif()
endforeach()
if(MAGIC)
  file(READ "${WORKDIR}/${MAGIC}" head LIMIT 8 HEX)
  if(NOT head STREQUAL "414142425354524d")
    message(FATAL_ERROR "${MAGIC} does not start with the stream's magic: ${head} (hex)")
  endif()
endif()
message(STATUS "${want_n} lines as expected:\n${out}")
