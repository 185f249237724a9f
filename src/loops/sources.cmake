# The loops component: closure constraints by tree augmentation (000 Sec 4). Included by
# src/CMakeLists.txt (see there for the SOADYN_COMPONENT_* lists).
# The constraint model (builder, resolution, workspace) and the constraint kinematics need nothing
# but libm and the model's layout, and the core's builder, model and workspace call them: they are
# core sources. The closed-loop dynamics needs a rank-revealing solve for redundant constraints,
# which LAPACK (Debian liblapacke-dev) does well: it is the component, always built (LAPACK is part
# of every Debian install that has a compiler toolchain's numerical stack, and a closed-loop model
# without its dynamics would be half a feature).
list(APPEND SOADYN_CORE_SOURCES
  loops/constraint_model.c
  loops/constraint_kinematics.c
  loops/rank_rule.c
)
list(APPEND SOADYN_COMPONENT_HEADERS loops.h)
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(LAPACKE QUIET IMPORTED_TARGET GLOBAL lapacke)
endif()
if(NOT LAPACKE_FOUND)
  message(FATAL_ERROR "the loops component needs LAPACKE through pkg-config (Debian: apt-get install "
                      "pkg-config liblapacke-dev)")
endif()
list(APPEND SOADYN_COMPONENT_SOURCES
  loops/closed_dynamics.c
  loops/constraint_solvers.c
  loops/row_space.c
)
list(APPEND SOADYN_COMPONENT_LIBS PkgConfig::LAPACKE)
list(APPEND SOADYN_PC_REQUIRES_PRIVATE lapacke)
