# cmake -P cmake/dispatch_copy.cmake with CC, FLAGS, LTO, OBJECTS, PREFIX, OUTPUT, NM, OBJCOPY: one
# copy of the hot paths for run-time dispatch (src/dispatch/sources.cmake). The objects are linked
# into one relocatable object (with LTO: optimised across the translation units, as the library is),
# then every symbol it defines is renamed PREFIX + name, so that the copy neither clashes with the
# library's own definitions nor calls them: its calls among the hot paths stay within the copy, and
# only its calls to the rest of the library (errors, workspace) and libm leave it.
string(REPLACE "|" ";" FLAGS "${FLAGS}") # lists come joined by '|' (src/dispatch/sources.cmake)
string(REPLACE "|" ";" OBJECTS "${OBJECTS}")
set(linked ${OUTPUT}.linked.o)
get_filename_component(folder ${OUTPUT} DIRECTORY)
file(MAKE_DIRECTORY ${folder})
set(lto_flags "")
if(LTO)
  set(lto_flags -flto=auto -flinker-output=nolto-rel)
endif()
execute_process(COMMAND ${CC} ${FLAGS} ${lto_flags} -r -nostdlib -o ${linked} ${OBJECTS}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dispatch_copy: linking the hot paths (${PREFIX}) failed")
endif()
execute_process(COMMAND ${NM} --defined-only --extern-only --format=posix ${linked}
                OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dispatch_copy: nm ${linked} failed")
endif()
string(REGEX MATCHALL "[^\n]+" lines "${symbols}")
set(renames "")
foreach(line ${lines})
  string(REGEX REPLACE " .*" "" name "${line}")
  string(APPEND renames "${name} ${PREFIX}${name}\n")
endforeach()
file(WRITE ${OUTPUT}.renames "${renames}")
execute_process(COMMAND ${OBJCOPY} --redefine-syms=${OUTPUT}.renames ${linked} ${OUTPUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dispatch_copy: objcopy ${linked} failed")
endif()
