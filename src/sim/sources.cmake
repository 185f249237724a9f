# The sim layer (time integration, trajectories out): included by src/CMakeLists.txt.
# Needs SUNDIALS (CVODE with its serial vector) and PLplot (plots with the cairo devices).
find_package(SUNDIALS REQUIRED COMPONENTS cvode nvecserial)
pkg_check_modules(PLPLOT REQUIRED IMPORTED_TARGET plplot)

set(SOADYN_SIM_SOURCES
  sim/chart.c
  sim/rhs.c
  sim/rk4.c
  sim/cvode.c
  sim/simulate.c
  sim/labels.c
  sim/csv.c
  sim/trajectory.c
  sim/plot.c
)
set(SOADYN_SIM_LIBS SUNDIALS::cvode SUNDIALS::nvecserial PkgConfig::PLPLOT)
