# Compiled models (soadyn/compile.h): the generated code compiled with the system C compiler, cached
# and loaded with dlopen. A component beside codegen (it runs a compiler and writes files). Included
# by src/CMakeLists.txt after codegen/sources.cmake.
list(APPEND SOADYN_COMPONENT_HEADERS compile.h)
list(APPEND SOADYN_COMPONENT_SOURCES
  compile/compile_key.c
  compile/compile_run.c
  compile/compile_check.c
  compile/compile.c
)
list(APPEND SOADYN_COMPONENT_LIBS ${CMAKE_DL_LIBS})
if(CMAKE_DL_LIBS)
  list(APPEND SOADYN_PC_LIBS_PRIVATE "-l${CMAKE_DL_LIBS}")
endif()

# The generator's identity in the cache key: a hash of its sources, so that a soadyn built from a
# changed generator never takes an object another one compiled. CMake configures again when they change.
file(GLOB generator_files ${CMAKE_CURRENT_SOURCE_DIR}/codegen/*.c ${CMAKE_CURRENT_SOURCE_DIR}/codegen/*.h
     ${PROJECT_SOURCE_DIR}/include/soadyn/codegen.h)
list(SORT generator_files)
set(generator_hashes "")
foreach(file ${generator_files})
  file(SHA256 ${file} file_hash)
  string(APPEND generator_hashes "${file_hash}")
endforeach()
string(SHA256 generator_id "${generator_hashes}")
string(SUBSTRING "${generator_id}" 0 16 generator_id)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${generator_files})
set_source_files_properties(compile/compile.c PROPERTIES COMPILE_DEFINITIONS "SOADYN_GENERATOR_ID=\"${generator_id}\"")
