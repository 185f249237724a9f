/*
 * bench/bench_mujoco.h — the MuJoCo side of the side-by-side table (soadyn_bench --peers): a model
 * loaded into MuJoCo from the same file soadyn loads, its speeds matched to soadyn's by joint name,
 * and one call per table cell. Built only when CMake finds Debian's libmujoco-dev
 * (SOADYN_BENCH_MUJOCO); bench_peers.c says "not built" otherwise.
 */
#ifndef SOADYN_BENCH_MUJOCO_H
#define SOADYN_BENCH_MUJOCO_H

#include <stddef.h>

#include <soadyn/soadyn.h>

/* The four cells of the issue-12 table, each with its kinematics. */
typedef enum bench_cell { CELL_ID = 0, CELL_M, CELL_FD, CELL_MINV, NCELLS } bench_cell;

typedef struct mj_peer mj_peer;

/* MuJoCo's version, e.g. "2.2.2". */
const char *mj_peer_version(void);
/* A URDF file as MuJoCo reads it: a copy without visual, collision, gazebo and transmission elements
 * (meshes are not shipped; without geoms there are no contacts), each inertia in its principal axes
 * (MuJoCo's own eigen-decomposition is good to ~1e-8 only), and with floating != 0 a "world"
 * link and a floating joint "soadyn_free" to the root link, which MuJoCo makes a free joint; a link
 * whose inertia MuJoCo refuses (principal moments breaking A + B >= C) gets the isotropic inertia
 * MuJoCo's balanceinertia would give it, and is named in `changed`. The copy is written to
 * `copy_path` so that soadyn loads exactly the same file. Returns the model as timed (MuJoCo's
 * fusestatic on, the URDF default: fixed joints merged, as soadyn does) and in *check the same file
 * with fusestatic off, whose M is exact (MuJoCo re-diagonalises merged inertias to ~1e-8); NULL
 * with a message on failure. */
mj_peer *mj_peer_load_urdf(const char *path, int floating, const char *copy_path, char *changed, size_t changed_size,
                           mj_peer **check, char *msg, size_t msg_size);
void mj_peer_free(mj_peer *p);
int mj_peer_nv(const mj_peer *p);

/* Match soadyn's speeds to MuJoCo's dofs: 1-dof joints by name, soadyn's free hinge onto MuJoCo's
 * free joint (qvel = (R v, omega) against soadyn's u = (omega, v) in the body frame); copies
 * soadyn's armature into MuJoCo's dof_armature. 0 on success, else -1 with a message. */
int mj_peer_bind(mj_peer *p, const sd_model *m, char *msg, size_t msg_size);
/* Set MuJoCo's state to soadyn's (q, u, qdd, tau) through the binding. */
void mj_peer_set_state(mj_peer *p, const double *q, const double *u, const double *qdd, const double *tau);
/* max |M_soadyn - T^T M_mujoco T| / max |M_soadyn| at the state set, T the speed map (qvel = T u):
 * the proof that both time the same model. */
double mj_peer_mass_matrix_difference(mj_peer *p, const double *M_soadyn);
/* One call of a cell (the MuJoCo functions it runs are listed in bench_mujoco.c). */
void mj_peer_run(mj_peer *p, bench_cell cell);

#endif /* SOADYN_BENCH_MUJOCO_H */
