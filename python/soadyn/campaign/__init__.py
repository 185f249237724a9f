"""Monte Carlo campaigns: thousands of dispersed simulations of one model, on one machine or on a
Dask cluster (docs/campaigns.md).

    import soadyn.campaign
    result = soadyn.campaign.run("slew.yaml")                  # a local pool of processes
    result = soadyn.campaign.run("slew.yaml", client=client)   # a dask.distributed.Client
    print(result.table)                                        # each metric's percentiles
    result.runs                                                # one row per run (pandas)

A campaign is described by a YAML file (spec.py): the model file, the dispersions of its parameters
and initial state, the inputs, the integrator, the outputs, the number of runs and a seed. Its runs
go into a Zarr store (store.py); an interrupted campaign resumes from it. `soadyn campaign SPEC` and
`python3 -m soadyn.campaign SPEC` run the same thing from the command line.
"""
from .runner import Result, run
from .spec import SpecError, load
from .store import open_results

__all__ = ["run", "load", "open_results", "Result", "SpecError"]
