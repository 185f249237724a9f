"""soadyn from Python: multibody dynamics by the Spatial Operator Algebra (the C library libsoadyn).

    import numpy as np, soadyn
    robot = soadyn.load("models/iiwa14.urdf")          # URDF, MJCF or SDF, chosen by the file's content
    q, u, tau = robot.neutral(), np.zeros(robot.nv), np.zeros(robot.nv)
    qdd = robot.forward_dynamics(q, u, tau)           # O(N) articulated body, 004 Alg 6.1
    M = robot.mass_matrix(q)                          # composite bodies, 004 Alg 4.2
    t, qs, us = robot.simulate(q, u, duration=1.0, dt=1e-3, control=lambda t, q, u: -10 * u)

Design (the rules every function follows):
- One `Model` per loaded file owns the C model and one workspace (sd_data). Calls on one Model are
  not thread-safe (the workspace is shared); load the file once per thread instead. The readers of
  the C API that answer "for the state of the last call" are folded into the functions here, which
  always take the state (e.g. `body_placements(q)`), so calls are independent.
- Every algorithm is a method of Model and also a module function taking the model first
  (`soadyn.forward_dynamics(model, q, u, tau)` is `Model.forward_dynamics`), with no extra layer.
- Arrays: numpy float64. An input that is a C-contiguous float64 ndarray is passed to C as it is (no
  copy); another ndarray of float64 (a strided view) is copied once; lists and tuples are converted.
  An ndarray of another dtype is refused (ArgumentTypeError, a TypeError): no silent conversion of
  integers or float32. Outputs are new arrays, allocated once per call (or written into `out=` when
  given, which must then be C-contiguous float64 of the output's shape).
- Batches: every state argument may carry a leading axis of n states (q of shape (n, nq), f_ext
  (n, nbodies, 6), ...); the outputs then have that leading axis too. Arguments without it are used
  for every state (broadcast). The loop over states runs in C (python/soadyn/_helpers.c), one
  crossing per call, never a Python loop over states or bodies. A batched call equals the single
  calls state by state, bit for bit.
- Errors: a C status other than SD_OK raises the soadyn.Error subclass of that status
  (ArgumentError, ModelError, SingularError, OutOfMemoryError, FileError, ParseError,
  NotSupportedError, SolverError, NotFiniteError) carrying the C message (`.message`, `.status`;
  in a batch prefixed "state i: "). A NaN or inf input is refused by the C API itself
  (ArgumentError "...: q[3] is not finite"). Wrong lengths and dtypes are ArgumentError /
  ArgumentTypeError raised here, naming the argument and the size expected.
- f_ext: 6 numbers per body, the external spatial force [moment; force] on it in its body frame
  about its origin (`external_force_at_point` builds one from a force at a point).
- Spatial vectors are [angular; linear]; body velocities and accelerations in the body frame at its
  origin; Jacobians and momenta in world axes (soadyn/dynamics.h).

Building and installing (no network; Debian's python3-cffi, python3-numpy):
- `cmake --build BUILD` builds the extension into BUILD/python (the tests run it from there) and
  `cmake --install BUILD` installs the package into PREFIX/lib/python3.X/dist-packages (CMake
  option SOADYN_WITH_PYTHON, on when /usr/bin/python3 with cffi and numpy is found; cache variable
  SOADYN_PYTHON_INSTALL_DIR overrides the folder).
- `/usr/bin/python3 -m pip install --no-build-isolation ./python` builds it against an installed
  soadyn found by pkg-config (module soadyn; set PKG_CONFIG_PATH=PREFIX/lib/pkgconfig), or against
  SOADYN_INCLUDE_DIRS + SOADYN_LIBRARY_DIR when both are set (python/soadyn/_build.py). The library's
  folder is written into the extension as its run-time path (SOADYN_RPATH overrides).
"""
import math
import os

import numpy as np

from ._soadyn_cffi import ffi, lib

__all__ = [
    "Model", "load", "Error", "ArgumentError", "ArgumentTypeError", "ModelError", "SingularError",
    "OutOfMemoryError", "FileError", "ParseError", "NotSupportedError", "SolverError", "NotFiniteError",
    "SimResult", "has_viewer", "write_view",
]

# ---------------------------------------------------------------- errors


class Error(Exception):
    """A failed soadyn call: `status` (the C sd_status name) and `message` (the C message)."""

    status = "error"

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class ArgumentError(Error, ValueError):
    """SD_E_ARGUMENT: a size, an index, a non-finite number."""
    status = "invalid argument"


class ArgumentTypeError(ArgumentError, TypeError):
    """An array of the wrong dtype (raised here, before any C call)."""


class ModelError(Error):
    """SD_E_MODEL: the model description is invalid (names the element)."""
    status = "invalid model"


class SingularError(Error, ArithmeticError):
    """SD_E_SINGULAR: a singular articulated inertia D(k), mass matrix or constraint set."""
    status = "singular"


class OutOfMemoryError(Error, MemoryError):
    """SD_E_MEMORY."""
    status = "out of memory"


class FileError(Error, OSError):
    """SD_E_IO: a file could not be read or written (a missing model file)."""
    status = "i/o error"


class ParseError(Error):
    """SD_E_PARSE: a malformed model file (file:line and the element)."""
    status = "parse error"


class NotSupportedError(Error, NotImplementedError):
    """SD_E_NOT_SUPPORTED: a feature this model or build does not offer."""
    status = "not supported"


class SolverError(Error):
    """SD_E_SOLVER: a time integrator failed."""
    status = "solver failure"


class NotFiniteError(Error, ArithmeticError):
    """SD_E_NOT_FINITE: a result overflowed (names the output and index)."""
    status = "not finite"


_ERRORS = {
    lib.SD_E_ARGUMENT: ArgumentError, lib.SD_E_MODEL: ModelError, lib.SD_E_SINGULAR: SingularError,
    lib.SD_E_MEMORY: OutOfMemoryError, lib.SD_E_IO: FileError, lib.SD_E_PARSE: ParseError,
    lib.SD_E_NOT_SUPPORTED: NotSupportedError, lib.SD_E_SOLVER: SolverError,
    lib.SD_E_NOT_FINITE: NotFiniteError,
}


def _raise(status, message):
    cls = _ERRORS.get(status, Error)
    if not message:
        message = ffi.string(lib.sd_status_name(status)).decode()
    raise cls(message)


def _str(p):
    return ffi.string(p).decode("utf-8", "replace") if p != ffi.NULL else None


# ---------------------------------------------------------------- arrays

_F64 = np.dtype(np.float64)
_NULL = ffi.NULL
_from_buffer = ffi.from_buffer
_ndarray = np.ndarray
_empty = np.empty
_DBL = ffi.typeof("double[]")
_c_fd = lib.sd_forward_dynamics
_c_id = lib.sd_inverse_dynamics


def _as_f64(name, a):
    """a as a C-contiguous float64 ndarray: itself when it is one, else a checked conversion."""
    if type(a) is _ndarray:
        if a.dtype is not _F64 and a.dtype != _F64:
            raise ArgumentTypeError(f"{name}: dtype {a.dtype}, expected float64")
        if not a.flags.c_contiguous:
            a = np.ascontiguousarray(a)
        return a
    if isinstance(a, np.ndarray):
        return _as_f64(name, np.asarray(a))
    try:
        a = np.asarray(a, dtype=_F64)
    except (TypeError, ValueError) as exc:
        raise ArgumentTypeError(f"{name}: not an array of numbers ({exc})") from None
    return np.ascontiguousarray(a)


class _Batch:
    """Collects a call's inputs: each has a base shape; a leading axis of states is allowed once
    and must agree among the inputs that have it (the others broadcast, stride 0)."""

    __slots__ = ("fn", "n")

    def __init__(self, fn):
        self.fn = fn
        self.n = -1  # -1: no input carries a leading axis (one state)

    def add(self, name, a, shape):
        """(pointer, stride in doubles) of input `a` of base shape `shape`."""
        a = _as_f64(name, a)
        nd = len(shape)
        ashape = a.shape
        if ashape == shape:
            return _from_buffer("double[]", a), 0, a
        if len(ashape) == nd + 1 and ashape[1:] == shape:
            if self.n >= 0 and ashape[0] != self.n:
                raise ArgumentError(f"{self.fn}: {name} has {ashape[0]} states, other arguments {self.n}")
            self.n = ashape[0]
            size = 1
            for s in shape:
                size *= s
            return _from_buffer("double[]", a), size, a
        want = "x".join(str(s) for s in shape)
        raise ArgumentError(f"{self.fn}: {name} has shape {ashape}, expected ({want}) or (n, {want})"
                            f"{' [' + _SIZE_HINT.get(name, '') + ']' if name in _SIZE_HINT else ''}")

    def rows(self):
        return 1 if self.n < 0 else self.n

    def shape(self, *base):
        return base if self.n < 0 else (self.n,) + base


_SIZE_HINT = {"q": "nq", "u": "nv", "tau": "nv", "qdd": "nv", "x": "nv", "f_ext": "nbodies x 6"}


def _output(out, shape, name="out"):
    if out is None:
        return np.empty(shape)
    if type(out) is not _ndarray or out.dtype != _F64 or not out.flags.c_contiguous or out.shape != shape:
        raise ArgumentError(f"{name}: must be a C-contiguous float64 array of shape {shape}")
    return out


def _flags(name, value, n, kind, names):
    """One unsigned char flag per element (body or speed) from a bool array or a list of names."""
    if value is None:
        return _NULL, None
    arr = np.zeros(n, dtype=np.uint8)
    if isinstance(value, (list, tuple, set)) and value and all(isinstance(v, (str, int, np.integer)) and
                                                               not isinstance(v, bool) for v in value):
        for v in value:
            i = names.index(v) if isinstance(v, str) and v in names else v
            if isinstance(i, str) or not 0 <= i < n:
                raise ArgumentError(f"{name}: no {kind} {v!r}")
            arr[i] = 1
    else:
        b = np.asarray(value)
        if b.shape != (n,):
            raise ArgumentError(f"{name}: {b.shape} flags, expected one per {kind} ({n})")
        arr[:] = b != 0
    return ffi.from_buffer("unsigned char[]", arr), arr


_FORCE_FRAMES = {"body": 0, "world": 1, "joint": 2}
_CONSTRAINT_FRAMES = {"local": 0, "world": 1}
_FACTOR_OPS = {"ne": 0, "ne_transpose": 1, "inv": 2, "inv_transpose": 3}


# ---------------------------------------------------------------- the model


def load(path, floating=False, keep_fixed=False):
    """Load a URDF, MJCF or SDF file (the format chosen by its root element: sd_model_load_file).

    floating: a free hinge on the root link (URDF; SDF models without a joint to the world float
    anyway, MJCF files say it themselves). keep_fixed: fixed joints as 0-dof bodies instead of
    merged (URDF, SDF). Raises FileError for a missing file, ParseError / ModelError with file:line."""
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentTypeError(f"load: path must be a str or os.PathLike, not {type(path).__name__}")
    spath = os.fspath(path)
    if "\0" in spath:  # C would read the path only up to it: another file than the one named
        raise ArgumentError(f"load: path {spath!r} holds a NUL character")
    opt = ffi.new("sd_load_options *")
    opt.urdf.floating_base = 1 if floating else 0
    opt.urdf.keep_fixed_joints = 1 if keep_fixed else 0
    opt.sdf.keep_fixed_joints = 1 if keep_fixed else 0
    pm = ffi.new("sd_model **")
    fmt = ffi.new("sd_model_format *")
    err = ffi.new("sd_error *")
    st = lib.sd_model_load_file(spath.encode(), opt, pm, fmt, err)
    if st != lib.SD_OK:
        _raise(st, _str(err.message))
    return Model(pm[0], spath, _str(lib.sd_model_format_name(fmt[0])))


class Model:
    """A loaded model and its workspace. Properties describe it; methods evaluate the dynamics."""

    def __init__(self, cmodel, path=None, format=None):
        d = lib.sd_data_new(cmodel)
        if d == ffi.NULL:
            lib.sd_model_free(cmodel)
            raise OutOfMemoryError("sd_data_new: out of memory")

        def free(m, d=d):
            lib.sd_data_free(d)
            lib.sd_model_free(m)

        self._m = ffi.gc(cmodel, free)
        self._d = d
        self.path = path
        self.format = format
        m = self._m
        self.name = _str(lib.sd_model_name(m))
        self.nq = lib.sd_model_nq(m)
        self.nv = lib.sd_model_nv(m)
        self.nbodies = lib.sd_model_nbodies(m)
        nb = self.nbodies
        self.body_names = [_str(lib.sd_model_body_name(m, k)) for k in range(nb)]
        self.joint_names = [_str(lib.sd_model_joint_name(m, k)) for k in range(nb)]
        self.parents = [lib.sd_model_parent(m, k) for k in range(nb)]
        self.hinge_types = [_str(lib.sd_hinge_type_name(lib.sd_model_hinge(m, k))) for k in range(nb)]
        self.q_index = [lib.sd_model_q_index(m, k) for k in range(nb)]
        self.v_index = [lib.sd_model_v_index(m, k) for k in range(nb)]
        self.hinge_nq = [lib.sd_model_hinge_nq(m, k) for k in range(nb)]
        self.hinge_nv = [lib.sd_model_hinge_nv(m, k) for k in range(nb)]
        self.body_masses = np.array([lib.sd_model_body_mass(m, k) for k in range(nb)])
        buf = ffi.new("char[256]")
        self.coordinate_labels = []
        for i in range(self.nq):
            lib.sd_coordinate_label(m, i, buf, 256)
            self.coordinate_labels.append(_str(buf))
        self.speed_labels = []
        for i in range(self.nv):
            lib.sd_speed_label(m, i, buf, 256)
            self.speed_labels.append(_str(buf))
        self.frame_names = [_str(lib.sd_model_frame_name(m, k)) for k in range(lib.sd_model_nframes(m))]
        self.frame_bodies = [lib.sd_model_frame_body(m, k) for k in range(len(self.frame_names))]
        self.warnings = [_str(lib.sd_model_warning(m, i)) for i in range(lib.sd_model_nwarnings(m))]
        self.nconstraints = lib.sd_model_nconstraints(m)
        self.nconstraint_rows = lib.sd_model_nconstraint_rows(m)
        self.constraint_names = [_str(lib.sd_model_constraint_name(m, c)) for c in range(self.nconstraints)]
        self.constraint_row_offsets = [lib.sd_model_constraint_row_offset(m, c) for c in range(self.nconstraints)]
        self.constraint_nrows = [lib.sd_model_constraint_nrows(m, c) for c in range(self.nconstraints)]
        self.nflexible = lib.sd_model_nflexible(m)
        self.body_nmodes = [lib.sd_model_body_nmodes(m, k) for k in range(nb)]
        self.body_nnodes = [lib.sd_model_body_nnodes(m, k) for k in range(nb)]
        self.mode_q_index = [lib.sd_model_mode_q_index(m, k) for k in range(nb)]
        self.mode_v_index = [lib.sd_model_mode_v_index(m, k) for k in range(nb)]
        g = ffi.new("double[3]")
        lib.sd_model_gravity(m, g)
        self.gravity = np.array(list(g))
        self.total_mass = lib.sd_model_total_mass(m)
        self.armature = np.array([lib.sd_model_armature(m, v) for v in range(self.nv)])
        self.damping = np.array([lib.sd_model_damping(m, v) for v in range(self.nv)])
        self.stiffness = np.array([lib.sd_model_stiffness(m, v) for v in range(self.nv)])
        self._fshape = (nb, 6)
        self._strides = ffi.new("sdpy_strides *")
        self._row = ffi.new("long *")

    def __repr__(self):
        return f"<soadyn.Model {self.name!r}: {self.nbodies} bodies, nq {self.nq}, nv {self.nv}>"

    # ------------------------------------------------------------ helpers

    def _fail(self, st, n):
        msg = _str(lib.sd_data_error(self._d))
        if n >= 0:
            msg = f"state {self._row[0]}: {msg}"
        _raise(st, msg)

    def body_index(self, body):
        """The index of a body given by name or index (ArgumentError if there is none)."""
        if isinstance(body, str):
            k = lib.sd_model_body_index(self._m, body.encode())
            if k < 0:
                raise ArgumentError(f"model {self.name}: no body named {body!r}")
            return k
        if isinstance(body, (bool, np.bool_)) or not isinstance(body, (int, np.integer)):
            # int(1.5) would silently pick body 1
            raise ArgumentTypeError(f"model {self.name}: a body is a name or an integer index, not "
                                    f"{type(body).__name__} {body!r}")
        k = int(body)
        if not 0 <= k < self.nbodies:
            raise ArgumentError(f"model {self.name}: body index {k} out of range 0..{self.nbodies - 1}")
        return k

    def joint_index(self, joint):
        """The body index of the hinge named `joint` (ArgumentError if there is none)."""
        k = lib.sd_model_joint_index(self._m, joint.encode())
        if k < 0:
            raise ArgumentError(f"model {self.name}: no joint named {joint!r}")
        return k

    def _state_q(self, fn, q):
        b = _Batch(fn)
        pq, sq, _ = b.add("q", q, (self.nq,))
        return b, pq, sq

    # ------------------------------------------------------------ configurations

    def neutral(self):
        """The neutral configuration (zero angles, identity quaternions), nq."""
        q = np.empty(self.nq)
        lib.sd_configuration_neutral(self._m, _from_buffer("double[]", q))
        return q

    def reference(self):
        """The model's reference configuration: the pose its file describes (an MJCF model's qpos0;
        a URDF or SDF model's neutral one), where the command starts by default."""
        q = np.empty(self.nq)
        lib.sd_configuration_reference(self._m, _from_buffer("double[]", q))
        return q

    def random_configuration(self, seed=1, n=None):
        """Random configurations (angles in the joint limits or [-pi, pi], uniform quaternions) from a
        reproducible generator (xorshift64*, sd_configuration_random); n: that many rows."""
        rng = ffi.new("uint64_t *", int(seed) or 1)
        rows = 1 if n is None else int(n)
        q = np.empty((rows, self.nq))
        for i in range(rows):
            lib.sd_configuration_random(self._m, rng, _from_buffer("double[]", q[i]))
        return q[0] if n is None else q

    def integrate(self, q, u, dt=1.0):
        """q (+) u dt on the configuration manifold (quaternions by the exponential map)."""
        q = _as_f64("q", q)
        u = _as_f64("u", u)
        self._check1("integrate", q=q, u=u)
        out = np.empty(self.nq)
        lib.sd_configuration_integrate(self._m, _from_buffer("double[]", q), _from_buffer("double[]", u),
                                       float(dt), _from_buffer("double[]", out))
        return out

    def difference(self, q0, q1):
        """u = q1 (-) q0, the constant speed taking q0 to q1 in unit time."""
        q0 = _as_f64("q0", q0)
        q1 = _as_f64("q1", q1)
        self._check1("difference", q0=q0, q1=q1)
        out = np.empty(self.nv)
        lib.sd_configuration_difference(self._m, _from_buffer("double[]", q0), _from_buffer("double[]", q1),
                                        _from_buffer("double[]", out))
        return out

    def normalize(self, q):
        """A copy of q with every quaternion rescaled to unit length."""
        q = np.array(_as_f64("q", q))
        self._check1("normalize", q=q)
        lib.sd_configuration_normalize(self._m, _from_buffer("double[]", q))
        return q

    def _check1(self, fn, **arrays):
        for name, a in arrays.items():
            want = self.nq if name.startswith("q") else self.nv
            if a.shape != (want,):
                raise ArgumentError(f"{fn}: {name} has shape {a.shape}, expected ({want},)")

    # ------------------------------------------------------------ dynamics

    def forward_dynamics(self, q, u, tau, f_ext=None, out=None):
        """qdd = M^-1 (tau - C + J^T f_ext) by the O(N) articulated-body algorithm (004 Alg 6.1), the
        armature in D(k) = H P H* + J (004 Eq 33) and the joints' damping and springs added to tau."""
        # Fast path of one state given as 1-D float64 ndarrays: straight to the C call (from_buffer
        # refuses a non-contiguous array, a list has no dtype: the general path below takes them).
        try:  # an AttributeError (not an ndarray) or BufferError (not contiguous): the general path
            fast = f_ext is None and out is None and q.dtype is _F64 and u.dtype is _F64 and tau.dtype is _F64 \
                and q.ndim == u.ndim == tau.ndim == 1
            if fast:
                pq, pu, pt = _from_buffer(_DBL, q), _from_buffer(_DBL, u), _from_buffer(_DBL, tau)
        except (AttributeError, BufferError, ValueError):
            fast = False
        if fast and len(pq) == self.nq and len(pu) == self.nv and len(pt) == self.nv:
            qdd = _empty(self.nv)
            st = _c_fd(self._m, self._d, pq, pu, pt, _NULL, _from_buffer(_DBL, qdd))
            if st:
                self._fail(st, -1)
            return qdd
        b = _Batch("forward_dynamics")
        s = self._strides
        pq, s.q, _ = b.add("q", q, (self.nq,))
        pu, s.u, _ = b.add("u", u, (self.nv,))
        pt, s.x, _ = b.add("tau", tau, (self.nv,))
        if f_ext is None:
            pf = _NULL
        else:
            pf, s.f, _ = b.add("f_ext", f_ext, self._fshape)
        qdd = _output(out, b.shape(self.nv))
        st = lib.sdpy_forward_dynamics(self._m, self._d, b.rows(), s, pq, pu, pt, pf,
                                       _from_buffer("double[]", qdd), 0, self._row)
        if st:
            self._fail(st, b.n)
        return qdd

    def forward_dynamics_cholesky(self, q, u, tau, f_ext=None):
        """The same qdd from M and C by a dense Cholesky solve, O(N^3) (001 Sec 3): the reference."""
        b = _Batch("forward_dynamics_cholesky")
        s = self._strides
        pq, s.q, _ = b.add("q", q, (self.nq,))
        pu, s.u, _ = b.add("u", u, (self.nv,))
        pt, s.x, _ = b.add("tau", tau, (self.nv,))
        pf = _NULL
        if f_ext is not None:
            pf, s.f, _ = b.add("f_ext", f_ext, self._fshape)
        qdd = np.empty(b.shape(self.nv))
        st = lib.sdpy_forward_dynamics(self._m, self._d, b.rows(), s, pq, pu, pt, pf,
                                       _from_buffer("double[]", qdd), 1, self._row)
        if st:
            self._fail(st, b.n)
        return qdd

    def inverse_dynamics(self, q, u, qdd, f_ext=None, out=None):
        """tau = M qdd + C - J^T f_ext by Newton-Euler (004 Alg 3.1), armature and passive forces included."""
        try:  # the fast path of forward_dynamics
            fast = f_ext is None and out is None and q.dtype is _F64 and u.dtype is _F64 and qdd.dtype is _F64 \
                and q.ndim == u.ndim == qdd.ndim == 1
            if fast:
                pq, pu, pa = _from_buffer(_DBL, q), _from_buffer(_DBL, u), _from_buffer(_DBL, qdd)
        except (AttributeError, BufferError, ValueError):
            fast = False
        if fast and len(pq) == self.nq and len(pu) == self.nv and len(pa) == self.nv:
            tau = _empty(self.nv)
            st = _c_id(self._m, self._d, pq, pu, pa, _NULL, _from_buffer(_DBL, tau))
            if st:
                self._fail(st, -1)
            return tau
        b = _Batch("inverse_dynamics")
        s = self._strides
        pq, s.q, _ = b.add("q", q, (self.nq,))
        pu, s.u, _ = b.add("u", u, (self.nv,))
        pa, s.x, _ = b.add("qdd", qdd, (self.nv,))
        pf = _NULL
        if f_ext is not None:
            pf, s.f, _ = b.add("f_ext", f_ext, self._fshape)
        tau = _output(out, b.shape(self.nv))
        st = lib.sdpy_inverse_dynamics(self._m, self._d, b.rows(), s, pq, pu, pa, pf,
                                       _from_buffer("double[]", tau), self._row)
        if st:
            self._fail(st, b.n)
        return tau

    def bias_forces(self, q, u, f_ext=None):
        """C(q, u) - J^T f_ext: gravity, velocity terms and -tau_passive (inverse dynamics at qdd = 0)."""
        b = _Batch("bias_forces")
        s = self._strides
        pq, s.q, _ = b.add("q", q, (self.nq,))
        pu, s.u, _ = b.add("u", u, (self.nv,))
        pf = _NULL
        if f_ext is not None:
            pf, s.f, _ = b.add("f_ext", f_ext, self._fshape)
        c = np.empty(b.shape(self.nv))
        st = lib.sdpy_inverse_dynamics(self._m, self._d, b.rows(), s, pq, pu, _NULL, pf,
                                       _from_buffer("double[]", c), self._row)
        if st:
            self._fail(st, b.n)
        return c

    def passive_forces(self, q, u):
        """tau_passive = -damping u - stiffness (q - spring_ref) (soadyn/dynamics.h, joint-level dynamics)."""
        b = _Batch("passive_forces")
        s = self._strides
        pq, s.q, _ = b.add("q", q, (self.nq,))
        pu, s.u, _ = b.add("u", u, (self.nv,))
        out = np.empty(b.shape(self.nv))
        st = lib.sdpy_passive_forces(self._m, self._d, b.rows(), s, pq, pu, _from_buffer("double[]", out), self._row)
        if st:
            self._fail(st, b.n)
        return out

    def _matrix(self, fn, q, which, rows):
        b, pq, sq = self._state_q(fn, q)
        out = np.empty(b.shape(rows, self.nv))
        st = lib.sdpy_matrix(self._m, self._d, b.rows(), sq, pq, which, _from_buffer("double[]", out), self._row)
        if st:
            self._fail(st, b.n)
        return out

    def mass_matrix(self, q):
        """M(q), nv x nv, by composite body inertias (004 Alg 4.2), diag(armature) added."""
        return self._matrix("mass_matrix", q, 0, self.nv)

    def mass_matrix_inverse(self, q):
        """The dense M^-1(q) in O(N^2) from the articulated-body recursion (004 Eq 51)."""
        return self._matrix("mass_matrix_inverse", q, 1, self.nv)

    def mass_matrix_solve(self, q, x):
        """M^-1(q) x in O(N) without forming M (004 Eq 51)."""
        return self._factor("mass_matrix_solve", q, x, -1)

    def innovations_apply(self, q, op, x):
        """One innovations factor of M(q) applied to x (004 Lemma 11), op: "ne" [I + H phi K],
        "ne_transpose" [I + H phi K]*, "inv" [I - H psi K], "inv_transpose" [I - H psi K]*."""
        if op not in _FACTOR_OPS:
            raise ArgumentError(f"innovations_apply: op {op!r}, expected one of {', '.join(_FACTOR_OPS)}")
        return self._factor("innovations_apply", q, x, _FACTOR_OPS[op])

    def _factor(self, fn, q, x, op):
        b = _Batch(fn)
        pq, sq, _ = b.add("q", q, (self.nq,))
        px, sx, _ = b.add("x", x, (self.nv,))
        y = np.empty(b.shape(self.nv))
        st = lib.sdpy_factor_apply(self._m, self._d, b.rows(), sq, pq, sx, px, op, _from_buffer("double[]", y),
                                   self._row)
        if st:
            self._fail(st, b.n)
        return y

    def log_det_mass_matrix(self, q):
        """log det M(q) = sum log det D(k) (004 Cor 6.1, Eq 53); never overflows."""
        b, pq, sq = self._state_q("log_det_mass_matrix", q)
        out = np.empty(b.shape())
        st = lib.sdpy_determinant(self._m, self._d, b.rows(), sq, pq, _NULL, _from_buffer("double[]", out),
                                  self._row)
        if st:
            self._fail(st, b.n)
        return float(out) if b.n < 0 else out

    def det_mass_matrix(self, q):
        """det M(q) (004 Eq 53); NotFiniteError when it overflows (large trees: use the log)."""
        b, pq, sq = self._state_q("det_mass_matrix", q)
        det = np.empty(b.shape())
        logdet = np.empty(b.shape())
        st = lib.sdpy_determinant(self._m, self._d, b.rows(), sq, pq, _from_buffer("double[]", det),
                                  _from_buffer("double[]", logdet), self._row)
        if st:
            self._fail(st, b.n)
        return float(det) if b.n < 0 else det

    def _forces_out(self, b, forces):
        nb = self.nbodies
        if not forces:
            return _NULL, _NULL, _NULL, None
        F = np.empty(b.shape(nb, 6))
        fr = np.empty(b.shape(nb, 6))
        co = np.empty(b.shape(nb, 6))
        return (_from_buffer("double[]", F), _from_buffer("double[]", fr), _from_buffer("double[]", co),
                (F, fr, co))

    def forward_dynamics_ex(self, q, u, tau, f_ext=None, qdd=None, prescribed=None, forces=True, frame="body"):
        """Forward dynamics with options (000 Sec 3, 000 Eq 17/41): `prescribed` (per body a flag, or a
        list of body names/indices) marks hinges whose acceleration is given in `qdd` (mixed dynamics:
        their hinge force comes out in tau); forces: also every inter-body force f(k) from the
        recursion's by-products, in `frame` ("body", "world", "joint").

        Returns dict(qdd, tau, forces (nbodies x 6 [moment; force]), free (H f, the first hinge_nv[k]
        entries of row k), constrained (the 6 - hinge_nv[k] reactions along the complement of H, 003
        Prop 5), zero-padded to 6)."""
        b = _Batch("forward_dynamics_ex")
        s = self._strides
        pq, s.q, _ = b.add("q", q, (self.nq,))
        pu, s.u, _ = b.add("u", u, (self.nv,))
        tau_a = _as_f64("tau", tau)
        pf = _NULL
        if f_ext is not None:
            pf, s.f, _ = b.add("f_ext", f_ext, self._fshape)
        b.add("tau", tau_a, (self.nv,))
        if qdd is not None:
            b.add("qdd", qdd, (self.nv,))
        tau_io = np.array(np.broadcast_to(tau_a, b.shape(self.nv)))
        qdd_io = np.zeros(b.shape(self.nv)) if qdd is None else np.array(np.broadcast_to(_as_f64("qdd", qdd),
                                                                                        b.shape(self.nv)))
        pp, _keep = _flags("prescribed", prescribed, self.nbodies, "body", self.body_names)
        if frame not in _FORCE_FRAMES:
            raise ArgumentError(f"forward_dynamics_ex: frame {frame!r}, expected body, world or joint")
        pF, pfr, pco, arrays = self._forces_out(b, forces)
        st = lib.sdpy_forward_dynamics_ex(self._m, self._d, b.rows(), s, pq, pu, _from_buffer("double[]", tau_io),
                                          pf, _from_buffer("double[]", qdd_io), pp, _FORCE_FRAMES[frame], pF, pfr,
                                          pco, self._row)
        if st:
            self._fail(st, b.n)
        res = {"qdd": qdd_io, "tau": tau_io}
        if arrays:
            res.update(forces=arrays[0], free=arrays[1], constrained=arrays[2])
        return res

    def mixed_dynamics(self, q, u, tau, qdd, prescribed, f_ext=None):
        """Prescribed hinges (000 Sec 3): returns (qdd, tau) with qdd given on the prescribed bodies'
        speeds and computed elsewhere, tau the other way round."""
        r = self.forward_dynamics_ex(q, u, tau, f_ext=f_ext, qdd=qdd, prescribed=prescribed, forces=False)
        return r["qdd"], r["tau"]

    def interbody_forces(self, q, u, tau, f_ext=None, frame="body"):
        """The spatial force [moment; force] each parent exerts on its child through the hinge, from
        the articulated-body by-products (000 Eq 17: f = P+ alpha+ + z+). Returns dict as
        forward_dynamics_ex (qdd, tau, forces, free, constrained)."""
        return self.forward_dynamics_ex(q, u, tau, f_ext=f_ext, forces=True, frame=frame)

    def inverse_dynamics_forces(self, q, u, qdd, f_ext=None, frame="body"):
        """Inverse dynamics (004 Alg 3.1) with every inter-body force it computes: dict(tau, forces,
        free, constrained) as forward_dynamics_ex."""
        b = _Batch("inverse_dynamics_forces")
        s = self._strides
        pq, s.q, _ = b.add("q", q, (self.nq,))
        pu, s.u, _ = b.add("u", u, (self.nv,))
        pa, s.x, _ = b.add("qdd", qdd, (self.nv,))
        pf = _NULL
        if f_ext is not None:
            pf, s.f, _ = b.add("f_ext", f_ext, self._fshape)
        if frame not in _FORCE_FRAMES:
            raise ArgumentError(f"inverse_dynamics_forces: frame {frame!r}, expected body, world or joint")
        tau = np.empty(b.shape(self.nv))
        pF, pfr, pco, arrays = self._forces_out(b, True)
        st = lib.sdpy_inverse_dynamics_forces(self._m, self._d, b.rows(), s, pq, pu, pa, pf,
                                              _from_buffer("double[]", tau), _FORCE_FRAMES[frame], pF, pfr, pco,
                                              self._row)
        if st:
            self._fail(st, b.n)
        return {"tau": tau, "forces": arrays[0], "free": arrays[1], "constrained": arrays[2]}

    # ------------------------------------------------------------ kinematics, Jacobians, energies

    def body_placements(self, q):
        """World placements of every body at q: (R, p), R (nbodies, 3, 3) with the body axes as
        columns, p (nbodies, 3) the body origins."""
        return self.body_states(q)[:2]

    def body_states(self, q, u=None, qdd=None):
        """Kinematics at (q, u, qdd): (R, p, V, A) per body, V and A the spatial velocity and
        acceleration (gravity excluded) [omega; v] in the body frame at its origin (None when u /
        qdd is not given)."""
        b = _Batch("body_states")
        s = self._strides
        pq, s.q, _ = b.add("q", q, (self.nq,))
        pu = pa = _NULL
        if u is not None:
            pu, s.u, _ = b.add("u", u, (self.nv,))
        if qdd is not None:
            pa, s.x, _ = b.add("qdd", qdd, (self.nv,))
        nb = self.nbodies
        R = np.empty(b.shape(nb, 3, 3))
        p = np.empty(b.shape(nb, 3))
        V = np.empty(b.shape(nb, 6)) if u is not None else None
        A = np.empty(b.shape(nb, 6)) if qdd is not None else None
        st = lib.sdpy_body_states(self._m, self._d, b.rows(), s, pq, pu, pa, _from_buffer("double[]", R),
                                  _from_buffer("double[]", p), _from_buffer("double[]", V) if V is not None else _NULL,
                                  _from_buffer("double[]", A) if A is not None else _NULL, self._row)
        if st:
            self._fail(st, b.n)
        return R, p, V, A

    def frame_placements(self, q):
        """World placements (R (nframes, 3, 3), p (nframes, 3)) of the model's frames (frame_names)."""
        b, pq, sq = self._state_q("frame_placements", q)
        nf = len(self.frame_names)
        R = np.empty(b.shape(nf, 3, 3))
        p = np.empty(b.shape(nf, 3))
        if nf:
            st = lib.sdpy_frame_placements(self._m, self._d, b.rows(), sq, pq, _from_buffer("double[]", R),
                                           _from_buffer("double[]", p), self._row)
            if st:
                self._fail(st, b.n)
        return R, p

    def jacobian(self, q, body, point=(0.0, 0.0, 0.0)):
        """The 6 x nv Jacobian mapping u to [omega; v] of the point `point` (body coordinates) fixed on
        `body`, both in world axes (sd_jacobian_world)."""
        k = self.body_index(body)
        b, pq, sq = self._state_q("jacobian", q)
        pt = _as_f64("point", point)
        if pt.shape != (3,):
            raise ArgumentError(f"jacobian: point has shape {pt.shape}, expected (3,)")
        if not np.all(np.isfinite(pt)):  # else reported as the Jacobian overflowing
            raise ArgumentError(f"jacobian: point {pt.tolist()} has an entry that is not finite")
        J = np.empty(b.shape(6, self.nv))
        st = lib.sdpy_jacobian(self._m, self._d, b.rows(), sq, pq, k, _from_buffer("double[]", pt),
                               _from_buffer("double[]", J), self._row)
        if st:
            self._fail(st, b.n)
        return J

    def _energy(self, fn, q, u, e, com, h):
        b = _Batch(fn)
        s = self._strides
        pq, s.q, _ = b.add("q", q, (self.nq,))
        pu = _NULL
        if u is not None:
            pu, s.u, _ = b.add("u", u, (self.nv,))
        E = np.empty(b.shape(4)) if e else None
        C = np.empty(b.shape(3)) if com else None
        H = np.empty(b.shape(6)) if h else None
        st = lib.sdpy_energy(self._m, self._d, b.rows(), s, pq, pu,
                             _from_buffer("double[]", E) if e else _NULL,
                             _from_buffer("double[]", C) if com else _NULL,
                             _from_buffer("double[]", H) if h else _NULL, self._row)
        if st:
            self._fail(st, b.n)
        return E, C, H

    def energies(self, q, u):
        """dict(kinetic (1/2 u^T M u, armature included), gravity (-sum m g.c), spring (joint springs),
        strain (1/2 eta^T K_m eta, 001 Eq 40), potential (their sum), total) at (q, u): floats, or
        arrays over a batch."""
        E = self._energy("energies", q, u, True, False, False)[0]
        k, g, sp, sn = E[..., 0], E[..., 1], E[..., 2], E[..., 3]
        pot = g + sp + sn
        if E.ndim == 1:
            k, g, sp, sn, pot = float(k), float(g), float(sp), float(sn), float(pot)
        return {"kinetic": k, "gravity": g, "spring": sp, "strain": sn, "potential": pot, "total": k + pot}

    def center_of_mass(self, q):
        """The system's centre of mass in world coordinates."""
        return self._energy("center_of_mass", q, None, False, True, False)[1]

    def momentum(self, q, u):
        """Total spatial momentum [angular about the world origin; linear], world axes."""
        return self._energy("momentum", q, u, False, False, True)[2]

    def external_force_at_point(self, q, body, point, force, f_ext=None):
        """f_ext (nbodies x 6, a new one or `f_ext` added to in place) with a force (world axes) applied
        at a point (body coordinates) of `body`, at configuration q (003's Y^T F-bar for one point)."""
        k = self.body_index(body)
        q = _as_f64("q", q)
        self._check1("external_force_at_point", q=q)
        if f_ext is None:
            f_ext = np.zeros(self._fshape)
        else:
            f_ext = _output(f_ext, self._fshape, "f_ext")
        pt = _as_f64("point", point)
        fo = _as_f64("force", force)
        if pt.shape != (3,) or fo.shape != (3,):
            raise ArgumentError("external_force_at_point: point and force need 3 entries each")
        st = lib.sd_kinematics(self._m, self._d, _from_buffer("double[]", q), _NULL, _NULL)
        if st == lib.SD_OK:
            st = lib.sd_external_force_at_point(self._m, self._d, k, _from_buffer("double[]", pt),
                                                _from_buffer("double[]", fo), _from_buffer("double[]", f_ext))
        if st:
            self._fail(st, -1)
        return f_ext

    # ------------------------------------------------------------ operational space

    def _task_frames(self, frames):
        bodies = np.empty(len(frames), dtype=np.intc)
        pl = np.zeros((len(frames), 12))
        for i, f in enumerate(frames):
            R, p = np.eye(3), np.zeros(3)
            if isinstance(f, (tuple, list)):
                body = f[0]
                if len(f) == 2:
                    p = f[1]
                elif len(f) == 3:
                    R, p = f[1], f[2]
                else:
                    raise ArgumentError(f"task frame {i}: (body,), (body, p) or (body, R, p)")
            else:
                body = f
            bodies[i] = self.body_index(body)
            pl[i, :9] = np.asarray(R, dtype=float).reshape(9)
            pl[i, 9:] = np.asarray(p, dtype=float).reshape(3)
        return bodies, pl

    def _opspace(self, fn, q, frames, inverse):
        if not frames:
            raise ArgumentError(f"{fn}: no task frames")
        bodies, pl = self._task_frames(list(frames))
        b, pq, sq = self._state_q(fn, q)
        n6 = 6 * len(bodies)
        out = np.empty(b.shape(n6, n6))
        scratch = ffi.new("sd_task_frame[]", len(bodies))
        st = lib.sdpy_operational_space(self._m, self._d, b.rows(), sq, pq, len(bodies),
                                        ffi.from_buffer("int[]", bodies), _from_buffer("double[]", pl), inverse,
                                        scratch, _from_buffer("double[]", out), self._row)
        if st:
            self._fail(st, b.n)
        return out

    def operational_space_compliance(self, q, frames):
        """J M^-1 J* = B* Omega B (004 Eq 59-60) of task frames, 6 nframes square, each frame's
        velocity [omega; v] in its own axes at its origin, by the backward-Lyapunov recursion (004
        Lemma 5 / Alg 4.3). A frame is a body (name or index), (body, p) or (body, R, p) in body
        coordinates."""
        return self._opspace("operational_space_compliance", q, frames, 0)

    def operational_space_inertia(self, q, frames):
        """Lambda = (J M^-1 J*)^-1 of the same frames; SingularError for dependent frames."""
        return self._opspace("operational_space_inertia", q, frames, 1)

    # ------------------------------------------------------------ closed loops (loops.h)

    def closed_loop_forward_dynamics(self, q, u, tau, f_ext=None, forces=False, frame="body",
                                     constraint_frame="local"):
        """qdd of the closed system (000 Eq 45-46) and the multipliers lambda (minimum-norm with
        redundant rows), the cut-joint force [moment; force] of every constraint (nconstraints x 6,
        in F_A's axes about F_B's origin, or "world" axes), the rank of G M^-1 G*, and with forces the
        inter-body forces of the tree hinges. Returns a dict."""
        b = _Batch("closed_loop_forward_dynamics")
        s = self._strides
        pq, s.q, _ = b.add("q", q, (self.nq,))
        pu, s.u, _ = b.add("u", u, (self.nv,))
        pt, s.x, _ = b.add("tau", tau, (self.nv,))
        pf = _NULL
        if f_ext is not None:
            pf, s.f, _ = b.add("f_ext", f_ext, self._fshape)
        if frame not in _FORCE_FRAMES or constraint_frame not in _CONSTRAINT_FRAMES:
            raise ArgumentError("closed_loop_forward_dynamics: frame body/world/joint, constraint_frame local/world")
        qdd = np.empty(b.shape(self.nv))
        lam = np.empty(b.shape(self.nconstraint_rows))
        cut = np.empty(b.shape(self.nconstraints, 6))
        rank = np.empty(b.shape(), dtype=np.intc)
        pF, pfr, pco, arrays = self._forces_out(b, forces)
        st = lib.sdpy_closed_loop_fd(self._m, self._d, b.rows(), s, pq, pu, pt, pf, _from_buffer("double[]", qdd),
                                     _from_buffer("double[]", lam), _CONSTRAINT_FRAMES[constraint_frame],
                                     _from_buffer("double[]", cut) if self.nconstraints else _NULL,
                                     _FORCE_FRAMES[frame], pF, pfr, pco, ffi.from_buffer("int[]", rank), self._row)
        if st:
            self._fail(st, b.n)
        res = {"qdd": qdd, "lambda": lam, "constraint_forces": cut, "rank": int(rank) if b.n < 0 else rank}
        if arrays:
            res.update(forces=arrays[0], free=arrays[1], constrained=arrays[2])
        return res

    def constrained_inverse_dynamics(self, q, u, qdd, actuated, f_ext=None):
        """The forces of the `actuated` speeds (flags per speed, or speed labels / indices) producing
        qdd on the closed system, and the multipliers (minimum norm): (tau, lambda)."""
        b = _Batch("constrained_inverse_dynamics")
        s = self._strides
        pq, s.q, _ = b.add("q", q, (self.nq,))
        pu, s.u, _ = b.add("u", u, (self.nv,))
        pa, s.x, _ = b.add("qdd", qdd, (self.nv,))
        pf = _NULL
        if f_ext is not None:
            pf, s.f, _ = b.add("f_ext", f_ext, self._fshape)
        pact, _keep = _flags("actuated", actuated, self.nv, "speed", self.speed_labels)
        tau = np.empty(b.shape(self.nv))
        lam = np.empty(b.shape(self.nconstraint_rows))
        st = lib.sdpy_constrained_id(self._m, self._d, b.rows(), s, pq, pu, pa, pf, pact,
                                     _from_buffer("double[]", tau), _from_buffer("double[]", lam), self._row)
        if st:
            self._fail(st, b.n)
        return tau, lam

    def constraint_residuals(self, q, u=None):
        """Position residuals (n_c) and, when u is given, velocity residuals G u: (pos, vel or None)."""
        b = _Batch("constraint_residuals")
        s = self._strides
        pq, s.q, _ = b.add("q", q, (self.nq,))
        pu = _NULL
        if u is not None:
            pu, s.u, _ = b.add("u", u, (self.nv,))
        pos = np.empty(b.shape(self.nconstraint_rows))
        vel = np.empty(b.shape(self.nconstraint_rows)) if u is not None else None
        st = lib.sdpy_residuals(self._m, self._d, b.rows(), s, pq, pu, _from_buffer("double[]", pos),
                                _from_buffer("double[]", vel) if vel is not None else _NULL, self._row)
        if st:
            self._fail(st, b.n)
        return pos, vel

    def constraint_jacobian(self, q):
        """G(q), n_c x nv."""
        return self._matrix("constraint_jacobian", q, 2, self.nconstraint_rows)

    def constraint_rank(self, q):
        """(rank of G(q), mobility nv - rank)."""
        q = _as_f64("q", q)
        self._check1("constraint_rank", q=q)
        r = ffi.new("int[2]")
        st = lib.sd_constraint_rank(self._m, self._d, _from_buffer("double[]", q), r, r + 1)
        if st:
            self._fail(st, -1)
        return r[0], r[1]

    def assemble(self, q_guess, locked=None, tol=1e-12, max_iter=50):
        """A configuration closing the loops near q_guess (Gauss-Newton, minimum-norm steps over the
        speeds not `locked`): (q, largest residual left); SingularError naming the open constraints."""
        q = np.array(_as_f64("q_guess", q_guess))
        if q.shape != (self.nq,):
            raise ArgumentError(f"assemble: q_guess has shape {q.shape}, expected ({self.nq},)")
        pl, _keep = _flags("locked", locked, self.nv, "speed", self.speed_labels)
        res = ffi.new("double *")
        pq = _from_buffer("double[]", q)
        st = lib.sd_assemble_configuration(self._m, self._d, pq, pl, float(tol), int(max_iter), pq, res)
        if st:
            self._fail(st, -1)
        return q, res[0]

    def project_velocities(self, q, u):
        """The speeds nearest to u in the kinetic-energy metric with G u = 0."""
        b = _Batch("project_velocities")
        s = self._strides
        pq, s.q, _ = b.add("q", q, (self.nq,))
        pu, s.u, _ = b.add("u", u, (self.nv,))
        out = np.empty(b.shape(self.nv))
        st = lib.sdpy_project_velocities(self._m, self._d, b.rows(), s, pq, pu, _from_buffer("double[]", out),
                                         self._row)
        if st:
            self._fail(st, b.n)
        return out

    # ------------------------------------------------------------ flexible bodies (flex.h)

    def flex_frequencies(self, body):
        """A flexible body's modal natural frequencies (rad/s, ascending), its hinge and the others held."""
        k = self.body_index(body)
        n = self.body_nmodes[k]
        out = np.empty(max(n, 1))
        err = ffi.new("sd_error *")
        st = lib.sd_model_flex_frequencies(self._m, k, _from_buffer("double[]", out), err)
        if st:
            _raise(st, _str(err.message))
        return out[:n]

    def node_deflection(self, q, body, node):
        """Pi^node eta (001 Eq 3): node's small rotation (3) then translation (3) from its undeformed
        place, body axes."""
        k = self.body_index(body)
        q = _as_f64("q", q)
        self._check1("node_deflection", q=q)
        out = np.empty(6)
        err = ffi.new("sd_error *")
        st = lib.sd_model_node_deflection(self._m, k, int(node), _from_buffer("double[]", q),
                                          _from_buffer("double[]", out), err)
        if st:
            _raise(st, _str(err.message))
        return out

    def strain_energy(self, q):
        """1/2 sum eta^T K_m eta over the flexible bodies (001 Eq 40)."""
        E = self._energy("strain_energy", q, None, True, False, False)[0]
        return float(E[3]) if E.ndim == 1 else E[:, 3]

    # ------------------------------------------------------------ simulation (sim.h)

    def simulate(self, q0=None, u0=None, duration=1.0, dt=1e-3, integrator="rk4", tau=None, control=None,
                 every=1, t0=0.0, rtol=1e-8, atol=1e-10, max_step=0.0, max_internal_steps=100000,
                 project_constraints=True):
        """Integrate from (q0, u0) (default neutral, zero) with sd_simulate: RK4 on a chart of the
        manifold, or CVODE "cvode-bdf" / "cvode-adams" (dt then the output interval). tau: constant
        joint forces (nv). control(t, q, u) -> joint forces (nv) added to tau at every right-hand
        side evaluation (q, u are read-only views valid during the call). Loops are projected after
        every step unless project_constraints is False.

        Returns SimResult (t, q, u): unpacks as `t, q, u = model.simulate(...)`; also .kinetic,
        .potential (J) per sample and .stats (steps, rhs_evals, t_end, energies, residuals). An
        exception raised by control stops the run and is re-raised here."""
        q = self.neutral() if q0 is None else np.array(_as_f64("q0", q0))
        u = np.zeros(self.nv) if u0 is None else np.array(_as_f64("u0", u0))
        if q.shape != (self.nq,) or u.shape != (self.nv,):
            raise ArgumentError(f"simulate: q0 {q.shape} and u0 {u.shape}, expected ({self.nq},) and ({self.nv},)")
        o = ffi.new("sd_sim_options *")
        lib.sd_sim_options_init(o)
        integ = ffi.new("sd_integrator *")
        if lib.sd_integrator_from_name(str(integrator).encode(), integ):
            raise ArgumentError(f"simulate: no integrator {integrator!r} (rk4, cvode-bdf, cvode-adams)")
        o.integrator = integ[0]
        o.t0, o.duration, o.dt, o.every = float(t0), float(duration), float(dt), int(every)
        o.rtol, o.atol, o.max_step, o.max_internal_steps = float(rtol), float(atol), float(max_step), int(max_internal_steps)
        o.project_constraints = 1 if project_constraints else 0
        tau_keep = None
        if tau is not None:
            tau_keep = _as_f64("tau", tau)
            if tau_keep.shape != (self.nv,):
                raise ArgumentError(f"simulate: tau has shape {tau_keep.shape}, expected ({self.nv},)")
            o.tau = _from_buffer("double[]", tau_keep)
        # every sample the run can write: the start, one per `every` intervals, the end
        if not (math.isfinite(o.duration) and math.isfinite(o.dt) and o.dt > 0 and o.duration > 0 and o.every >= 1):
            cap = 2  # sd_simulate refuses these options with its own message
        else:
            cap = int(math.ceil(o.duration / o.dt * (1 + 1e-12))) // o.every + 3
        t = np.empty(cap)
        qs = np.empty((cap, self.nq))
        us = np.empty((cap, self.nv))
        ke = np.empty(cap)
        pe = np.empty(cap)
        rec = ffi.new("sdpy_recorder *")
        rec.capacity, rec.count, rec.nq, rec.nv = cap, 0, self.nq, self.nv
        rec.t, rec.q, rec.u = _from_buffer("double[]", t), _from_buffer("double[]", qs), _from_buffer("double[]", us)
        rec.kinetic, rec.potential = _from_buffer("double[]", ke), _from_buffer("double[]", pe)
        stats = ffi.new("sd_sim_stats *")
        err = ffi.new("sd_error *")
        ctl = _Control(control, self.nq, self.nv) if control is not None else None
        handle = ffi.new_handle(ctl) if ctl is not None else _NULL
        st = lib.sdpy_simulate(self._m, o, lib.sdpy_control_callback if ctl is not None else _NULL, handle,
                               _from_buffer("double[]", q), _from_buffer("double[]", u), rec, stats, err)
        if ctl is not None and ctl.exc is not None:
            raise ctl.exc
        if st:
            _raise(st, _str(err.message))
        n = rec.count
        s = stats
        info = {"steps": s.steps, "rhs_evals": s.rhs_evals, "rebases": s.rebases, "t_end": s.t_end,
                "stopped": s.stop_reason != lib.SD_STOP_NONE, "energy_start": s.energy_start,
                "energy_end": s.energy_end, "max_quat_norm_error": s.max_quat_norm_error,
                "max_position_residual": s.max_position_residual,
                "max_velocity_residual": s.max_velocity_residual, "projections": s.projections}
        return SimResult(t[:n], qs[:n], us[:n], ke[:n], pe[:n], info)


class _Control:
    """The state of one Python control callback during a run."""

    __slots__ = ("fn", "nq", "nv", "exc")

    def __init__(self, fn, nq, nv):
        self.fn, self.nq, self.nv, self.exc = fn, nq, nv, None


@ffi.def_extern()
def sdpy_control_callback(user, t, q, u, tau):
    ctl = ffi.from_handle(user)
    if ctl.exc is not None:  # a failed control: keep the run failing until sd_simulate returns
        tau[0] = math.nan
        return
    try:
        qa = np.frombuffer(ffi.buffer(q, 8 * ctl.nq), dtype=_F64)
        ua = np.frombuffer(ffi.buffer(u, 8 * ctl.nv), dtype=_F64)
        qa.flags.writeable = False
        ua.flags.writeable = False
        add = ctl.fn(t, qa, ua)
        if add is not None:
            add = np.asarray(add, dtype=_F64)
            if add.shape != (ctl.nv,):
                raise ArgumentError(f"simulate: control returned shape {add.shape}, expected ({ctl.nv},)")
            ta = np.frombuffer(ffi.buffer(tau, 8 * ctl.nv), dtype=_F64)
            ta += add
    except BaseException as exc:  # re-raised by simulate(); NaN makes the C run stop with an error
        ctl.exc = exc
        tau[0] = math.nan


class SimResult(tuple):
    """(t, q, u) of a run, with .kinetic, .potential (per sample) and .stats (dict)."""

    def __new__(cls, t, q, u, kinetic, potential, stats):
        self = super().__new__(cls, (t, q, u))
        self.kinetic, self.potential, self.stats = kinetic, potential, stats
        return self

    t = property(lambda self: self[0])
    q = property(lambda self: self[1])
    u = property(lambda self: self[2])


# ---------------------------------------------------------------- viewer (view.h)


def has_viewer():
    """True when libsoadyn was built with the HTML viewer (SOADYN_WITH_VIEWER)."""
    return bool(lib.sdpy_has_viewer())


def write_view(model, t, q, path, u=None, kinetic=None, potential=None, model_path=None, title=None,
               show_frames=False, show_forces=False):
    """Write the self-contained HTML page of soadyn/view.h playing the motion (t (n), q (n, nq), u
    (n, nv) optional, energies optional) of `model`; model_path (default: the file it was loaded
    from) is re-read for the visual geometry. NotSupportedError when the viewer is not built.
    t and q may be empty: the page then shows the model at its neutral configuration."""
    t = _as_f64("t", t)
    q = _as_f64("q", q)
    n = t.shape[0] if t.ndim == 1 else -1
    if n < 0 or q.shape != (n, model.nq):
        raise ArgumentError(f"write_view: t ({t.shape}) and q ({q.shape}) must be (n,) and (n, {model.nq})")
    extra = {}
    for name, a, w in (("u", u, model.nv), ("kinetic", kinetic, 0), ("potential", potential, 0)):
        if a is None:
            extra[name] = _NULL
            continue
        a = _as_f64(name, a)
        if a.shape != ((n, w) if w else (n,)):
            raise ArgumentError(f"write_view: {name} has shape {a.shape}")
        extra[name] = (_from_buffer("double[]", a), a)
    mp = model_path if model_path is not None else model.path
    err = ffi.new("sd_error *")
    keep = [ffi.new("char[]", os.fsencode(mp)) if mp else _NULL,
            ffi.new("char[]", title.encode()) if title else _NULL]
    pu, pk, pp = (_NULL if extra[k] is _NULL else extra[k][0] for k in ("u", "kinetic", "potential"))
    st = lib.sdpy_write_view(model._m, n, _from_buffer("double[]", t) if n else _NULL,
                             _from_buffer("double[]", q) if n else _NULL, pu, pk, pp, keep[0], keep[1],
                             1 if show_frames else 0, 1 if show_forces else 0, os.fsencode(path), err)
    if st:
        _raise(st, _str(err.message))
    return os.fspath(path)


# Every algorithm also as a module function taking the model first: soadyn.mass_matrix(model, q).
for _name in ("neutral", "reference", "random_configuration", "integrate", "difference", "normalize", "forward_dynamics",
              "forward_dynamics_cholesky", "inverse_dynamics", "bias_forces", "passive_forces", "mass_matrix",
              "mass_matrix_inverse", "mass_matrix_solve", "innovations_apply", "log_det_mass_matrix",
              "det_mass_matrix", "forward_dynamics_ex", "mixed_dynamics", "interbody_forces",
              "inverse_dynamics_forces", "body_placements", "body_states", "frame_placements", "jacobian",
              "energies", "center_of_mass", "momentum", "external_force_at_point", "operational_space_compliance",
              "operational_space_inertia", "closed_loop_forward_dynamics", "constrained_inverse_dynamics",
              "constraint_residuals", "constraint_jacobian", "constraint_rank", "assemble", "project_velocities",
              "flex_frequencies", "node_deflection", "strain_energy", "simulate"):
    globals()[_name] = getattr(Model, _name)
    __all__.append(_name)
del _name
