/*
 * soadyn/soadyn.h — the one header a user includes.
 *
 * soadyn computes and simulates the dynamics of multibody systems with the Spatial Operator
 * Algebra of Jain and Rodriguez. Layers, each using only those before it:
 *   spatial.h   spatial algebra kernels (inline, no allocation)
 *   model.h     immutable model, builder, configurations
 *   params.h    a built model's parameters changed in place (campaigns)
 *   dynamics.h  workspace (sd_data) and the algorithms
 *   flex.h      flexible bodies (assumed modes, nodes)
 *   loops.h     closure constraints and closed-loop dynamics
 *   urdf.h      URDF models in
 *   sdf.h       SDF models in (libsdformat)
 *   mjcf.h      MJCF (MuJoCo) models in
 *   io.h        any model file, the format chosen by its content
 *   sim.h       time integration, trajectories out
 *   view.h      a motion as one HTML page (three.js)
 *   cpu.h       which machine code the entry points run (run-time dispatch)
 */
#ifndef SOADYN_SOADYN_H
#define SOADYN_SOADYN_H

#define SOADYN_VERSION_MAJOR 0
#define SOADYN_VERSION_MINOR 1
#define SOADYN_VERSION_PATCH 0
#define SOADYN_VERSION "0.1.0"

#include "spatial.h"
#include "model.h"
#include "params.h"
#include "dynamics.h"
#include "flex.h"
#include "loops.h"
#include "urdf.h"
#include "sdf.h"
#include "mjcf.h"
#include "codegen.h"
#include "compile.h"
#include "io.h"
#include "sim.h"
#include "view.h"
#include "batch.h"
#include "derivatives.h"
#include "embed.h"
#include "cpu.h"

#endif /* SOADYN_SOADYN_H */
