# Run-time dispatch of the single-state hot paths (docs/dispatch.md; included by src/CMakeLists.txt).
# A portable x86-64 build compiles the hot translation units three times: as the rest of the library
# (the baseline: any x86-64), for x86-64-v3 (AVX2 + FMA) and for x86-64-v4 (AVX-512). Each extra copy
# is one relocatable object, link-time optimised within itself (the hinge functions inlined into the
# sweeps as in the library) and its symbols prefixed (cmake/dispatch_copy.cmake), so that the three
# live side by side; dispatch.c picks one at load. The public functions listed in dispatched.h are
# defined as sd_impl_X in all three (a forced include renames them) and dispatch.c defines sd_X.
option(SOADYN_DISPATCH "Portable x86-64 builds: also compile the hot paths for AVX2 and AVX-512 and pick one at run time" ON)
# The copies' instruction scheduling (-mtune): whatever its value, each copy runs on every processor of
# its level. native (the default) schedules for the machine that builds, which is the machine that
# runs a build from source; a package built for many machines sets generic (docs/dispatch.md).
set(SOADYN_DISPATCH_TUNE "native" CACHE STRING "-mtune of the dispatched AVX2 and AVX-512 copies")

# The hot paths: what ID, M, FD, M^-1 and the other entry points of dispatched.h run per call.
set(SOADYN_DISPATCH_HOT_SOURCES
  common/dense.c
  model/hinge.c
  algorithms/kinematics.c
  algorithms/inverse_dynamics.c
  algorithms/mass_matrix.c
  algorithms/forward_dynamics.c
  algorithms/cholesky_dynamics.c
  algorithms/innovations.c
  algorithms/interbody_forces.c
  algorithms/operational_space.c
  algorithms/joint_dynamics.c
  algorithms/node_engine.c
  algorithms/node_flexible.c
  algorithms/node_aggregate.c
)

# The components' hot paths (their entry points in dispatched_components.h): the closed-loop forward
# dynamics of both layers, tree-augmented (src/loops) and embedded (src/embed), with the constraint
# kinematics they run per call. libsoadyn's copies link them with the core's hot paths above, so that
# their calls into the sweeps stay in the copy; libsoadyn_core's copies hold the core's alone.
set(SOADYN_DISPATCH_COMPONENT_HOT_SOURCES
  loops/constraint_kinematics.c
  loops/closed_dynamics.c
  loops/constraint_solvers.c
  embed/embed_closure.c
  embed/embed_nodes.c
  embed/embed_node_model.c
  embed/embed_forward_dynamics.c
  embed/embed_mixed.c
)

set(SOADYN_DISPATCH_COMPONENT_TABLE "") # dispatch_components.c when the hot paths are dispatched

# Why a build has no dispatch (sd_cpu_note says it), or empty when it has.
set(SOADYN_NO_DISPATCH_REASON "")
if(NOT SOADYN_DISPATCH)
  set(SOADYN_NO_DISPATCH_REASON "configured with SOADYN_DISPATCH=OFF")
elseif(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(SOADYN_NO_DISPATCH_REASON "not x86-64 (${CMAKE_SYSTEM_PROCESSOR})")
elseif(SOADYN_TUNING)
  set(SOADYN_NO_DISPATCH_REASON "compiled for this machine (${SOADYN_TUNING})")
elseif(SOADYN_SANITIZE OR SOADYN_BUILD_FUZZ)
  set(SOADYN_NO_DISPATCH_REASON "an instrumented build (sanitizers, fuzzing) checks the baseline only")
elseif(NOT CMAKE_C_COMPILER_ID STREQUAL "GNU" OR CMAKE_C_COMPILER_VERSION VERSION_LESS 12)
  set(SOADYN_NO_DISPATCH_REASON "needs GCC 12 or later (x86-64 levels in __builtin_cpu_supports)")
endif()

if(SOADYN_NO_DISPATCH_REASON)
  set(SOADYN_DISPATCH_ACTIVE OFF)
  list(APPEND SOADYN_CORE_SOURCES dispatch/no_dispatch.c)
  set_source_files_properties(dispatch/no_dispatch.c PROPERTIES
    COMPILE_DEFINITIONS "SOADYN_NO_DISPATCH_REASON=\"${SOADYN_NO_DISPATCH_REASON}\"")
  message(STATUS "soadyn: no run-time dispatch: ${SOADYN_NO_DISPATCH_REASON}")
else()
  set(SOADYN_DISPATCH_ACTIVE ON)
  list(APPEND SOADYN_CORE_SOURCES dispatch/dispatch.c)
  list(APPEND SOADYN_DISPATCH_COMPONENT_TABLE dispatch/dispatch_components.c) # appended with the components
  # The forced include renaming the dispatched definitions, written from the two lists' names.
  file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/dispatch/dispatched.h entries REGEX "^SD_DISPATCHED\\(")
  file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/dispatch/dispatched_components.h component_entries
       REGEX "^SD_DISPATCHED\\(")
  list(APPEND entries ${component_entries})
  string(CONCAT rename "/* Written by src/dispatch/sources.cmake from src/dispatch/dispatched.h: the hot paths'\n"
                       " * definitions of the dispatched entry points, renamed (src/dispatch/dispatch.c defines sd_X). */\n")
  foreach(entry ${entries})
    string(REGEX REPLACE "^SD_DISPATCHED\\(([a-z0-9_]+),.*" "\\1" name "${entry}")
    string(APPEND rename "#define sd_${name} sd_impl_${name}\n")
  endforeach()
  set(SOADYN_DISPATCH_RENAME ${PROJECT_BINARY_DIR}/dispatch/dispatch_rename.h)
  file(CONFIGURE OUTPUT ${SOADYN_DISPATCH_RENAME} CONTENT "${rename}" @ONLY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS dispatch/dispatched.h
               dispatch/dispatched_components.h)
  set_source_files_properties(${SOADYN_DISPATCH_HOT_SOURCES} ${SOADYN_DISPATCH_COMPONENT_HOT_SOURCES} PROPERTIES
    COMPILE_OPTIONS "-include;${SOADYN_DISPATCH_RENAME}" OBJECT_DEPENDS ${SOADYN_DISPATCH_RENAME})
  message(STATUS "soadyn: run-time dispatch of the hot paths: baseline, AVX2 (x86-64-v3), AVX-512 (x86-64-v4); "
                 "-mtune=${SOADYN_DISPATCH_TUNE}")
endif()

# One extra copy of the hot paths for LEVEL (an -march value), its symbols prefixed PREFIX; the
# object's path in the variable OUT: the core's hot paths, and with a fourth argument FULL_OUT also
# the object of the core's and the components' linked together (libsoadyn's). Called by
# src/CMakeLists.txt once soadyn_objects is defined.
function(soadyn_dispatch_copy level prefix out)
  set(objects soadyn_dispatch_${prefix}objects)
  soadyn_objects(${objects} ${SOADYN_DISPATCH_HOT_SOURCES})
  # Not fat: the relocatable object below is where their code is made.
  target_compile_options(${objects} PRIVATE -march=${level} -mtune=${SOADYN_DISPATCH_TUNE} -fno-fat-lto-objects)
  soadyn_dispatch_link(${level} ${prefix} ${prefix}hot_paths.o "${objects}" object)
  set(${out} ${object} PARENT_SCOPE)
  if(ARGC GREATER 3)
    set(component_objects soadyn_dispatch_${prefix}component_objects)
    soadyn_objects(${component_objects} ${SOADYN_DISPATCH_COMPONENT_HOT_SOURCES})
    target_compile_options(${component_objects} PRIVATE -march=${level} -mtune=${SOADYN_DISPATCH_TUNE}
                                                        -fno-fat-lto-objects)
    target_link_libraries(${component_objects} PRIVATE ${SOADYN_COMPONENT_LIBS}) # include directories
    soadyn_dispatch_link(${level} ${prefix} ${prefix}hot_paths_full.o "${objects};${component_objects}" full)
    set(${ARGV3} ${full} PARENT_SCOPE)
  endif()
endfunction()

# The relocatable object NAME of the object libraries TARGETS for LEVEL, its symbols prefixed
# PREFIX; its path in the variable OUT.
function(soadyn_dispatch_link level prefix name targets out)
  set(object ${CMAKE_CURRENT_BINARY_DIR}/dispatch/${name})
  # Lists go to the script joined by '|' (a ';' would split the -D argument).
  set(objects "")
  set(depends "")
  foreach(target ${targets})
    list(APPEND objects "$<JOIN:$<TARGET_OBJECTS:${target}>,|>")
    list(APPEND depends ${target} $<TARGET_OBJECTS:${target}>)
  endforeach()
  list(JOIN objects "|" objects)
  set(flags -O3 -march=${level} -mtune=${SOADYN_DISPATCH_TUNE} ${SOADYN_FP_CONTRACT} -fPIC)
  list(JOIN flags "|" flags)
  add_custom_command(OUTPUT ${object}
    COMMAND ${CMAKE_COMMAND} -DCC=${CMAKE_C_COMPILER} "-DFLAGS=${flags}" -DLTO=${SOADYN_IPO}
            "-DOBJECTS=${objects}" -DPREFIX=${prefix} -DOUTPUT=${object}
            -DNM=${CMAKE_NM} -DOBJCOPY=${CMAKE_OBJCOPY} -P ${PROJECT_SOURCE_DIR}/cmake/dispatch_copy.cmake
    DEPENDS ${depends} ${PROJECT_SOURCE_DIR}/cmake/dispatch_copy.cmake
    VERBATIM
    COMMENT "Linking the hot paths for ${level} (${prefix}*, ${name})")
  set(${out} ${object} PARENT_SCOPE)
endfunction()
