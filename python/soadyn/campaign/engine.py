"""One campaign's runs on a worker: the model file loaded once per process, then per run a copy of
it with the run's parameters set through the C API (soadyn/params.h: validated as the builder
validates), a simulation through sd_simulate with the observer of _run.c, and the run's outputs.
A task's runs are prepared together, simulated in one call into C, and read together (run_task).

Run i's parameters depend only on (seed, i) and the dispersions listed: numpy's counter-based
Philox generator keyed with (seed, i) draws them in the order the spec lists them (a key per run
rather than a seed sequence: a stream of its own for every run, made in microseconds). A run
that fails (the library refuses a drawn parameter, the loops cannot close, the state stops being
finite) is recorded with the library's message; the other runs go on.
"""
import importlib
import math

import numpy as np

from . import spec as specmod
from ._run_cffi import ffi, lib

OK, FAILED = 1, 2  # a run's status in the store (0: not run yet)
_METRIC_CODES = {"max_node_deflection": 0, "max_joint_force": 1, "max_joint_moment": 2, "energy_drift": 3,
                 "closure_residual": 4}
# Parameters whose values cannot be negative, and what they are (for messages).
_NONNEGATIVE = {"mass": "a mass", "inertia_scale": "an inertia scale", "armature": "an armature",
                "damping": "a damping", "stiffness": "a stiffness", "frequency": "a natural frequency",
                "damping_ratio": "a damping ratio"}


class RunError(Exception):
    """A run's failure: the C library's message."""


def _text(chars):
    return ffi.string(chars).decode("utf-8", "replace")


def _check(status, err):
    if status != lib.SD_OK:
        raise RunError(_text(err.message))


def load_model(path):
    """The C model of the file (freed with the returned object)."""
    out = ffi.new("sd_model **")
    err = ffi.new("sd_error *")
    st = lib.sd_model_load_file(path.encode(), ffi.NULL, out, ffi.NULL, err)
    if st != lib.SD_OK:
        raise specmod.SpecError(f"{path}: {_text(err.message)}")
    return ffi.gc(out[0], lib.sd_model_free)


def _labels(m, n, label_fn):
    buf = ffi.new("char[256]")
    names = []
    for i in range(n):
        label_fn(m, i, buf, 256)
        names.append(_text(buf))
    return names


class Parameter:
    """One dispersed parameter resolved against the model: what it sets, its nominal value."""

    def __init__(self, entry, kind, target, index, nominal):
        self.name, self.how, self.line = entry["name"], entry["how"], entry["line"]
        self.distribution, self.parameters = entry["distribution"], entry["parameters"]
        self.kind, self.target, self.index, self.nominal = kind, target, index, nominal

    def value(self, x):
        """The parameter's value for a drawn x."""
        return x if self.how == "value" else self.nominal * x if self.how == "scale" else self.nominal + x

    def support(self, lo, hi):
        if self.how == "value":
            return lo, hi
        if self.how == "offset":
            return self.nominal + lo, self.nominal + hi
        if self.nominal == 0.0:
            return 0.0, 0.0
        ends = sorted((self.nominal * lo, self.nominal * hi))
        return ends[0], ends[1]


class Campaign:
    """A checked spec resolved against its model: what every run of it needs. Raises SpecError (file:
    line and item) for a name the model does not have or a dispersion whose support leaves what the
    parameter may hold."""

    def __init__(self, spec):
        self.spec = spec
        self.where = specmod._Where(spec["spec_file"])
        self.model = load_model(spec["model"])
        m = self.model
        self.nq, self.nv, self.nbodies = lib.sd_model_nq(m), lib.sd_model_nv(m), lib.sd_model_nbodies(m)
        self.coordinates = _labels(m, self.nq, lib.sd_coordinate_label)
        self.speeds = _labels(m, self.nv, lib.sd_speed_label)
        self.q_reference = np.empty(self.nq)
        lib.sd_configuration_reference(m, ffi.from_buffer("double[]", self.q_reference))
        self.parameters = [self._resolve(entry) for entry in spec["dispersions"]]
        self._bits = np.random.Philox(key=[spec["seed"], 0])  # keyed anew for each run (draw)
        self._rng = np.random.Generator(self._bits)
        # the nominal values each run starts from, read once: a body's inertia, a flexible body's modes
        self._bodies = {p.target: (lib.sd_model_body_mass(m, p.target), list(lib.sd_model_body_com(m, p.target)[0:3]),
                                   list(lib.sd_model_body_inertia(m, p.target)[0:9]))
                        for p in self.parameters if p.kind in ("mass", "com", "inertia_scale")}
        self._modes = {p.target: (self._modal(p.target, "frequency"), self._modal(p.target, "damping_ratio"))
                       for p in self.parameters if p.kind in ("frequency", "damping_ratio")}
        self.tau = self._resolve_tau()
        self.metrics = [self._resolve_metric(x) for x in spec["metrics"]]
        self._needs_data = any(kind in (_METRIC_CODES["max_joint_force"], _METRIC_CODES["max_joint_moment"])
                               for kind, _, _ in self.metrics)
        sim = spec["simulation"]
        self.options = ffi.new("sd_sim_options *")
        lib.sd_sim_options_init(self.options)
        integrator = ffi.new("sd_integrator *")
        lib.sd_integrator_from_name(sim["integrator"].encode(), integrator)
        o = self.options
        o.integrator, o.duration, o.dt, o.every = integrator[0], sim["duration"], sim["dt"], sim["sample_every"]
        o.rtol, o.atol = sim["rtol"], sim["atol"]
        # the samples' energies (a kinematics sweep and the energy sums each) only for the metric that reads them
        o.sample_energies = int(any(kind == _METRIC_CODES["energy_drift"] for kind, _, _ in self.metrics))
        # the observer's calls: the start, one per `every` intervals, the end (sd_simulate)
        intervals = int(math.ceil(sim["duration"] / sim["dt"] * (1 - 1e-12)))
        calls = 1 + intervals // sim["sample_every"] + (1 if intervals % sim["sample_every"] else 0)
        every = spec["history_every"]
        self.history_length = (calls + every - 1) // every if every else 0
        self._factory = None
        if spec["controller"]:  # importable here, or refused before any run
            module, function = spec["controller"].split(":")
            try:
                self._factory = getattr(importlib.import_module(module), function)
            except (ImportError, AttributeError) as exc:
                self._fail(spec["lines"]["controller"], f"inputs: controller: {spec['controller']}: {exc}")
            if not callable(self._factory):
                self._fail(spec["lines"]["controller"], f"inputs: controller: {spec['controller']} is not callable")

    # ---- names against the model

    def _fail(self, line, what):
        self.where.fail(line, what)

    def _body(self, entry, name):
        k = lib.sd_model_body_index(self.model, name.encode())
        if k < 0:
            self._fail(entry["line"], f"'{entry['name']}': the model has no body '{name}'")
        return k

    def _joint(self, entry, name):
        k = lib.sd_model_joint_index(self.model, name.encode())
        if k < 0:
            self._fail(entry["line"], f"'{entry['name']}': the model has no joint '{name}'")
        return k

    def _resolve(self, entry):
        name, m = entry["name"], self.model
        parts = name.split(".")
        what = f"dispersions: '{name}'"
        head = parts[0]
        param = None
        if head == "gravity" and len(parts) == 2 and parts[1] in ("x", "y", "z"):
            g = ffi.new("double[3]")
            lib.sd_model_gravity(m, g)
            i = "xyz".index(parts[1])
            param = Parameter(entry, "gravity", None, i, g[i])
        elif head == "body" and len(parts) >= 3:
            body_name, field = ".".join(parts[1:-1]), parts[-1]
            if field in ("x", "y", "z") and len(parts) >= 4 and parts[-2] == "com":
                k = self._body(entry, ".".join(parts[1:-2]))
                i = "xyz".index(field)
                param = Parameter(entry, "com", k, i, lib.sd_model_body_com(m, k)[i])
            elif field == "mass":
                k = self._body(entry, body_name)
                param = Parameter(entry, "mass", k, 0, lib.sd_model_body_mass(m, k))
            elif field == "inertia_scale":
                k = self._body(entry, body_name)
                param = Parameter(entry, "inertia_scale", k, 0, 1.0)
        elif head == "joint" and len(parts) >= 3 and parts[-1] in ("armature", "damping", "stiffness", "spring_ref"):
            k = self._joint(entry, ".".join(parts[1:-1]))
            if lib.sd_model_hinge_nv(m, k) == 0:
                self._fail(entry["line"], f"{what}: joint '{'.'.join(parts[1:-1])}' is fixed (it has no speed)")
            v = lib.sd_model_v_index(m, k)
            getter = {"armature": lib.sd_model_armature, "damping": lib.sd_model_damping,
                      "stiffness": lib.sd_model_stiffness, "spring_ref": lib.sd_model_spring_ref}[parts[-1]]
            param = Parameter(entry, parts[-1], k, 0, getter(m, v))
        elif head == "flex" and len(parts) >= 4 and parts[-2] in ("frequency", "damping_ratio"):
            k = self._body(entry, ".".join(parts[1:-2]))
            nm = lib.sd_model_body_nmodes(m, k)
            if nm <= 0:
                self._fail(entry["line"], f"{what}: body '{'.'.join(parts[1:-2])}' is not flexible")
            if not parts[-1].isdigit() or not 1 <= int(parts[-1]) <= nm:
                self._fail(entry["line"], f"{what}: mode '{parts[-1]}': the body has modes 1 to {nm}")
            values = self._modal(k, parts[-2])
            r = int(parts[-1]) - 1
            param = Parameter(entry, parts[-2], k, r, values[r])
        elif head in ("q0", "u0") and len(parts) >= 2:
            label = ".".join(parts[1:])
            labels = self.coordinates if head == "q0" else self.speeds
            if label not in labels:
                self._fail(entry["line"], f"{what}: the model has no {'coordinate' if head == 'q0' else 'speed'} "
                                          f"'{label}' (it has: {', '.join(labels)})")
            i = labels.index(label)
            param = Parameter(entry, head, None, i, self.q_reference[i] if head == "q0" else 0.0)
        elif head == "gain" and len(parts) == 2:
            if parts[1] not in self.spec["gains"]:
                self._fail(entry["line"], f"{what}: inputs: gains has no '{parts[1]}'")
            param = Parameter(entry, "gain", parts[1], 0, self.spec["gains"][parts[1]])
        if param is None:
            self._fail(entry["line"], f"{what}: unknown parameter (expected gravity.x|y|z, body.NAME.mass, "
                                      f"body.NAME.com.x|y|z, body.NAME.inertia_scale, joint.NAME.armature|damping|"
                                      f"stiffness|spring_ref, flex.NAME.frequency.R, flex.NAME.damping_ratio.R, "
                                      f"q0.COORDINATE, u0.SPEED, gain.NAME)")
        if param.kind in _NONNEGATIVE:
            lo, hi = param.support(*entry["support"])
            if lo < 0:
                fix = "use truncnormal with low" if entry["distribution"] == "normal" else "keep the distribution"
                self._fail(entry["line"], f"{what}: the {entry['distribution']} distribution ({param.how}) gives "
                                          f"values down to {lo:g}, and {_NONNEGATIVE[param.kind]} is >= 0 "
                                          f"({fix} within the values that keep it >= 0)")
        return param

    def _modal(self, k, which):
        nm = lib.sd_model_body_nmodes(self.model, k)
        out = np.zeros(nm)
        err = ffi.new("sd_error *")
        fn = lib.sd_model_flex_frequencies if which == "frequency" else lib.sd_model_flex_damping_ratios
        _check(fn(self.model, k, ffi.from_buffer("double[]", out), err), err)
        return out

    def _resolve_tau(self):
        tau = np.zeros(self.nv)
        for joint, (value, line) in self.spec["tau"].items():
            k = lib.sd_model_joint_index(self.model, joint.encode())
            if k < 0:
                self._fail(line, f"inputs: tau: the model has no joint '{joint}'")
            v, n = lib.sd_model_v_index(self.model, k), lib.sd_model_hinge_nv(self.model, k)
            if n == 0:
                self._fail(line, f"inputs: tau: joint '{joint}' is fixed (it has no speed)")
            tau[v:v + n] = value
        return tau

    def _resolve_metric(self, x):
        what = f"outputs: metrics: '{x['name']}'"
        m = self.model
        body, node = -1, -1
        if x["kind"] == "max_node_deflection":
            body = lib.sd_model_body_index(m, x["body"].encode())
            if body < 0:
                self._fail(x["line"], f"{what}: the model has no body '{x['body']}'")
            nn = lib.sd_model_body_nnodes(m, body)
            if nn <= 0:
                self._fail(x["line"], f"{what}: body '{x['body']}' is not flexible")
            if x["node"] >= nn:
                self._fail(x["line"], f"{what}: node {x['node']}: body '{x['body']}' has nodes 0 to {nn - 1}")
            node = x["node"]
        elif x["kind"] in ("max_joint_force", "max_joint_moment"):
            body = lib.sd_model_joint_index(m, x["joint"].encode())
            if body < 0:
                self._fail(x["line"], f"{what}: the model has no joint '{x['joint']}'")
            if lib.sd_model_nconstraints(m) > 0:
                self._fail(x["line"], f"{what}: inter-body forces of a model with closure constraints are not "
                                      f"offered in campaigns (the tree's forces would leave out the loops')")
        elif x["kind"] == "closure_residual" and lib.sd_model_nconstraints(m) == 0:
            self._fail(x["line"], f"{what}: the model has no closure constraints")
        return (_METRIC_CODES[x["kind"]], body, node)

    # ---- one run

    def draw(self, i):
        """The parameter values of run i (the order of self.parameters), drawn from the stream of
        np.random.Philox(key=[seed, i]): the campaign's one generator is set to that key with its
        counter and buffer at zero, the state a new Philox(key=...) starts in (a quarter of the cost
        of making one per run)."""
        self._bits.state = {"bit_generator": "Philox", "state": {"counter": np.zeros(4, np.uint64),
                                                                 "key": np.array([self.spec["seed"], i], np.uint64)},
                            "buffer": np.zeros(4, np.uint64), "buffer_pos": 4, "has_uint32": 0, "uinteger": 0}
        return np.array([p.value(specmod.draw(self._rng, p.distribution, p.parameters)) for p in self.parameters])

    def _controller(self, gains):
        """The run's control law: the factory called with the run's gains (a failure fails the run)."""
        try:
            law = self._factory(dict(gains))
        except Exception as exc:  # noqa: BLE001 - the run's failure, with what the factory said
            raise RunError(f"controller {self.spec['controller']}({gains}): {exc!r}") from exc
        if not callable(law):
            raise RunError(f"controller {self.spec['controller']}: returned {law!r}, not a law (t, q, u) -> tau")
        return law

    def _apply(self, model, values, q, u, gains):
        """The run's parameters set on its model copy (the library checks each); q, u, gains updated."""
        m = self.model
        err = ffi.new("sd_error *")
        bodies = {k: {"mass": mass, "com": list(com), "scale": 1.0} for k, (mass, com, _) in self._bodies.items()}
        modes = {k: {"frequency": omega.copy(), "damping_ratio": zeta.copy()} for k, (omega, zeta) in self._modes.items()}
        joints, gravity = [], None
        for p, x in zip(self.parameters, values):
            if p.kind == "mass":
                bodies[p.target]["mass"] = x
            elif p.kind == "com":
                bodies[p.target]["com"][p.index] = x
            elif p.kind == "inertia_scale":
                bodies[p.target]["scale"] = x
            elif p.kind in ("armature", "damping", "stiffness", "spring_ref"):
                joints.append((p.kind, p.target, x))
            elif p.kind in ("frequency", "damping_ratio"):
                modes[p.target][p.kind][p.index] = x
            elif p.kind == "gravity":
                if gravity is None:
                    gravity = ffi.new("double[3]")
                    lib.sd_model_gravity(m, gravity)
                gravity[p.index] = x
            elif p.kind == "q0":
                q[p.index] = x
            elif p.kind == "u0":
                u[p.index] = x
            else:
                gains[p.target] = x
        for k, b in bodies.items():
            inertia = [b["scale"] * c for c in self._bodies[k][2]]
            _check(lib.sd_model_set_body_inertia(model, k, b["mass"], b["com"], inertia, err), err)
        setters = {"armature": lib.sd_model_set_armature, "damping": lib.sd_model_set_damping,
                   "stiffness": lib.sd_model_set_stiffness, "spring_ref": lib.sd_model_set_spring_ref}
        for kind, k, x in joints:
            v0 = lib.sd_model_v_index(m, k)
            for v in range(v0, v0 + lib.sd_model_hinge_nv(m, k)):
                _check(setters[kind](model, v, x, err), err)
        for k, f in modes.items():
            _check(lib.sd_model_set_flex_modes(model, k, ffi.from_buffer("double[]", f["frequency"]),
                                               ffi.from_buffer("double[]", f["damping_ratio"]), err), err)
        if gravity is not None:
            _check(lib.sd_model_set_gravity(model, gravity, err), err)

    def run(self, i):
        """Run i: (status, message, parameter values, metric values, q, u, history t, q, u)."""
        out = self.run_task(i, i + 1)
        return (out["status"][0], out["message"][0], out["params"][0], out["metrics"][0], out["q"][0], out["u"][0],
                *((out["history_t"][0], out["history_q"][0], out["history_u"][0]) if self.history_length else
                  (np.empty(0), np.empty((0, self.nq)), np.empty((0, self.nv)))))

    def run_task(self, start, stop):
        """Runs start .. stop-1: a dict of arrays, one row per run (store.py's columns). Every run's
        model copy is prepared first, then the task's simulations run in one call into C
        (sdc_simulate_task), then the results are read: the interpreter's share of the runs is done
        in tight loops rather than between simulations, whose work evicts it from the caches."""
        task = self.prepare_task(start, stop)
        try:
            task.simulate()
            return task.results()
        finally:
            task.release()

    def prepare_task(self, start, stop):
        """The _Task of runs start .. stop-1: each run's parameters drawn and set on its model copy
        (a run the library refuses is failed here), ready to simulate."""
        n, nm, S = stop - start, len(self.metrics), self.history_length
        task = _Task(self, n)
        out, runs = task.out, task.runs
        c_metrics = task.keep(ffi.new("sdc_metric[]", max(n * nm, 1)))
        scratch = task.keep(ffi.from_buffer("double[]", task.keep(np.empty(3 * max(self.nv, 1)))))  # runs in turn: one
        tau = task.keep(ffi.from_buffer("double[]", self.tau))
        err = ffi.new("sd_error *")
        try:
            for j in range(n):
                values = self.draw(start + j)
                out["params"][j] = values
                gains = dict(self.spec["gains"])
                model = lib.sd_model_copy(self.model, err)
                if model == ffi.NULL:
                    raise MemoryError(_text(err.message))
                r = runs[j]
                r.model = model
                try:
                    self._apply(model, values, out["q"][j], out["u"][j], gains)
                    if self._needs_data:  # the joint-force metrics evaluate the dynamics at the samples
                        r.data = lib.sd_data_new(model)
                        if r.data == ffi.NULL:
                            raise MemoryError("sd_data_new: out of memory")
                    if self.spec["controller"]:
                        task.controls[j] = _Control(self._controller(gains), self.nq, self.nv)
                        r.control, r.control_user = lib.sdc_control_callback, task.keep(ffi.new_handle(task.controls[j]))
                except RunError as exc:
                    task.fail(j, str(exc))
                    continue
                r.tau = tau
                r.nmetrics, r.metrics = nm, c_metrics + j * nm
                for k, (kind, body, node) in enumerate(self.metrics):
                    r.metrics[k].kind, r.metrics[k].body, r.metrics[k].node = kind, body, node
                r.history_every, r.history_capacity = self.spec["history_every"], S
                if S:
                    r.history_t, r.history_q, r.history_u = (task.keep(ffi.from_buffer("double[]", out[name][j]))
                                                             for name in ("history_t", "history_q", "history_u"))
                r.scratch = scratch
        except BaseException:
            task.release()
            raise
        return task


class _Task:
    """A task's runs between their preparation and their results: the rows (store.py's columns, the
    C side writing the final states and histories into them), the sdc_run of each run (a run whose
    model is NULL is not simulated), their control laws, and what C points into."""

    def __init__(self, campaign, n):
        c, S = campaign, campaign.history_length
        self.campaign, self.n = c, n
        self.out = {"status": np.full(n, OK, dtype=np.int8), "message": np.full(n, "", dtype=object),
                    "params": np.empty((n, len(c.parameters))), "metrics": np.full((n, len(c.metrics)), np.nan),
                    "q": np.tile(c.q_reference, (n, 1)), "u": np.zeros((n, c.nv))}
        if S:
            self.out["history_t"] = np.full((n, S), np.nan)
            self.out["history_q"] = np.full((n, S, c.nq), np.nan)
            self.out["history_u"] = np.full((n, S, c.nv), np.nan)
        self.runs = ffi.new("sdc_run[]", n)
        self.controls = [None] * n
        self.status = ffi.new("int[]", n)
        self.errs = ffi.new("sd_error[]", n)
        self._kept = []

    def keep(self, obj):
        """obj, kept alive as long as the task (C points into it)."""
        self._kept.append(obj)
        return obj

    def simulate(self):
        """The runs' simulations, one call into C."""
        lib.sdc_simulate_task(self.runs, self.n, self.campaign.options, ffi.from_buffer("double[]", self.out["q"]),
                              ffi.from_buffer("double[]", self.out["u"]), self.status, self.errs)

    def results(self):
        """The rows, each simulated run's metrics and failure read."""
        c, out = self.campaign, self.out
        nm = len(c.metrics)
        for j in range(self.n):
            r, control = self.runs[j], self.controls[j]
            if r.model == ffi.NULL:
                continue
            if control is not None and control.exc is not None:
                self.fail(j, f"controller {c.spec['controller']}: {control.exc!r}")
            elif self.status[j] != lib.SD_OK:
                self.fail(j, _text(self.errs[j].message))
            else:
                out["metrics"][j] = [r.metrics[k].value for k in range(nm)]
        return out

    def fail(self, j, message):
        """Run j failed with message: its final state NaN, its model released (not simulated)."""
        out = self.out
        out["status"][j], out["message"][j] = FAILED, message
        out["q"][j] = out["u"][j] = np.nan
        self._release(self.runs[j])

    def release(self):
        for j in range(self.n):
            self._release(self.runs[j])

    @staticmethod
    def _release(r):
        if r.data != ffi.NULL:
            lib.sd_data_free(r.data)
            r.data = ffi.NULL
        if r.model != ffi.NULL:
            lib.sd_model_free(r.model)
            r.model = ffi.NULL


class _Control:
    """A Python control law called from C: tau += law(t, q, u); an exception stops the run."""

    def __init__(self, law, nq, nv):
        self.law, self.nq, self.nv, self.exc = law, nq, nv, None


@ffi.def_extern()
def sdc_control_callback(user, t, q, u, tau):
    c = ffi.from_handle(user)
    if c.exc is not None:
        return
    try:
        qa = np.frombuffer(ffi.buffer(q, 8 * c.nq), dtype=np.float64)
        ua = np.frombuffer(ffi.buffer(u, 8 * c.nv), dtype=np.float64)
        out = np.frombuffer(ffi.buffer(tau, 8 * c.nv), dtype=np.float64)
        out += np.asarray(c.law(t, qa, ua), dtype=np.float64)
    except Exception as exc:  # noqa: BLE001 - reported as the run's failure
        c.exc = exc


# ---------------------------------------------------------------- tasks

_CAMPAIGNS = {}  # per worker process: the campaign of each spec digest, its model loaded once


def campaign_for(spec):
    c = _CAMPAIGNS.get(spec["digest"])
    if c is None:
        c = _CAMPAIGNS[spec["digest"]] = Campaign(spec)
    return c


def run_task(spec, start, stop):
    """Runs start .. stop-1 of the campaign: a dict of arrays, one row per run (store.py's columns)."""
    return campaign_for(spec).run_task(start, stop)
