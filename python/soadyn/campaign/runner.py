"""Running a campaign: its tasks (task_size runs each) on a local pool of processes or on a Dask
cluster, each task's rows written into the store as it completes, a progress bar, the summary.

Faults: a run that fails is a row with its message (engine.py). A worker process that dies: on Dask
the scheduler gives its tasks to another worker (and retries a task twice more); in the local pool
the pool is started again and the tasks that had not completed are submitted again (three times at
most). Either way a task's rows are written once it has completed, by this process alone, into rows
fixed by the run index, so nothing is lost or duplicated; an interrupted campaign started again on
its store runs the tasks not yet there (store.py).
"""
import concurrent.futures as cf
import multiprocessing
import os
import sys
import time
import uuid
from concurrent.futures.process import BrokenProcessPool

from . import engine, report
from . import spec as specmod
from .store import Store, open_results

# Pool restarts after workers died, beyond which the campaign stops (a task that kills its worker
# every time would otherwise loop).
MAX_POOL_RESTARTS = 3


class Result:
    """A finished (or resumed and finished) campaign: the store's path, its runs as a DataFrame
    (store.open_results), the percentile table, the failed runs, the summary text."""

    def __init__(self, path, metric_names):
        self.path = path
        self.runs, self.histories = open_results(path)
        self.metric_names = list(metric_names)
        self.table = report.summary_table(self.runs, self.metric_names)
        self.failed = report.failures(self.runs)
        self.summary = report.format_summary(self.runs, self.metric_names)

    def __repr__(self):
        return f"<soadyn campaign {self.path}: {len(self.runs)} runs, {len(self.failed)} failed>"


def _local_pool(workers, spec, tasks, on_result):
    """The tasks on `workers` forked processes; a pool broken by a dying worker is started again."""
    pending = list(tasks)
    restarts = 0
    context = multiprocessing.get_context("fork")
    while pending:
        broken = False
        pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=context)
        try:
            futures = {pool.submit(engine.run_task, spec, s, e): (s, e) for s, e in pending}
            for f in cf.as_completed(futures):
                try:
                    result = f.result()
                except BrokenProcessPool:
                    broken = True
                    continue
                on_result(*futures[f], result)
                pending.remove(futures[f])
        except BaseException:  # Ctrl-C, a store that cannot be written: stop now, not after the queued tasks
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        if broken and pending:
            restarts += 1
            if restarts > MAX_POOL_RESTARTS:
                raise RuntimeError(f"campaign: worker processes died {restarts} times; tasks not done: "
                                   f"{', '.join(f'runs {s}-{e - 1}' for s, e in pending[:5])}"
                                   f"{' ...' if len(pending) > 5 else ''}")


def _dask(client, spec, tasks, on_result):
    """The tasks on a Dask cluster; the scheduler reruns the tasks of a worker that dies."""
    from distributed import as_completed

    token = uuid.uuid4().hex[:8]
    futures, task_of = [], {}
    for s, e in tasks:
        f = client.submit(engine.run_task, spec, s, e, key=f"soadyn-campaign-{spec['digest'][:12]}-{token}-{s}",
                          retries=2, pure=False)
        futures.append(f)
        task_of[f.key] = (s, e)
    try:
        for f, result in as_completed(futures, with_results=True):
            on_result(*task_of[f.key], result)
    except BaseException:
        client.cancel(futures)
        raise


def run(spec, client=None, *, output=None, scheduler=None, workers=None, task_size=None, fresh=False,
        progress=True, plot=None, echo=True):
    """Run the campaign `spec` (a YAML file name, or a dict from spec.load) and return a Result.

    client: a dask.distributed.Client to run on; scheduler: the address of one to connect to (used
    when client is None); neither: a local pool of `workers` processes (default: the processors).
    output: the Zarr store (default: beside the spec, SPEC_STEM.zarr); an existing store of the same
    campaign is resumed, unless fresh. task_size overrides the spec's. progress: a bar on stderr.
    plot: a PNG of the metrics' distributions. echo: print the summary to stdout."""
    if not isinstance(spec, dict):
        spec = specmod.load(spec)
    if task_size is not None:
        if not (isinstance(task_size, int) and task_size >= 1):
            raise specmod.SpecError(f"task size {task_size!r}: expected an integer >= 1")
        spec = dict(spec, task_size=task_size)
    campaign = engine.campaign_for(spec)  # every name checked against the model, before any run
    if plot and not spec["metrics"]:
        raise specmod.SpecError(f"{spec['spec_file']}: a plot of the metrics' distributions is asked for, and "
                                f"outputs: metrics has none")
    if output is None:
        output = os.path.splitext(spec["spec_file"])[0] + ".zarr"
    store = Store.open(output, spec, campaign, fresh=fresh)
    tasks = store.pending_tasks()
    done = store.done()
    metric_names = [m["name"] for m in spec["metrics"]]

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=store.runs, initial=int(done.sum()), unit="run", file=sys.stderr, dynamic_ncols=True,
                   desc="campaign")
    failed = [int((store.group["status"][:] == engine.FAILED).sum())]

    def on_result(start, stop, result):
        store.write(start, stop, result)
        failed[0] += int((result["status"] == engine.FAILED).sum())
        if bar is not None:
            bar.set_postfix(failed=failed[0], refresh=False)
            bar.update(stop - start)

    started = time.monotonic()
    own_client = None
    try:
        if client is None and scheduler:
            from distributed import Client

            client = own_client = Client(scheduler)
        if client is not None:
            _dask(client, spec, tasks, on_result)
        elif tasks:
            _local_pool(workers or os.cpu_count() or 1, spec, tasks, on_result)
    finally:
        if bar is not None:
            bar.close()
        if own_client is not None:
            own_client.close()
    result = Result(output, metric_names)
    if plot:
        report.plot(result.runs, metric_names, plot,
                    f"{os.path.basename(spec['spec_file'])}: {len(result.runs)} runs, seed {spec['seed']}")
    if echo:
        print(result.summary)
        print(f"\nstore: {output} ({time.monotonic() - started:.1f} s)")
    return result
