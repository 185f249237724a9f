"""python3 -m soadyn.campaign SPEC [options]: run a campaign from the command line (what
`soadyn campaign` executes). Exit status as the soadyn command's: 0 ok, 1 usage, 2 a spec or model
refused (file:line), 3 a run-time failure (the store, workers that keep dying), 130 interrupted."""
import argparse
import sys

from . import runner
from .spec import SpecError


def main(argv=None):
    p = argparse.ArgumentParser(prog="soadyn campaign",
                                description="Run a Monte Carlo campaign described by a YAML file "
                                            "(docs/campaigns.md) and print each metric's percentiles.")
    p.add_argument("spec", help="the campaign description (YAML)")
    p.add_argument("--output", help="the Zarr store of the results (default: SPEC without .yaml, + .zarr); "
                                    "an existing store of the same campaign is resumed")
    p.add_argument("--fresh", action="store_true", help="start anew even if the store holds finished runs")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on this Dask scheduler (tcp://host:8786); default: a local pool of processes")
    p.add_argument("--workers", type=int, help="local pool size (default: the number of processors)")
    p.add_argument("--task-size", type=int, help="runs per task (default: the spec's task_size, else 100)")
    p.add_argument("--plot", metavar="PNG", help="write each metric's histogram to this PNG")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    a = p.parse_args(argv)
    if a.workers is not None and a.workers < 1:
        p.error("--workers must be >= 1")
    try:
        runner.run(a.spec, output=a.output, scheduler=a.scheduler, workers=a.workers, task_size=a.task_size,
                   fresh=a.fresh, progress=not a.no_progress, plot=a.plot)
    except SpecError as exc:
        print(f"soadyn campaign: {exc}", file=sys.stderr)
        return 2
    except (OSError, RuntimeError, MemoryError) as exc:  # a store that cannot be written, workers that die
        print(f"soadyn campaign: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("soadyn campaign: interrupted; the finished tasks are in the store, run again to resume",
              file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
