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
- No silent wrong answer:
  - Loops: a function whose answer is the open tree's (forward_dynamics, inverse_dynamics and
    their variants) raises ClosedLoopError on a model with closure constraints, naming the call
    that solves the closed system (closed_loop_forward_dynamics, constrained_inverse_dynamics);
    the tree's answer is asked for by name, tree=True. Quantities that are the tree's by
    definition (M, C, Jacobians, kinematics) answer as they are.
  - Quaternions: every configuration given is checked: a quaternion whose norm is off 1 by more
    than QUATERNION_TOLERANCE (1e-9) is refused (ArgumentError naming the joint and the state),
    since soadyn uses it as given; normalize(q) is the one call that takes any.
  - What describes the model is immutable: tuples, and read-only arrays (gravity, armature,
    damping, stiffness, spring_ref, body_masses); the parameters change through set_gravity,
    set_armature, set_damping, set_stiffness, set_spring_ref, set_body_inertia (soadyn/params.h),
    after which every call sees the change.
- Arrays: numpy float64. An input that is a C-contiguous float64 ndarray is passed to C as it is (no
  copy); another ndarray of float64 (a strided view) is copied once; lists and tuples are converted.
  An ndarray of another dtype is refused (ArgumentTypeError, a TypeError): no silent conversion of
  integers or float32. Outputs are new arrays, allocated once per call (or written into `out=` when
  given, which must then be C-contiguous float64 of the output's shape).
- Batches: every state argument may carry a leading axis of n states (q of shape (n, nq), f_ext
  (n, nbodies, 6), ...); the outputs then have that leading axis too. Arguments without it are used
  for every state (broadcast). The loop over states runs in C, one crossing per call, never a
  Python loop over states or bodies. Forward and inverse dynamics, M and M^-1 of a batch run through
  soadyn/batch.h on `threads` threads (default 1); forward and inverse dynamics there take the SIMD
  kernel (4 or 8 states per step) unless simd=False. A batched call equals the single calls state
  by state bit for bit, except the SIMD kernel's results, which round differently: they are the
  same bits whatever the threads and the batch's size, and the single call's up to round-off
  (soadyn/batch.h gives the bound); simd=False gives the single calls' bits. The other batched
  calls loop the single-state C call (python/soadyn/_helpers.c).
- Speed: one state's forward or inverse dynamics given as float64 ndarrays goes through
  soadyn._fast (python/soadyn/_fast.c, CPython's and numpy's C API): the C work plus about 2.5k
  instructions. Everything else goes through cffi (soadyn._soadyn_cffi).
- Errors: a C status other than SD_OK raises the soadyn.Error subclass of that status
  (ArgumentError, ModelError, SingularError, OutOfMemoryError, FileError, ParseError,
  NotSupportedError, SolverError, NotFiniteError) carrying the C message (`.message`, `.status`;
  in a batch prefixed "state i: "). A NaN or inf input is refused by the C API itself
  (ArgumentError "...: q[3] is not finite"). Wrong lengths and dtypes are ArgumentError /
  ArgumentTypeError raised here, naming the argument and the size expected.
- f_ext: 6 numbers per body, the external spatial force [moment; force] on it in its body frame
  about its origin (`external_force_at_point` builds one from a force at a point).
- Spatial vectors are [angular; linear]; body velocities and accelerations in the body frame at its
  origin; Jacobians and momenta in world axes (soadyn/dynamics.h). A named frame (a link merged by a
  fixed joint, an MJCF site) goes wherever a body does in jacobian, frame_placement,
  frame_velocity and frame_acceleration (the frame's axes at its origin).
- Conventions of other tools: to_pinocchio / from_pinocchio and to_mujoco / from_mujoco convert
  (q, u, qdd, tau) (soadyn/conventions.py says how).

Building and installing (no network; Debian's python3-cffi, python3-numpy):
- `cmake --build BUILD` builds the extensions into BUILD/python (the tests run it from there) and
  `cmake --install BUILD` installs the package into PREFIX/lib/python3.X/dist-packages (CMake
  option SOADYN_WITH_PYTHON, on when /usr/bin/python3 with cffi and numpy is found; cache variable
  SOADYN_PYTHON_INSTALL_DIR overrides the folder).
- `/usr/bin/python3 -m pip install --no-build-isolation ./python` builds it against an installed
  soadyn found by pkg-config (module soadyn; set PKG_CONFIG_PATH=PREFIX/lib/pkgconfig), or against
  SOADYN_INCLUDE_DIRS + SOADYN_LIBRARY_DIR when both are set (python/soadyn/_build.py). The library's
  folder is written into the extension as its run-time path (SOADYN_RPATH overrides).
"""
import collections
import math
import os
import warnings

import numpy as np

from . import _fast
from ._soadyn_cffi import ffi, lib

__all__ = [
    "Model", "load", "Error", "ArgumentError", "ArgumentTypeError", "ModelError", "SingularError",
    "OutOfMemoryError", "FileError", "ParseError", "NotSupportedError", "SolverError", "NotFiniteError",
    "CompileWarning", "ClosedLoopError", "SimResult", "FDDerivatives", "IDDerivatives", "has_viewer", "write_view", "QUATERNION_TOLERANCE",
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


class ClosedLoopError(ArgumentError):
    """A tree-only algorithm called on a model with closure constraints without tree=True: its answer
    would ignore the loops. The message names the function that solves the closed system."""


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


class CompileWarning(UserWarning):
    """load(compile=True) could not compile the model (no C compiler, a model the generated code does
    not cover): the library's own code runs it."""


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
# The largest | |quat| - 1 | a configuration may carry (soadyn._fast applies the same figure).
QUATERNION_TOLERANCE = _fast.QUATERNION_TOLERANCE
_NULL = ffi.NULL
_from_buffer = ffi.from_buffer
_ndarray = np.ndarray
# the algorithms of Model._dynamics: articulated-body FD, Cholesky FD, Newton-Euler ID
_FD, _FD_CHOLESKY, _ID = 0, 1, 2
_DBL = ffi.typeof("double[]")
_fast_fd = _fast.forward_dynamics
_fast_id = _fast.inverse_dynamics


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
    and must agree among the inputs that have it (the others broadcast, stride 0). Configurations
    (inputs named q...) are checked for unit quaternions (Model._check_quaternions)."""

    __slots__ = ("fn", "n", "model")

    def __init__(self, fn, model):
        self.fn = fn
        self.n = -1  # -1: no input carries a leading axis (one state)
        self.model = model

    def add(self, name, a, shape):
        """(pointer, stride in doubles, the array) of input `a` of base shape `shape`."""
        a = _as_f64(name, a)
        if name[0] == "q" and name != "qdd":
            self.model._check_quaternions(self.fn, name, a)
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

    def stacked(self, a, stride):
        """An input as the batch API takes it: one block per state (a broadcast input copied)."""
        if a is None or stride:
            return a
        return np.ascontiguousarray(np.broadcast_to(a, (self.n,) + a.shape))

    def shape(self, *base):
        return base if self.n < 0 else (self.n,) + base


_SIZE_HINT = {"q": "nq", "u": "nv", "tau": "nv", "qdd": "nv", "x": "nv", "f_ext": "nbodies x 6"}


def _output(out, shape, name="out"):
    if out is None:
        return np.empty(shape)
    if type(out) is not _ndarray or out.dtype != _F64 or not out.flags.c_contiguous or out.shape != shape \
            or not out.flags.writeable:
        raise ArgumentError(f"{name}: must be a writeable C-contiguous float64 array of shape {shape}")
    return out


def _frozen(values):
    """A float64 array that refuses writes (ValueError: assignment destination is read-only)."""
    a = np.array(values, dtype=_F64)
    a.flags.writeable = False
    return a


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
_EYE3 = _frozen(np.eye(3))
_ZERO3 = _frozen(np.zeros(3))
_CONSTRAINT_FRAMES = {"local": 0, "world": 1}
_FACTOR_OPS = {"ne": 0, "ne_transpose": 1, "inv": 2, "inv_transpose": 3}


# ---------------------------------------------------------------- the model


def load(path, floating=False, keep_fixed=False, gravity=None, compile=False):
    """Load a URDF, MJCF or SDF file (the format chosen by its root element: sd_model_load_file).

    floating: a free hinge on the root link (URDF; SDF models without a joint to the world float
    anyway, MJCF files say it themselves). keep_fixed: fixed joints as 0-dof bodies instead of
    merged (URDF, SDF). gravity: the acceleration of free fall (3 numbers, m/s^2, world axes) in
    place of the file's (Model.set_gravity). compile: run the model's generated code
    (Model.compile(), soadyn/compile.h); when it cannot be compiled (no C compiler, a model the
    generator does not cover) a CompileWarning says why and the library's code runs. Raises
    FileError for a missing file, ParseError / ModelError with file:line."""
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
    model = Model(pm[0], spath, _str(lib.sd_model_format_name(fmt[0])))
    if gravity is not None:
        model.set_gravity(gravity)
    if compile:
        try:
            model.compile()
        except NotSupportedError as e:
            warnings.warn(f"load(compile=True): {e}; the library's code runs", CompileWarning, stacklevel=2)
    return model


class Model:
    """A loaded model and its workspace. Properties describe it; methods evaluate the dynamics."""

    def __init__(self, cmodel, path=None, format=None):
        d = lib.sd_data_new(cmodel)
        if d == ffi.NULL:
            lib.sd_model_free(cmodel)
            raise OutOfMemoryError("sd_data_new: out of memory")
        batches = {}  # threads -> sd_batch (soadyn/batch.h), made on the first batched call

        def free(m, d=d, batches=batches):
            for b in batches.values():  # before the model they point to
                lib.sd_batch_free(b)
            lib.sd_data_free(d)
            lib.sd_model_free(m)

        self._m = ffi.gc(cmodel, free)
        self._d = d
        self._batches = batches
        self._simd = {}  # threads -> the SIMD mode last set on that context
        # the addresses the hand-written extension soadyn._fast takes
        self._mp = int(ffi.cast("uintptr_t", cmodel))
        self._dp = int(ffi.cast("uintptr_t", d))
        self.path = path
        self.format = format
        m = self._m
        self.name = _str(lib.sd_model_name(m))
        self.nq = lib.sd_model_nq(m)
        self.nv = lib.sd_model_nv(m)
        self.nbodies = lib.sd_model_nbodies(m)
        nb = self.nbodies
        # What describes the model is immutable here: tuples, and numpy arrays that refuse writes
        # (an assignment that changed a copy and not the model would do nothing without a word);
        # the parameters change through the set_* methods, which rebuild what depends on them.
        self.body_names = tuple(_str(lib.sd_model_body_name(m, k)) for k in range(nb))
        self.joint_names = tuple(_str(lib.sd_model_joint_name(m, k)) for k in range(nb))
        self.parents = tuple(lib.sd_model_parent(m, k) for k in range(nb))
        self.hinge_types = tuple(_str(lib.sd_hinge_type_name(lib.sd_model_hinge(m, k))) for k in range(nb))
        self.q_index = tuple(lib.sd_model_q_index(m, k) for k in range(nb))
        self.v_index = tuple(lib.sd_model_v_index(m, k) for k in range(nb))
        self.hinge_nq = tuple(lib.sd_model_hinge_nq(m, k) for k in range(nb))
        self.hinge_nv = tuple(lib.sd_model_hinge_nv(m, k) for k in range(nb))
        buf = ffi.new("char[256]")
        labels = []
        for i in range(self.nq):
            lib.sd_coordinate_label(m, i, buf, 256)
            labels.append(_str(buf))
        self.coordinate_labels = tuple(labels)
        labels = []
        for i in range(self.nv):
            lib.sd_speed_label(m, i, buf, 256)
            labels.append(_str(buf))
        self.speed_labels = tuple(labels)
        self.frame_names = tuple(_str(lib.sd_model_frame_name(m, k)) for k in range(lib.sd_model_nframes(m)))
        self.frame_bodies = tuple(lib.sd_model_frame_body(m, k) for k in range(len(self.frame_names)))
        self.warnings = tuple(_str(lib.sd_model_warning(m, i)) for i in range(lib.sd_model_nwarnings(m)))
        self.nconstraints = lib.sd_model_nconstraints(m)
        self.nconstraint_rows = lib.sd_model_nconstraint_rows(m)
        self.constraint_names = tuple(_str(lib.sd_model_constraint_name(m, c)) for c in range(self.nconstraints))
        self.constraint_row_offsets = tuple(lib.sd_model_constraint_row_offset(m, c) for c in range(self.nconstraints))
        self.constraint_nrows = tuple(lib.sd_model_constraint_nrows(m, c) for c in range(self.nconstraints))
        self.nflexible = lib.sd_model_nflexible(m)
        self.body_nmodes = tuple(lib.sd_model_body_nmodes(m, k) for k in range(nb))
        self.body_nnodes = tuple(lib.sd_model_body_nnodes(m, k) for k in range(nb))
        self.mode_q_index = tuple(lib.sd_model_mode_q_index(m, k) for k in range(nb))
        self.mode_v_index = tuple(lib.sd_model_mode_v_index(m, k) for k in range(nb))
        # the quaternions of q (spherical and free hinges): their first coordinates and bodies
        quat = [(self.q_index[k] + (3 if self.hinge_types[k] == "free" else 0), k) for k in range(nb)
                if self.hinge_types[k] in ("spherical", "free")]
        self._quat_index = np.array([[i + j for j in range(4)] for i, _ in quat], dtype=np.intp) if quat else None
        self._quat_bodies = tuple(k for _, k in quat)
        self._read_parameters()
        self._fshape = (nb, 6)
        self._strides = ffi.new("sdpy_strides *")
        self._row = ffi.new("long *")

    def __repr__(self):
        return f"<soadyn.Model {self.name!r}: {self.nbodies} bodies, nq {self.nq}, nv {self.nv}>"

    def _read_parameters(self):
        """The parameters a setter may change, read back from the C model as read-only arrays."""
        m, nv = self._m, self.nv
        g = ffi.new("double[3]")
        lib.sd_model_gravity(m, g)
        self.gravity = _frozen(list(g))
        self.body_masses = _frozen([lib.sd_model_body_mass(m, k) for k in range(self.nbodies)])
        self.total_mass = lib.sd_model_total_mass(m)
        self.armature = _frozen([lib.sd_model_armature(m, v) for v in range(nv)])
        self.damping = _frozen([lib.sd_model_damping(m, v) for v in range(nv)])
        self.stiffness = _frozen([lib.sd_model_stiffness(m, v) for v in range(nv)])
        self.spring_ref = _frozen([lib.sd_model_spring_ref(m, v) for v in range(nv)])

    # ------------------------------------------------------------ parameters (soadyn/params.h)

    def _set(self, fn, call):
        """Run one C setter (call(err) -> status), raise with its message, read the parameters back."""
        err = ffi.new("sd_error *")
        st = call(err)
        self._read_parameters()
        if st:
            _raise(st, f"{fn}: {_str(err.message)}")

    def compile(self, compiler=None, flags=None, cache_dir=None):
        """Compile the model's generated code (sd_model_compile, soadyn/compile.h) so that forward and
        inverse dynamics, bias forces, M and M^-1 run it; cached by content in cache_dir (default
        $SOADYN_CACHE_DIR, $XDG_CACHE_HOME/soadyn, ~/.cache/soadyn). compiler: default $CC, else cc;
        flags: default "-O2 -std=c99". Returns compile_info. Raises NotSupportedError (no compiler,
        a failing compile, a model the generator does not cover: the library keeps running it). The
        batched calls (threads, simd) keep the batch API's own kernels. A set_* call switches the
        compiled code off (its values were folded in): compile again."""
        o = ffi.new("sd_compile_options *")
        keep = []  # the C strings live until the call returns
        for field, value in (("compiler", compiler), ("flags", flags), ("cache_dir", cache_dir)):
            if value is not None:
                keep.append(ffi.new("char[]", os.fsencode(value)))
                setattr(o, field, keep[-1])
        err = ffi.new("sd_error *")
        st = lib.sd_model_compile(self._m, o, err)
        if st:
            _raise(st, _str(err.message))
        return self.compile_info

    def uncompile(self):
        """Back to the library's code (sd_model_uncompile)."""
        lib.sd_model_uncompile(self._m)

    @property
    def compiled(self):
        """True when the model's compiled code runs (sd_model_compiled)."""
        return bool(lib.sd_model_compiled(self._m))

    @property
    def compile_info(self):
        """What the last compile did (sd_compile_info) as a dict, or None when never compiled."""
        i = ffi.new("sd_compile_info *")
        if lib.sd_model_compile_info(self._m, i):
            return None
        return {"compiled": bool(i.compiled), "cache_hit": bool(i.cache_hit), "key": _str(i.key),
                "path": _str(i.path), "compiler": _str(i.compiler), "generate_seconds": i.generate_seconds,
                "compile_seconds": i.compile_seconds, "check_seconds": i.check_seconds,
                "self_check_error": i.self_check_error}

    def set_gravity(self, gravity):
        """Gravity, the acceleration of free fall in world axes (m/s^2); every later call sees it."""
        g = _as_f64("gravity", gravity)
        if g.shape != (3,):
            raise ArgumentError(f"set_gravity: gravity has shape {g.shape}, expected (3,)")
        self._set("set_gravity", lambda err: lib.sd_model_set_gravity(self._m, _from_buffer(_DBL, g), err))

    def set_body_inertia(self, body, mass, com, inertia):
        """A body's mass (kg), centre of mass (body frame, m) and rotational inertia about it (3x3,
        body axes, kg m^2), checked as the model files' are."""
        k = self.body_index(body)
        c, inertia = _as_f64("com", com), _as_f64("inertia", inertia)
        if c.shape != (3,) or inertia.shape != (3, 3):
            raise ArgumentError(f"set_body_inertia: com {c.shape} and inertia {inertia.shape}, "
                                "expected (3,) and (3, 3)")
        self._set("set_body_inertia", lambda err: lib.sd_model_set_body_inertia(
            self._m, k, float(mass), _from_buffer(_DBL, c), _from_buffer(_DBL, inertia), err))

    def _set_joint_terms(self, fn, setter, attr, values):
        """Set one joint-level term per speed: values is nv numbers, or a dict {speed (label or
        index) or joint name: value}. All or nothing: a refused value leaves every speed unchanged."""
        current = getattr(self, attr)
        new = np.array(current)
        if isinstance(values, dict):
            for key, val in values.items():
                if isinstance(key, str) and key in self.joint_names and key not in self.speed_labels:
                    k = self.joint_names.index(key)
                    idx = range(self.v_index[k], self.v_index[k] + self.hinge_nv[k])
                elif isinstance(key, str):
                    if key not in self.speed_labels:
                        raise ArgumentError(f"{fn}: no speed or joint named {key!r} (model.speed_labels, joint_names)")
                    idx = [self.speed_labels.index(key)]
                else:
                    if not 0 <= int(key) < self.nv:
                        raise ArgumentError(f"{fn}: speed index {key} out of range 0..{self.nv - 1}")
                    idx = [int(key)]
                for v in idx:
                    new[v] = float(val)
        else:
            a = _as_f64(fn, values)
            if a.shape != (self.nv,):
                raise ArgumentError(f"{fn}: {a.shape} values, expected one per speed ({self.nv},) or a dict")
            new[:] = a
        old = np.array(current)
        err = ffi.new("sd_error *")

        def restore():  # the values held before this call, on the speeds it changed
            for w in np.flatnonzero(new != old):
                setter(self._m, int(w), float(old[w]), ffi.NULL)
            self._read_parameters()

        for v in np.flatnonzero(new != old):
            st = setter(self._m, int(v), float(new[v]), err)
            if st:
                restore()
                _raise(st, f"{fn}: {self.speed_labels[v]}: {_str(err.message)}")
        self._read_parameters()
        got = getattr(self, attr)
        if not np.array_equal(got, new):  # a spherical hinge's one stiffness asked to differ per speed
            v = int(np.flatnonzero(got != new)[0])
            restore()
            raise ArgumentError(f"{fn}: {self.speed_labels[v]}: {new[v]!r} cannot be held (joint "
                                f"{self.joint_names[lib.sd_model_v_body(self._m, v)]!r} has one value for its speeds)")

    def set_armature(self, values):
        """The armature (rotor inertia, kg m^2 or kg) added to M(v, v) per speed: nv numbers or a
        dict {speed label, index or joint name: value}."""
        self._set_joint_terms("set_armature", lib.sd_model_set_armature, "armature", values)

    def set_damping(self, values):
        """The viscous damping per speed (tau = -damping u), as set_armature."""
        self._set_joint_terms("set_damping", lib.sd_model_set_damping, "damping", values)

    def set_stiffness(self, values):
        """The joint spring stiffness per speed (revolute, prismatic; a spherical hinge's one
        stiffness for its three speeds), as set_armature."""
        self._set_joint_terms("set_stiffness", lib.sd_model_set_stiffness, "stiffness", values)

    def set_spring_ref(self, values):
        """The springs' rest coordinates (rad or m; revolute and prismatic hinges), as set_armature."""
        self._set_joint_terms("set_spring_ref", lib.sd_model_set_spring_ref, "spring_ref", values)

    def copy(self):
        """An independent deep copy (sd_model_copy) with its own workspace: one per thread, or a
        model to change while keeping the original."""
        err = ffi.new("sd_error *")
        cm = lib.sd_model_copy(self._m, err)
        if cm == _NULL:
            _raise(err.status, _str(err.message))
        return Model(cm, self.path, self.format)

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
        b = _Batch(fn, self)
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
            if want == self.nq and fn != "normalize":
                self._check_quaternions(fn, name, a)

    def _check_quaternions(self, fn, name, q):
        """ArgumentError unless every quaternion of q (one state or a batch) has norm 1 to
        QUATERNION_TOLERANCE: soadyn uses a quaternion as given, unnormalised (a norm of 2 changes
        M by orders of magnitude), as `soadyn simulate --q0` refuses one. A NaN is left to the C
        call, whose message names the coordinate."""
        idx = self._quat_index
        if idx is None or q.shape[-1:] != (self.nq,):
            return  # no quaternion, or a wrong shape that the caller reports
        err = np.abs(np.sqrt(np.sum(np.square(q[..., idx]), axis=-1)) - 1.0)
        bad = err > QUATERNION_TOLERANCE
        if not bad.any():
            return
        where = tuple(np.argwhere(bad)[0])
        k = self._quat_bodies[where[-1]]
        first = int(idx[where[-1], 0])
        state = f" state {where[0]}:" if len(where) > 1 else ""
        norm = float(np.sqrt(np.sum(np.square(q[where[:-1]][idx[where[-1]]]))))
        raise ArgumentError(
            f"{fn}: {name}:{state} the quaternion of joint {self.joint_names[k]!r} ({name}[{first}:{first + 4}], "
            f"w x y z) has norm {norm:.17g}, not 1 (| |quat| - 1 | = {float(err[where]):.3g} > "
            f"{QUATERNION_TOLERANCE:g}); soadyn uses quaternions as given: pass unit ones (model.normalize(q))")

    def _tree_only(self, fn, tree, closed):
        """ClosedLoopError when the model has closure constraints and the tree's answer was not asked
        for by name (tree=True); `closed` is the call that solves the closed system."""
        if self.nconstraints and not tree:
            names = ", ".join(self.constraint_names)
            raise ClosedLoopError(
                f"{fn}: model {self.name!r} has {self.nconstraints} closure constraint(s) ({names}), which the "
                f"open tree's answer ignores: call {closed} for the closed system, or {fn}(..., tree=True) for "
                f"the open tree")

    # ------------------------------------------------------------ dynamics

    def forward_dynamics(self, q, u, tau, f_ext=None, out=None, tree=False, threads=1, simd=True):
        """qdd = M^-1 (tau - C + J^T f_ext) of the tree by the O(N) articulated-body algorithm (004
        Alg 6.1), the armature in D(k) = H P H* + J (004 Eq 33) and the joints' damping and springs
        added to tau. On a model with closure constraints it raises ClosedLoopError (use
        closed_loop_forward_dynamics) unless tree=True asks for the open tree's qdd.

        A batch (a leading axis of states) runs through soadyn/batch.h on `threads` threads, by the
        SIMD kernel (4 or 8 states per step) when `simd` and the model allow it: each state's qdd
        is then the single call's up to round-off (batch.h states the bound), and bit for bit the
        same whatever the threads and the batch's size; simd=False gives the single calls' bits."""
        r = _fast_fd(self._mp, self._dp, q, u, tau, f_ext, out, tree)
        if r.__class__ is _ndarray:
            return r
        if r is not None:
            self._fail(r, -1)
        return self._dynamics("forward_dynamics", lib.sd_forward_dynamics_batch, q, u, ("tau", tau), f_ext, out,
                              tree, threads, simd, "closed_loop_forward_dynamics(q, u, tau)", _FD)

    def inverse_dynamics(self, q, u, qdd, f_ext=None, out=None, tree=False, threads=1, simd=True):
        """tau = M qdd + C - J^T f_ext of the tree by Newton-Euler (004 Alg 3.1), armature and
        passive forces included. ClosedLoopError on a model with closure constraints (use
        constrained_inverse_dynamics) unless tree=True. Batches as forward_dynamics."""
        r = _fast_id(self._mp, self._dp, q, u, qdd, f_ext, out, tree)
        if r.__class__ is _ndarray:
            return r
        if r is not None:
            self._fail(r, -1)
        return self._dynamics("inverse_dynamics", lib.sd_inverse_dynamics_batch, q, u, ("qdd", qdd), f_ext, out,
                              tree, threads, simd, "constrained_inverse_dynamics(q, u, qdd, actuated)", _ID)

    def _state_inputs(self, fn, q, u, x, f_ext):
        """The _Batch of a call on (q, u, x = (name, value), f_ext), the strides in self._strides,
        and per input its pointer and array: (b, (pq, pu, px, pf), (aq, au, ax, af))."""
        b = _Batch(fn, self)
        s = self._strides
        pq, s.q, aq = b.add("q", q, (self.nq,))
        pu, s.u, au = b.add("u", u, (self.nv,))
        px, s.x, ax = b.add(x[0], x[1], (self.nv,))
        pf, af = _NULL, None
        if f_ext is not None:
            pf, s.f, af = b.add("f_ext", f_ext, self._fshape)
        return b, (pq, pu, px, pf), (aq, au, ax, af)

    def _dynamics(self, fn, batch_fn, q, u, x, f_ext, out, tree, threads, simd, closed, algorithm):
        """The general path of forward (_FD, _FD_CHOLESKY) and inverse (_ID) dynamics: every check,
        one state by the sdpy loop, a batch by soadyn/batch.h (which has no Cholesky FD)."""
        self._tree_only(fn, tree, closed)
        b, (pq, pu, px, pf), (aq, au, ax, af) = self._state_inputs(fn, q, u, x, f_ext)
        s = self._strides
        y = _output(out, b.shape(self.nv))
        if b.n >= 0 and algorithm != _FD_CHOLESKY:
            ctx = self._batch_context(threads, simd)
            aq, au, ax, af = b.stacked(aq, s.q), b.stacked(au, s.u), b.stacked(ax, s.x), b.stacked(af, s.f)
            st = batch_fn(ctx, b.n, _from_buffer(_DBL, aq), _from_buffer(_DBL, au), _from_buffer(_DBL, ax),
                          _NULL if af is None else _from_buffer(_DBL, af), _from_buffer(_DBL, y), _NULL)
            if st:
                _raise(st, _str(lib.sd_batch_error(ctx)))
            return y
        if algorithm != _ID:
            st = lib.sdpy_forward_dynamics(self._m, self._d, b.rows(), s, pq, pu, px, pf, _from_buffer(_DBL, y),
                                           int(algorithm == _FD_CHOLESKY), self._row)
        else:
            st = lib.sdpy_inverse_dynamics(self._m, self._d, b.rows(), s, pq, pu, px, pf, _from_buffer(_DBL, y),
                                           self._row)
        if st:
            self._fail(st, b.n)
        return y

    def _batch_context(self, threads, simd):
        """The sd_batch of `threads` threads (made once, freed with the model), set to `simd`."""
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= 256:
            raise ArgumentError(f"threads: {threads!r}, expected an integer from 1 to 256")
        threads = int(threads)
        ctx = self._batches.get(threads)
        if ctx is None:
            err = ffi.new("sd_error *")
            ctx = lib.sd_batch_new(self._m, threads, err)
            if ctx == _NULL:
                _raise(err.status, _str(err.message))
            self._batches[threads] = ctx
        mode = lib.SD_BATCH_SIMD_AUTO if simd else lib.SD_BATCH_SIMD_OFF
        if self._simd.get(threads) != mode:
            lib.sd_batch_set_simd(ctx, mode)
            self._simd[threads] = mode
        return ctx

    def simd_lanes(self, threads=1, simd=True):
        """States per SIMD step of a batched forward or inverse dynamics call (8 with AVX-512, 4 with
        AVX2), 0 when it takes the scalar path; and why (sd_batch_simd_note)."""
        ctx = self._batch_context(threads, simd)
        return lib.sd_batch_simd_lanes(ctx), _str(lib.sd_batch_simd_note(ctx))

    def forward_dynamics_cholesky(self, q, u, tau, f_ext=None, tree=False):
        """The same qdd from M and C by a dense Cholesky solve, O(N^3) (001 Sec 3): the reference.
        ClosedLoopError on a model with closure constraints unless tree=True."""
        return self._dynamics("forward_dynamics_cholesky", None, q, u, ("tau", tau), f_ext, None, tree, 1, False,
                              "closed_loop_forward_dynamics(q, u, tau)", _FD_CHOLESKY)

    def bias_forces(self, q, u, f_ext=None):
        """C(q, u) - J^T f_ext: gravity, velocity terms and -tau_passive (inverse dynamics at qdd = 0)."""
        b = _Batch("bias_forces", self)
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
        b = _Batch("passive_forces", self)
        s = self._strides
        pq, s.q, _ = b.add("q", q, (self.nq,))
        pu, s.u, _ = b.add("u", u, (self.nv,))
        out = np.empty(b.shape(self.nv))
        st = lib.sdpy_passive_forces(self._m, self._d, b.rows(), s, pq, pu, _from_buffer("double[]", out), self._row)
        if st:
            self._fail(st, b.n)
        return out

    # ------------------------------------------------------------ derivatives (soadyn/derivatives.h)

    def forward_dynamics_derivatives(self, q, u, tau, f_ext=None, threads=1):
        """The forward dynamics qdd = FD(q, u, tau, f_ext) and its derivatives, as
        FDDerivatives(qdd, dqdd_dq, dqdd_du, dqdd_dtau) (a named tuple; each matrix nv x nv, row i
        the output, column j the variable; dqdd_dtau = M^-1). dqdd_dq is on the tangent space: column j
        is d/d eps qdd(q (+) eps e_j), the perturbation of model.integrate(q, e_j, eps) (for ball and
        free joints the rotation vector in body axes). A batch (a leading axis of states on any input)
        runs on `threads` threads through sd_batch_forward_dynamics_derivatives, each state the
        single call's bits; the outputs then carry the leading axis. On a model with flexible bodies
        the modal coordinates are ordinary coordinates (their own tangent). Models the derivatives do
        not take (closure constraints) raise NotSupportedError saying why."""
        return self._derivatives("forward_dynamics_derivatives", q, u, ("tau", tau), f_ext, threads, True)

    def inverse_dynamics_derivatives(self, q, u, qdd, f_ext=None, threads=1):
        """The inverse dynamics tau = ID(q, u, qdd, f_ext) and its derivatives, as
        IDDerivatives(tau, dtau_dq, dtau_du) (dtau_dqdd is the mass matrix, model.mass_matrix(q)).
        Tangent space, batches and errors as forward_dynamics_derivatives."""
        return self._derivatives("inverse_dynamics_derivatives", q, u, ("qdd", qdd), f_ext, threads, False)

    def _derivatives(self, fn, q, u, x, f_ext, threads, forward):
        b, (pq, pu, px, pf), (aq, au, ax, af) = self._state_inputs(fn, q, u, x, f_ext)
        s = self._strides
        nv = self.nv
        outs = [np.empty(b.shape(nv))] + [np.empty(b.shape(nv, nv)) for _ in range(3 if forward else 2)]
        ptrs = [_from_buffer(_DBL, o) for o in outs]
        if b.n >= 0:
            ctx = self._batch_context(threads, False)
            aq, au, ax, af = b.stacked(aq, s.q), b.stacked(au, s.u), b.stacked(ax, s.x), b.stacked(af, s.f)
            call = lib.sd_batch_forward_dynamics_derivatives if forward else lib.sd_batch_inverse_dynamics_derivatives
            st = call(ctx, b.n, _from_buffer(_DBL, aq), _from_buffer(_DBL, au), _from_buffer(_DBL, ax),
                      _NULL if af is None else _from_buffer(_DBL, af), *ptrs)
            if st:
                _raise(st, _str(lib.sd_batch_error(ctx)))
        else:
            call = lib.sd_forward_dynamics_derivatives if forward else lib.sd_inverse_dynamics_derivatives
            st = call(self._m, self._d, pq, pu, px, pf, *ptrs)
            if st:
                self._fail(st, -1)
        return (FDDerivatives if forward else IDDerivatives)(*outs)

    def _matrix(self, fn, q, which, rows, threads=1):
        b, pq, sq = self._state_q(fn, q)
        out = np.empty(b.shape(rows, self.nv))
        if b.n >= 0 and which < 2:  # a batch of M or M^-1: batch.h, the single-state calls on each thread
            ctx = self._batch_context(threads, False)
            st = (lib.sd_mass_matrix_inverse_batch if which else lib.sd_mass_matrix_batch)(
                ctx, b.n, pq, _from_buffer(_DBL, out))
            if st:
                _raise(st, _str(lib.sd_batch_error(ctx)))
            return out
        st = lib.sdpy_matrix(self._m, self._d, b.rows(), sq, pq, which, _from_buffer("double[]", out), self._row)
        if st:
            self._fail(st, b.n)
        return out

    def mass_matrix(self, q, threads=1):
        """M(q), nv x nv, by composite body inertias (004 Alg 4.2), diag(armature) added. A batch runs
        on `threads` threads (soadyn/batch.h), each state the single call's bits."""
        return self._matrix("mass_matrix", q, 0, self.nv, threads)

    def mass_matrix_inverse(self, q, threads=1):
        """The dense M^-1(q) in O(N^2) from the articulated-body recursion (004 Eq 51); batches as
        mass_matrix."""
        return self._matrix("mass_matrix_inverse", q, 1, self.nv, threads)

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
        b = _Batch(fn, self)
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

    def forward_dynamics_ex(self, q, u, tau, f_ext=None, qdd=None, prescribed=None, forces=True, frame="body",
                            tree=False):
        """Forward dynamics with options (000 Sec 3, 000 Eq 17/41): `prescribed` (per body a flag, or a
        list of body names/indices) marks hinges whose acceleration is given in `qdd` (mixed dynamics:
        their hinge force comes out in tau); forces: also every inter-body force f(k) from the
        recursion's by-products, in `frame` ("body", "world", "joint").

        Returns dict(qdd, tau, forces (nbodies x 6 [moment; force]), free (H f, the first hinge_nv[k]
        entries of row k), constrained (the 6 - hinge_nv[k] reactions along the complement of H, 003
        Prop 5), zero-padded to 6). ClosedLoopError on a model with closure constraints unless
        tree=True (closed_loop_forward_dynamics(..., forces=True) gives the closed system's forces)."""
        self._tree_only("forward_dynamics_ex", tree, "closed_loop_forward_dynamics(q, u, tau, forces=True)")
        b = _Batch("forward_dynamics_ex", self)
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
        tau_io = np.ascontiguousarray(np.broadcast_to(tau_a, b.shape(self.nv)))  # copies: written by the call
        qdd_io = np.zeros(b.shape(self.nv)) if qdd is None else \
            np.ascontiguousarray(np.broadcast_to(_as_f64("qdd", qdd), b.shape(self.nv)))
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

    def mixed_dynamics(self, q, u, tau, qdd, prescribed, f_ext=None, tree=False):
        """Prescribed hinges (000 Sec 3): returns (qdd, tau) with qdd given on the prescribed bodies'
        speeds and computed elsewhere, tau the other way round. Tree only (tree=True on a model
        with closure constraints)."""
        self._tree_only("mixed_dynamics", tree, "closed_loop_forward_dynamics(q, u, tau)")
        r = self.forward_dynamics_ex(q, u, tau, f_ext=f_ext, qdd=qdd, prescribed=prescribed, forces=False, tree=tree)
        return r["qdd"], r["tau"]

    def interbody_forces(self, q, u, tau, f_ext=None, frame="body", tree=False):
        """The spatial force [moment; force] each parent exerts on its child through the hinge, from
        the articulated-body by-products (000 Eq 17: f = P+ alpha+ + z+). Returns dict as
        forward_dynamics_ex (qdd, tau, forces, free, constrained). Tree only, as forward_dynamics_ex."""
        self._tree_only("interbody_forces", tree, "closed_loop_forward_dynamics(q, u, tau, forces=True)")
        return self.forward_dynamics_ex(q, u, tau, f_ext=f_ext, forces=True, frame=frame, tree=tree)

    def inverse_dynamics_forces(self, q, u, qdd, f_ext=None, frame="body", tree=False):
        """Inverse dynamics (004 Alg 3.1) with every inter-body force it computes: dict(tau, forces,
        free, constrained) as forward_dynamics_ex. Tree only (tree=True with closure constraints)."""
        self._tree_only("inverse_dynamics_forces", tree, "constrained_inverse_dynamics(q, u, qdd, actuated)")
        b = _Batch("inverse_dynamics_forces", self)
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
        b = _Batch("body_states", self)
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

    def jacobian(self, q, frame, point=(0.0, 0.0, 0.0)):
        """The 6 x nv Jacobian mapping u to [omega; v] of the point `point` (in `frame`'s coordinates)
        fixed on `frame` (a body, or a named frame: a link merged by a fixed joint, an MJCF site),
        both in world axes (sd_jacobian_world)."""
        k, Rf, pf = self._frame(frame)
        b, pq, sq = self._state_q("jacobian", q)
        pt = _as_f64("point", point)
        if pt.shape != (3,):
            raise ArgumentError(f"jacobian: point has shape {pt.shape}, expected (3,)")
        if not np.all(np.isfinite(pt)):  # else reported as the Jacobian overflowing
            raise ArgumentError(f"jacobian: point {pt.tolist()} has an entry that is not finite")
        pt = pf + Rf @ pt  # in the body's coordinates
        J = np.empty(b.shape(6, self.nv))
        st = lib.sdpy_jacobian(self._m, self._d, b.rows(), sq, pq, k, _from_buffer("double[]", pt),
                               _from_buffer("double[]", J), self._row)
        if st:
            self._fail(st, b.n)
        return J

    # ------------------------------------------------------------ named frames

    def frame_index(self, frame):
        """The index (in frame_names) of a named frame (ArgumentError if there is none)."""
        k = lib.sd_model_frame_index(self._m, str(frame).encode())
        if k < 0:
            raise ArgumentError(f"model {self.name}: no frame named {frame!r} (frame_names; bodies: body_names)")
        return k

    def frame_placement_in_body(self, frame):
        """(body name, R, p): the body a frame (or body) is fixed on and the frame's placement in it,
        R (3, 3) its axes as columns and p its origin, in the body's coordinates."""
        k, R, p = self._frame(frame)
        return self.body_names[k], R.copy(), p.copy()

    def _frame(self, frame):
        """(body index, R, p) of a body (name or index; identity placement) or a named frame."""
        if isinstance(frame, str) and lib.sd_model_body_index(self._m, frame.encode()) < 0 \
                and lib.sd_model_frame_index(self._m, frame.encode()) >= 0:
            f = self.frame_index(frame)
            X = lib.sd_model_frame_placement(self._m, f)
            return (lib.sd_model_frame_body(self._m, f), np.array(list(X.R)).reshape(3, 3), np.array(list(X.p)))
        try:
            return self.body_index(frame), _EYE3, _ZERO3
        except ArgumentTypeError:
            raise  # not a name nor an integer index: say so, not "no body named 1.5"
        except ArgumentError:
            raise ArgumentError(f"model {self.name}: no body or frame named {frame!r} (body_names, frame_names)") \
                from None

    def frame_placement(self, q, frame):
        """World placement (R (3, 3) the frame's axes as columns, p (3) its origin) of a body or named
        frame at q; batched over q."""
        k, Rf, pf = self._frame(frame)
        R, p = self.body_states(q)[:2]
        Rb, pb = R[..., k, :, :], p[..., k, :]
        return Rb @ Rf, pb + np.einsum("...ij,j->...i", Rb, pf)

    def frame_velocity(self, q, u, frame):
        """Spatial velocity [omega; v] of a body or named frame, in the frame's axes, v that of its
        origin (Pinocchio's LOCAL reference): R_f^T [omega_b; v_b + omega_b x p_f]."""
        k, Rf, pf = self._frame(frame)
        V = self.body_states(q, u)[2][..., k, :]
        return self._shift_to_frame(V, Rf, pf)

    def frame_acceleration(self, q, u, qdd, frame):
        """Spatial acceleration (gravity excluded) of a body or named frame in the frame's axes at
        its origin: the time derivative of frame_velocity's components, the frame being fixed on
        its body."""
        k, Rf, pf = self._frame(frame)
        A = self.body_states(q, u, qdd)[3][..., k, :]
        return self._shift_to_frame(A, Rf, pf)

    @staticmethod
    def _shift_to_frame(V, Rf, pf):
        w, v = V[..., :3], V[..., 3:]
        return np.concatenate([w @ Rf, (v + np.cross(w, pf)) @ Rf], axis=-1)

    def _energy(self, fn, q, u, e, com, h):
        b = _Batch(fn, self)
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

    def kinetic_energy(self, q, u):
        """1/2 u^T M(q) u (J), armature included; batched."""
        E = self._energy("kinetic_energy", q, u, True, False, False)[0]
        return float(E[0]) if E.ndim == 1 else E[:, 0]

    def potential_energy(self, q):
        """The potential energy (J): gravity's -sum m g.c, the joint springs' and the flexible
        bodies' strain energy (energies()["potential"]); batched."""
        E = self._energy("potential_energy", q, np.zeros(self.nv), True, False, False)[0]
        pot = E[..., 1] + E[..., 2] + E[..., 3]
        return float(pot) if E.ndim == 1 else pot

    def center_of_mass(self, q):
        """The system's centre of mass in world coordinates."""
        return self._energy("center_of_mass", q, None, False, True, False)[1]

    def momentum(self, q, u):
        """Total spatial momentum [angular about the world origin; linear], world axes."""
        return self._energy("momentum", q, u, False, False, True)[2]

    def external_force_at_point(self, q, body, point, force, f_ext=None):
        """f_ext (nbodies x 6, a new one or `f_ext` added to in place) with a force (world axes) applied
        at a point (in the coordinates of `body`, a body or a named frame) at configuration q (003's
        Y^T F-bar for one point)."""
        k, Rf, pf = self._frame(body)
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
        pt = pf + Rf @ pt  # in the body's coordinates
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
            bodies[i], Rf, pf = self._frame(body)  # a named frame: the task frame placed in its body
            pl[i, :9] = (Rf @ np.asarray(R, dtype=float).reshape(3, 3)).reshape(9)
            pl[i, 9:] = pf + Rf @ np.asarray(p, dtype=float).reshape(3)
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
        Lemma 5 / Alg 4.3). A task frame is a body or named frame (name or body index), (frame, p) or
        (frame, R, p) in that frame's coordinates."""
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
        b = _Batch("closed_loop_forward_dynamics", self)
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
        b = _Batch("constrained_inverse_dynamics", self)
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
        b = _Batch("constraint_residuals", self)
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
        self._check_quaternions("assemble", "q_guess", q)
        pl, _keep = _flags("locked", locked, self.nv, "speed", self.speed_labels)
        res = ffi.new("double *")
        pq = _from_buffer("double[]", q)
        st = lib.sd_assemble_configuration(self._m, self._d, pq, pl, float(tol), int(max_iter), pq, res)
        if st:
            self._fail(st, -1)
        return q, res[0]

    def project_velocities(self, q, u):
        """The speeds nearest to u in the kinetic-energy metric with G u = 0."""
        b = _Batch("project_velocities", self)
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
        """A flexible body's modal natural frequencies (rad/s, ascending), every hinge locked, the bodies
        riding on its nodes riding (flex.h sd_model_flex_frequencies)."""
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
                 project_constraints=True, jacobian="auto"):
        """Integrate from (q0, u0) (default neutral, zero) with sd_simulate: RK4 on a chart of the
        manifold, fixed-step Radau IIA "radau-iia" (order 5, for stiff models), or CVODE "cvode-bdf"
        / "cvode-adams" (dt then the output interval). tau: constant joint forces (nv).
        control(t, q, u) -> joint forces (nv) added to tau at every right-hand side evaluation (q, u
        are read-only views valid during the call). Loops are projected after every step unless
        project_constraints is False. jacobian: the Newton Jacobian of cvode-bdf and radau-iia,
        "analytic" (the forward dynamics derivatives), "dq" (difference quotients) or "auto"
        (analytic where offered; soadyn/sim.h, sd_sim_jacobian).

        Returns SimResult (t, q, u): unpacks as `t, q, u = model.simulate(...)`; also .kinetic,
        .potential (J) per sample and .stats (steps, rhs_evals, t_end, energies, residuals). An
        exception raised by control stops the run and is re-raised here."""
        q = self.neutral() if q0 is None else np.array(_as_f64("q0", q0))
        u = np.zeros(self.nv) if u0 is None else np.array(_as_f64("u0", u0))
        if q.shape != (self.nq,) or u.shape != (self.nv,):
            raise ArgumentError(f"simulate: q0 {q.shape} and u0 {u.shape}, expected ({self.nq},) and ({self.nv},)")
        self._check_quaternions("simulate", "q0", q)
        o = ffi.new("sd_sim_options *")
        lib.sd_sim_options_init(o)
        integ = ffi.new("sd_integrator *")
        if lib.sd_integrator_from_name(str(integrator).encode(), integ):
            raise ArgumentError(f"simulate: no integrator {integrator!r} (rk4, cvode-bdf, cvode-adams, radau-iia)")
        o.integrator = integ[0]
        jac = ffi.new("sd_sim_jacobian *")
        if lib.sd_sim_jacobian_from_name(str(jacobian).encode(), jac):
            raise ArgumentError(f"simulate: no jacobian {jacobian!r} (auto, analytic, dq)")
        o.jacobian = jac[0]
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
                "max_velocity_residual": s.max_velocity_residual, "projections": s.projections,
                "jacobian_evals": s.jacobian_evals, "jacobian": _str(lib.sd_sim_jacobian_name(s.jacobian))}
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


FDDerivatives = collections.namedtuple("FDDerivatives", "qdd dqdd_dq dqdd_du dqdd_dtau")
FDDerivatives.__doc__ = "Model.forward_dynamics_derivatives: qdd and d qdd / d(q (tangent), u, tau)."
IDDerivatives = collections.namedtuple("IDDerivatives", "tau dtau_dq dtau_du")
IDDerivatives.__doc__ = "Model.inverse_dynamics_derivatives: tau and d tau / d(q (tangent), u)."


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
    model._check_quaternions("write_view", "q", q)
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
              "frame_placement", "frame_velocity", "frame_acceleration", "frame_placement_in_body",
              "kinetic_energy", "potential_energy", "energies", "center_of_mass", "momentum",
              "external_force_at_point", "operational_space_compliance", "operational_space_inertia", "closed_loop_forward_dynamics", "constrained_inverse_dynamics",
              "constraint_residuals", "constraint_jacobian", "constraint_rank", "assemble", "project_velocities",
              "flex_frequencies", "node_deflection", "strain_energy", "simulate", "forward_dynamics_derivatives",
              "inverse_dynamics_derivatives"):
    globals()[_name] = getattr(Model, _name)
    __all__.append(_name)
del _name

from .conventions import from_mujoco, from_pinocchio, to_mujoco, to_pinocchio  # noqa: E402

__all__ += ["to_pinocchio", "from_pinocchio", "to_mujoco", "from_mujoco"]
