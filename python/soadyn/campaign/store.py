"""The campaign's results: a Zarr directory store (python3-zarr), one row per run.

Layout (every array's first axis is the run index i, chunked by the task size, so that one task
writes whole chunks and nothing else):
    status           int8      0 not run yet, 1 ok, 2 failed
    message          str       the failure's message ("" for a run that went well)
    params           float64   (N, P): the drawn parameter values, columns in attrs["params"]
    metrics          float64   (N, M): the metrics, columns in attrs["metrics"] (NaN for a failed run)
    q, u             float64   (N, nq), (N, nv): the final state (NaN for a failed run), unless
                               outputs: final_state is false
    history_t, history_q, history_u
                     float64   (N, S), (N, S, nq), (N, S, nv): the histories, when asked for
The second table the issue asks for is the history arrays; attrs hold the spec (as checked), its
digest, the labels of q and u.

Crash safety: Zarr writes each chunk to a temporary file and renames it into place, so a chunk is
whole or absent. A task writes its chunks of every array first and its status chunk last: a task
whose status chunk is there is complete, and a campaign started again on the store runs exactly the
tasks that are not - none lost, none duplicated (run i always lands in row i).
"""
import os

import numcodecs
import numpy as np
import zarr

from .spec import SpecError

_ROW_ARRAYS = ("params", "metrics", "q", "u", "history_t", "history_q", "history_u")


class Store:
    def __init__(self, group, path):
        self.group, self.path = group, path
        self.runs = group.attrs["runs"]
        self.task_size = group.attrs["task_size"]

    @classmethod
    def open(cls, path, spec, campaign, fresh=False):
        """The store at `path` for this campaign: created when absent (or when fresh), else reopened
        after checking that it holds the same campaign (spec digest, task size)."""
        exists = os.path.exists(os.path.join(path, ".zgroup"))
        if exists and not fresh:
            group = zarr.open_group(path, mode="r+")
            held = group.attrs.get("digest")
            if held != spec["digest"]:
                raise SpecError(f"{path}: the store holds another campaign (spec or model changed since it was "
                                f"written); give another output, or --fresh to start it anew")
            if group.attrs.get("task_size") != spec["task_size"]:
                raise SpecError(f"{path}: the store was written with task_size {group.attrs.get('task_size')}, "
                                f"the spec asks for {spec['task_size']}; keep the same to resume")
            return cls(group, path)
        group = zarr.open_group(path, mode="w")
        n, t = spec["runs"], spec["task_size"]
        c = campaign
        group.attrs.update({
            "format": "soadyn-campaign", "version": 1, "digest": spec["digest"], "runs": n, "task_size": t,
            "spec": {k: v for k, v in spec.items() if k != "tau"} | {"tau": {j: v[0] for j, v in spec["tau"].items()}},
            "params": [p.name for p in c.parameters], "metrics": [m["name"] for m in spec["metrics"]],
            "coordinates": c.coordinates, "speeds": c.speeds,
        })
        group.zeros("status", shape=(n,), chunks=(t,), dtype="i1")
        group.empty("message", shape=(n,), chunks=(t,), dtype=object, object_codec=numcodecs.VLenUTF8())
        shapes = {"params": (len(c.parameters),), "metrics": (len(spec["metrics"]),)}
        if spec["final_state"]:
            shapes.update({"q": (c.nq,), "u": (c.nv,)})
        if c.history_length:
            S = c.history_length
            shapes.update({"history_t": (S,), "history_q": (S, c.nq), "history_u": (S, c.nv)})
        for name, tail in shapes.items():
            group.full(name, np.nan, shape=(n,) + tail, chunks=(t,) + tuple(max(x, 1) for x in tail), dtype="f8")
        return cls(group, path)

    def tasks(self):
        """(start, stop) of every task of the campaign."""
        return [(s, min(s + self.task_size, self.runs)) for s in range(0, self.runs, self.task_size)]

    def done(self):
        """Which runs are complete (a boolean array)."""
        return self.group["status"][:] != 0

    def pending_tasks(self):
        done = self.done()
        return [(s, e) for s, e in self.tasks() if not done[s:e].all()]

    def write(self, start, stop, result):
        """One task's rows; its status last (the commit point, see the module's comment)."""
        g = self.group
        g["message"][start:stop] = result["message"]
        for name in _ROW_ARRAYS:
            if name in result and name in g:
                g[name][start:stop] = result[name]
        g["status"][start:stop] = result["status"]


def open_results(path):
    """The results of a campaign store as pandas DataFrames: (runs, histories) - runs holds one row per
    run (status, message, params, metrics, final q and u under their labels); histories is None or a
    dict of the history arrays."""
    import pandas as pd

    g = zarr.open_group(path, mode="r")
    a = g.attrs
    status = g["status"][:]
    frame = {"status": np.where(status == 1, "ok", np.where(status == 2, "failed", "not run")),
             "message": g["message"][:]}
    for j, name in enumerate(a["params"]):
        frame[name] = g["params"][:, j]
    for j, name in enumerate(a["metrics"]):
        frame[name] = g["metrics"][:, j]
    if "q" in g:  # outputs: final_state
        for j, name in enumerate(a["coordinates"]):
            frame[f"q.{name}"] = g["q"][:, j]
        for j, name in enumerate(a["speeds"]):
            frame[f"u.{name}"] = g["u"][:, j]
    runs = pd.DataFrame(frame)
    runs.index.name = "run"
    histories = {k: g[k] for k in ("history_t", "history_q", "history_u") if k in g} or None
    return runs, histories
