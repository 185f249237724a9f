# The sim layer (time integration, trajectories out): included by src/CMakeLists.txt, which says what
# the SOADYN_COMPONENT_* lists are. RK4, Radau IIA (LAPACK, as the loops component), the CSV writer and
# trajectories are always built (the soadyn command needs them); the CVODE integrators (SUNDIALS) and plots (PLplot)
# are each a switch. Off, their functions stay and say "not offered" (*_not_built.c).
list(APPEND SOADYN_COMPONENT_HEADERS sim.h)
list(APPEND SOADYN_COMPONENT_SOURCES
  sim/chart.c
  sim/rhs.c
  sim/embedded_system.c
  sim/constraint_projection.c
  sim/rk4.c
  sim/radau.c
  sim/jacobian.c
  sim/simulate.c
  sim/labels.c
  sim/csv.c
  sim/output_file.c
  sim/trajectory.c
)

if(SOADYN_WITH_CVODE)
  find_package(SUNDIALS QUIET COMPONENTS cvode nvecserial)
  if(NOT SUNDIALS_FOUND)
    message(FATAL_ERROR "SOADYN_WITH_CVODE needs SUNDIALS CVODE (Debian: apt-get install libsundials-dev), "
                        "or configure with -DSOADYN_WITH_CVODE=OFF")
  endif()
  list(APPEND SOADYN_COMPONENT_SOURCES sim/cvode.c)
  list(APPEND SOADYN_COMPONENT_LIBS SUNDIALS::cvode SUNDIALS::nvecserial)
  # SUNDIALS installs no pkg-config file: name its libraries.
  list(APPEND SOADYN_PC_LIBS_PRIVATE -lsundials_cvode -lsundials_nvecserial)
else()
  list(APPEND SOADYN_COMPONENT_SOURCES sim/cvode_not_built.c)
endif()

if(SOADYN_WITH_PLOT)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(PLPLOT QUIET IMPORTED_TARGET GLOBAL plplot)
  endif()
  if(NOT PLPLOT_FOUND)
    message(FATAL_ERROR "SOADYN_WITH_PLOT needs PLplot through pkg-config (Debian: apt-get install "
                        "pkg-config libplplot-dev plplot-driver-cairo), or configure with -DSOADYN_WITH_PLOT=OFF")
  endif()
  list(APPEND SOADYN_COMPONENT_SOURCES sim/plot.c)
  list(APPEND SOADYN_COMPONENT_LIBS PkgConfig::PLPLOT)
  list(APPEND SOADYN_PC_REQUIRES_PRIVATE plplot)
else()
  list(APPEND SOADYN_COMPONENT_SOURCES sim/plot_not_built.c)
endif()
