"""The campaign description file (YAML, read by PyYAML) and its checks, made before any run.

Every error names the file, the line and the item (`spec.yaml:14: dispersions: 'body.arm.mass': ...`).
What is checked here: the structure and types, the model file (it is loaded, so that every name -
body, joint, coordinate, flexible mode - is checked against it), the distributions (parameters
that give them a support), and the support of each dispersed parameter against what the parameter
may hold (a mass, a damping, a frequency >= 0): a normal distribution on a mass is refused, since
some run would get a negative one. What depends on the drawn values together (an inertia bound by
its mass, a loop that cannot close) is checked by the C library in the run itself, which then fails
alone with the library's message. See docs/campaigns.md for the format.
"""
import hashlib
import json
import math
import os

import yaml

INTEGRATORS = ("rk4", "cvode-bdf", "cvode-adams")
HOWS = ("value", "scale", "offset")
DISTRIBUTIONS = ("uniform", "normal", "truncnormal")
METRIC_KINDS = ("max_node_deflection", "max_joint_force", "max_joint_moment", "energy_drift", "closure_residual")
# A truncated normal drawn by rejection: refused when it keeps less than this of the normal's mass.
MIN_TRUNCATED_MASS = 1e-3


class SpecError(ValueError):
    """A campaign description that cannot run; the message names file:line and the item."""


# ---------------------------------------------------------------- YAML with line numbers


class _Mapping(dict):
    """A YAML mapping that remembers its own line and each key's."""
    line = 0
    key_lines = None


class _Sequence(list):
    line = 0


class _Loader(yaml.SafeLoader):
    pass


def _construct_mapping(loader, node):
    out = _Mapping()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, (str, int, float, bool)):
            raise SpecError(f"{loader.name}:{key_node.start_mark.line + 1}: a key must be a plain value")
        if key in out:
            raise SpecError(f"{loader.name}:{key_node.start_mark.line + 1}: '{key}' is given twice "
                            f"(first at line {out.key_lines[key]})")
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
    return out


def _construct_sequence(loader, node):
    out = _Sequence(loader.construct_object(child, deep=True) for child in node.value)
    out.line = node.start_mark.line + 1
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


class _Where:
    """file:line prefixes for messages."""

    def __init__(self, path):
        self.path = path

    def fail(self, line, what):
        raise SpecError(f"{self.path}:{line}: {what}")

    def line_of(self, mapping, key):
        return mapping.key_lines.get(key, mapping.line) if isinstance(mapping, _Mapping) else 0


def _number(where, line, what, x, *, integer=False, positive=False, nonnegative=False):
    if isinstance(x, bool) or not isinstance(x, (int, float)) or (integer and not isinstance(x, int)):
        where.fail(line, f"{what}: expected {'an integer' if integer else 'a number'}, got {x!r}")
    x = int(x) if integer else float(x)
    if not math.isfinite(x):
        where.fail(line, f"{what}: {x} is not finite")
    if positive and not x > 0:
        where.fail(line, f"{what}: {x} must be > 0")
    if nonnegative and not x >= 0:
        where.fail(line, f"{what}: {x} must be >= 0")
    return x


def _mapping(where, line, what, x, allowed, required=()):
    if not isinstance(x, dict):
        where.fail(line, f"{what}: expected a mapping, got {x!r}")
    for key in x:
        if key not in allowed:
            where.fail(where.line_of(x, key), f"{what}: unknown item '{key}' (expected one of: {', '.join(allowed)})")
    for key in required:
        if key not in x:
            where.fail(line, f"{what}: '{key}' is missing")
    return x


# ---------------------------------------------------------------- distributions


def _normal_cdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def parse_distribution(where, line, what, entry):
    """(name, parameters, support (lo, hi)) of a dispersion entry's one distribution key."""
    found = [k for k in DISTRIBUTIONS if k in entry]
    if len(found) != 1:
        where.fail(line, f"{what}: give exactly one distribution ({', '.join(DISTRIBUTIONS)}), got "
                         f"{', '.join(found) if found else 'none'}")
    name = found[0]
    value, vline = entry[name], where.line_of(entry, name)
    if name == "uniform":
        if not isinstance(value, list) or len(value) != 2:
            where.fail(vline, f"{what}: uniform: expected [low, high], got {value!r}")
        lo, hi = (_number(where, vline, f"{what}: uniform", v) for v in value)
        if not lo < hi:
            where.fail(vline, f"{what}: uniform [{lo}, {hi}] has no support (low must be < high)")
        return name, {"low": lo, "high": hi}, (lo, hi)
    keys = ("mean", "std") if name == "normal" else ("mean", "std", "low", "high")
    _mapping(where, vline, f"{what}: {name}", value, keys, keys)
    p = {k: _number(where, where.line_of(value, k), f"{what}: {name}: {k}", value[k]) for k in keys}
    if not p["std"] > 0:
        where.fail(vline, f"{what}: {name} with std {p['std']} has no spread (std must be > 0)")
    if name == "normal":
        return name, p, (-math.inf, math.inf)
    if not p["low"] < p["high"]:
        where.fail(vline, f"{what}: truncnormal [{p['low']}, {p['high']}] has no support (low must be < high)")
    mass = _normal_cdf((p["high"] - p["mean"]) / p["std"]) - _normal_cdf((p["low"] - p["mean"]) / p["std"])
    if not mass >= MIN_TRUNCATED_MASS:
        where.fail(vline, f"{what}: truncnormal keeps {mass:.3g} of the normal's probability in [{p['low']}, "
                          f"{p['high']}] (at least {MIN_TRUNCATED_MASS} needed): no usable support; use uniform")
    return name, p, (p["low"], p["high"])


def draw(rng, name, p):
    """One value of a distribution from a numpy Generator (rejection for the truncated normal, whose
    acceptance the spec's check bounds below)."""
    if name == "uniform":
        return p["low"] + (p["high"] - p["low"]) * rng.random()
    if name == "normal":
        return p["mean"] + p["std"] * rng.standard_normal()
    while True:
        x = p["mean"] + p["std"] * rng.standard_normal()
        if p["low"] <= x <= p["high"]:
            return x


# ---------------------------------------------------------------- the spec


def load(path):
    """The checked campaign description of the YAML file `path` (a dict, plain values only, so that
    it travels to workers as it is). Raises SpecError."""
    path = os.path.abspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise SpecError(f"{path}: cannot read the campaign description ({exc.strerror})") from exc
    return parse(text, path)


def parse(text, path="<spec>", base_dir=None):
    """As load(), from the text of a description; relative paths are taken from base_dir (default:
    the folder of `path`)."""
    where = _Where(path)
    loader = _Loader(text)
    loader.name = path
    try:
        root = loader.get_single_data()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise SpecError(f"{path}:{mark.line + 1 if mark else 0}: not valid YAML: "
                        f"{getattr(exc, 'problem', None) or exc}") from exc
    finally:
        loader.dispose()
    top = ("model", "runs", "seed", "task_size", "simulation", "inputs", "dispersions", "outputs")
    _mapping(where, 1, "campaign", root, top, ("model", "runs", "seed", "simulation"))
    line = lambda key: where.line_of(root, key)  # noqa: E731
    base_dir = base_dir or os.path.dirname(os.path.abspath(path))
    spec = {"spec_file": path}

    model = root["model"]
    if not isinstance(model, str) or not model:
        where.fail(line("model"), f"model: expected a file name, got {model!r}")
    spec["model"] = os.path.normpath(os.path.join(base_dir, model))
    if not os.path.isfile(spec["model"]):
        where.fail(line("model"), f"model: no file {spec['model']}")
    spec["runs"] = _number(where, line("runs"), "runs", root["runs"], integer=True, positive=True)
    spec["seed"] = _number(where, line("seed"), "seed", root["seed"], integer=True, nonnegative=True)
    spec["task_size"] = _number(where, line("task_size"), "task_size", root.get("task_size", 100), integer=True,
                                positive=True)

    sim = _mapping(where, line("simulation"), "simulation", root["simulation"],
                   ("integrator", "dt", "duration", "sample_every", "rtol", "atol"), ("dt", "duration"))
    sline = lambda key: where.line_of(sim, key)  # noqa: E731
    integrator = sim.get("integrator", "rk4")
    if integrator not in INTEGRATORS:
        where.fail(sline("integrator"), f"simulation: integrator: {integrator!r} is not one of {', '.join(INTEGRATORS)}")
    spec["simulation"] = {
        "integrator": integrator,
        "dt": _number(where, sline("dt"), "simulation: dt", sim["dt"], positive=True),
        "duration": _number(where, sline("duration"), "simulation: duration", sim["duration"], positive=True),
        "sample_every": _number(where, sline("sample_every"), "simulation: sample_every", sim.get("sample_every", 1),
                                integer=True, positive=True),
        "rtol": _number(where, sline("rtol"), "simulation: rtol", sim.get("rtol", 1e-8), positive=True),
        "atol": _number(where, sline("atol"), "simulation: atol", sim.get("atol", 1e-10), positive=True),
    }
    if spec["simulation"]["dt"] > spec["simulation"]["duration"]:
        where.fail(sline("dt"), "simulation: dt is longer than the duration")

    inputs = _mapping(where, line("inputs"), "inputs", root.get("inputs", {}), ("tau", "controller", "gains"))
    tau = _mapping(where, where.line_of(inputs, "tau"), "inputs: tau", inputs.get("tau", {}),
                   allowed=list(inputs.get("tau", {}) or []))
    spec["tau"] = {str(j): (_number(where, where.line_of(tau, j), f"inputs: tau: {j}", v), where.line_of(tau, j))
                   for j, v in tau.items()}
    controller = inputs.get("controller")
    if controller is not None and (not isinstance(controller, str) or controller.count(":") != 1):
        where.fail(where.line_of(inputs, "controller"), f"inputs: controller: expected 'module:function', got {controller!r}")
    spec["controller"] = controller
    spec["lines"] = {"controller": where.line_of(inputs, "controller")}
    gains = _mapping(where, where.line_of(inputs, "gains"), "inputs: gains", inputs.get("gains", {}),
                     allowed=list(inputs.get("gains", {}) or []))
    spec["gains"] = {str(k): _number(where, where.line_of(gains, k), f"inputs: gains: {k}", v) for k, v in gains.items()}
    if spec["gains"] and not controller:
        where.fail(where.line_of(inputs, "gains"), "inputs: gains are given to a controller, and there is none")

    disp = root.get("dispersions", {}) or {}
    _mapping(where, line("dispersions"), "dispersions", disp, allowed=list(disp))
    spec["dispersions"] = []
    for name, entry in disp.items():
        dline = where.line_of(disp, name)
        what = f"dispersions: '{name}'"
        _mapping(where, dline, what, entry, ("how",) + DISTRIBUTIONS)
        how = entry.get("how", "value")
        if how not in HOWS:
            where.fail(dline, f"{what}: how: {how!r} is not one of {', '.join(HOWS)}")
        dist, params, support = parse_distribution(where, dline, what, entry)
        spec["dispersions"].append({"name": str(name), "how": how, "distribution": dist, "parameters": params,
                                    "support": list(support), "line": dline})

    out = _mapping(where, line("outputs"), "outputs", root.get("outputs", {}) or {},
                   ("final_state", "history_every", "metrics"))
    spec["final_state"] = bool(out.get("final_state", True))
    spec["history_every"] = _number(where, where.line_of(out, "history_every"), "outputs: history_every",
                                    out.get("history_every", 0), integer=True, nonnegative=True)
    metrics = out.get("metrics", {}) or {}
    _mapping(where, where.line_of(out, "metrics"), "outputs: metrics", metrics, allowed=list(metrics))
    spec["metrics"] = []
    for name, m in metrics.items():
        mline = where.line_of(metrics, name)
        what = f"outputs: metrics: '{name}'"
        _mapping(where, mline, what, m, ("kind", "body", "node", "joint"), ("kind",))
        kind = m["kind"]
        if kind not in METRIC_KINDS:
            where.fail(mline, f"{what}: kind {kind!r} is not one of {', '.join(METRIC_KINDS)}")
        needs = {"max_node_deflection": ("body", "node"), "max_joint_force": ("joint",),
                 "max_joint_moment": ("joint",)}.get(kind, ())
        _mapping(where, mline, what, m, ("kind",) + needs, ("kind",) + needs)
        item = {"name": str(name), "kind": kind, "line": mline}
        for key in needs:
            item[key] = (_number(where, mline, f"{what}: node", m[key], integer=True, nonnegative=True)
                         if key == "node" else str(m[key]))
        spec["metrics"].append(item)
    spec["digest"] = digest(spec)
    return spec


def digest(spec):
    """What identifies a campaign's results: everything in the spec but where it was written, and the
    model file's content."""
    def without_lines(x):  # where an item is written does not change what it means
        if isinstance(x, dict):
            return {k: without_lines(v) for k, v in x.items() if k != "line"}
        if isinstance(x, (list, tuple)):
            return [without_lines(v) for v in x]
        return x

    # nor how runs are grouped into tasks (the store checks the task size on its own)
    keep = {k: without_lines(v) for k, v in spec.items() if k not in ("spec_file", "digest", "task_size", "lines")}
    keep["tau"] = {j: v[0] for j, v in spec["tau"].items()}
    h = hashlib.sha256(json.dumps(keep, sort_keys=True, default=str).encode())
    with open(spec["model"], "rb") as f:
        h.update(f.read())
    return h.hexdigest()
