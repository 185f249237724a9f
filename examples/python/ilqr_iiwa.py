#!/usr/bin/env python3
"""iLQR planning a reach on the KUKA iiwa 14 with soadyn's analytical derivatives.

    python3 examples/python/ilqr_iiwa.py [--model models/iiwa14.urdf] [--horizon 1.0] [--dt 0.002]

Discrete dynamics: a semi-implicit Euler step of h = dt,
    u+ = u + h qdd(q, u, tau),   q+ = q (+) h u+          (qdd by the articulated-body algorithm)
(explicit in u: h stays below 2 / 554 s, the iiwa's fastest damped speed, its light wrist with
0.5 N m s of damping), and its Jacobians from model.forward_dynamics_derivatives (d qdd/dq on the tangent space, d qdd/du,
d qdd/dtau = M^-1), all the horizon's states in one batched call:
    d u+/dq = h dqdd/dq,   d u+/du = I + h dqdd/du,   d u+/dtau = h dqdd/dtau
    d q+/dx = [I 0] + h d u+/dx                   (x = (q, u); the iiwa's hinges are all revolute, so
                                                   q (+) v = q + v and these are exact)
The cost is quadratic: (h/2) (w_q |q - q_goal|^2 + w_u |u|^2 + r |tau|^2) per step and
(1/2) (W_q |q_N - q_goal|^2 + W_u |u_N|^2) at the end; the first guess holds the start against
gravity. iLQR (Li and Todorov 2004; Tassa, Erez and Todorov 2012 for the regularisation): a
backward Riccati pass of the local linear-quadratic problem with Levenberg-Marquardt regularisation
mu of Q_uu, then a forward pass from the start with the feedback K and the feedforward k scaled by a
line search, accepted when the cost falls. The cost is printed at every iteration; the program
exits 1 unless it converged (relative decrease below --tol) with the end within 0.01 rad of the goal
and nearly at rest.
"""
import argparse
import os
import time

import numpy as np

import soadyn

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--model", default=os.path.join(here, "..", "..", "models", "iiwa14.urdf"))
ap.add_argument("--horizon", type=float, default=1.0, help="s")
ap.add_argument("--dt", type=float, default=0.002, help="the discrete step h, s")
ap.add_argument("--max-iter", type=int, default=100)
ap.add_argument("--tol", type=float, default=1e-6, help="relative cost decrease that ends the iterations")
ap.add_argument("--threads", type=int, default=1, help="threads of the batched derivatives")
args = ap.parse_args()

robot = soadyn.load(args.model)
nv, h = robot.nv, args.dt
N = int(round(args.horizon / h))
q_start = robot.neutral()
q_goal = q_start + np.linspace(0.6, -0.3, nv)  # every joint moves: a reach across the workspace
w_q, w_u, r = 1.0, 0.1, 1e-4  # running weights
W_q, W_u = 1e4, 1e2  # final weights
I = np.eye(nv)


def step(q, u, tau):
    """The semi-implicit Euler step."""
    u1 = u + h * robot.forward_dynamics(q, u, tau)
    return robot.integrate(q, u1, h), u1


def rollout(q0, u0, taus):
    Q, U = np.empty((N + 1, robot.nq)), np.empty((N + 1, nv))
    Q[0], U[0] = q0, u0
    for k in range(N):
        Q[k + 1], U[k + 1] = step(Q[k], U[k], taus[k])
    return Q, U


def cost(Q, U, taus):
    e = Q - q_goal  # revolute hinges: the difference is the tangent one
    run = 0.5 * h * (w_q * np.sum(e[:N] ** 2) + w_u * np.sum(U[:N] ** 2) + r * np.sum(taus ** 2))
    return run + 0.5 * (W_q * np.sum(e[N] ** 2) + W_u * np.sum(U[N] ** 2))


def linearise(Q, U, taus):
    """A_k (2nv x 2nv) and B_k (2nv x nv) of the step at every (q_k, u_k, tau_k): one batched call."""
    d = robot.forward_dynamics_derivatives(Q[:N], U[:N], taus, threads=args.threads)
    dudx = np.concatenate([h * d.dqdd_dq, I + h * d.dqdd_du], axis=2)  # N x nv x 2nv
    dudt = h * d.dqdd_dtau
    dqdx = np.concatenate([np.broadcast_to(I, (N, nv, nv)), np.zeros((N, nv, nv))], axis=2) + h * dudx
    A = np.concatenate([dqdx, dudx], axis=1)
    B = np.concatenate([h * dudt, dudt], axis=1)
    return A, B


def backward(Q, U, taus, A, B, mu):
    """Gains k_k, K_k and the expected decrease, or None when Q_uu is not positive definite."""
    Vx = np.concatenate([W_q * (Q[N] - q_goal), W_u * U[N]])
    Vxx = np.diag(np.concatenate([np.full(nv, W_q), np.full(nv, W_u)]))
    lxx = h * np.diag(np.concatenate([np.full(nv, w_q), np.full(nv, w_u)]))
    luu = h * r * I
    ks, Ks, dV = np.empty((N, nv)), np.empty((N, nv, 2 * nv)), 0.0
    for k in reversed(range(N)):
        lx = h * np.concatenate([w_q * (Q[k] - q_goal), w_u * U[k]])
        lu = h * r * taus[k]
        Qx, Qu = lx + A[k].T @ Vx, lu + B[k].T @ Vx
        Qxx = lxx + A[k].T @ Vxx @ A[k]
        Vreg = Vxx + mu * np.eye(2 * nv)
        Quu, Qux = luu + B[k].T @ Vreg @ B[k], B[k].T @ Vreg @ A[k]
        try:
            L = np.linalg.cholesky(Quu)
        except np.linalg.LinAlgError:
            return None
        solve = lambda b: np.linalg.solve(L.T, np.linalg.solve(L, b))  # noqa: E731
        ks[k], Ks[k] = -solve(Qu), -solve(Qux)
        Vx = Qx + Ks[k].T @ Quu @ ks[k] + Ks[k].T @ Qu + Qux.T @ ks[k]
        Vxx = Qxx + Ks[k].T @ Quu @ Ks[k] + Ks[k].T @ Qux + Qux.T @ Ks[k]
        Vxx = 0.5 * (Vxx + Vxx.T)
        dV += ks[k] @ Qu
    return ks, Ks, dV


def forward(Q, U, taus, ks, Ks, alpha):
    Qn, Un, tn = np.empty_like(Q), np.empty_like(U), np.empty_like(taus)
    Qn[0], Un[0] = Q[0], U[0]
    for k in range(N):
        dx = np.concatenate([Qn[k] - Q[k], Un[k] - U[k]])
        tn[k] = taus[k] + alpha * ks[k] + Ks[k] @ dx
        Qn[k + 1], Un[k + 1] = step(Qn[k], Un[k], tn[k])
    return Qn, Un, tn


t_start = time.perf_counter()
taus = np.tile(robot.inverse_dynamics(q_start, np.zeros(nv), np.zeros(nv)), (N, 1))  # hold against gravity
Q, U = rollout(q_start, np.zeros(nv), taus)
J = cost(Q, U, taus)
J0, mu, converged, t_derivs = J, 1e-6, False, 0.0
print(f"iLQR reach on {robot.name} (nv {nv}), horizon {N} steps of {h:g} s")
print(f"iter {0:3d}  cost {J:.9e}")
for it in range(1, args.max_iter + 1):
    t0 = time.perf_counter()
    A, B = linearise(Q, U, taus)
    t_derivs += time.perf_counter() - t0
    accepted = False
    while not accepted and mu < 1e10:
        g = backward(Q, U, taus, A, B, mu)
        if g is None:
            mu *= 10.0
            continue
        ks, Ks, dV = g
        for alpha in (1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125):
            Qn, Un, tn = forward(Q, U, taus, ks, Ks, alpha)
            Jn = cost(Qn, Un, tn)
            if np.isfinite(Jn) and Jn < J:
                accepted = True
                break
        if not accepted:
            mu *= 10.0
    if not accepted:
        print(f"iter {it:3d}  no step lowers the cost (mu {mu:.1e}): stopped")
        break
    decrease = (J - Jn) / J
    Q, U, taus, J = Qn, Un, tn, Jn
    mu = max(1e-9, mu / 10.0)
    print(f"iter {it:3d}  cost {J:.9e}  step {alpha:g}  mu {mu:.1e}")
    if decrease < args.tol:
        converged = True
        break

err_q = float(np.max(np.abs(Q[N] - q_goal)))
err_u = float(np.max(np.abs(U[N])))
print(f"{'converged' if converged else 'not converged'} after {it} iterations, "
      f"{time.perf_counter() - t_start:.2f} s ({t_derivs:.3f} s in the batched derivatives)")
print(f"cost {J0:.6e} -> {J:.6e}; final |q - q_goal| {err_q:.2e} rad, |u| {err_u:.2e} rad/s; "
      f"largest |tau| {np.max(np.abs(taus)):.1f} N m")
raise SystemExit(0 if converged and J < J0 and err_q < 1e-2 and err_u < 5e-2 else 1)
