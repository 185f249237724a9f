"""What a campaign shows when it ends: the percentiles of each metric over the runs that went well,
the runs that failed with their messages, and a figure of each metric's distribution."""
import numpy as np

# 0.135 and 99.865: the 3-sigma tails of a normal, "works in 99.7% of cases"
PERCENTILES = (0.135, 2.5, 50.0, 97.5, 99.865)


def summary_table(runs, metric_names):
    """A pandas DataFrame, one row per metric: runs counted, mean, min, the PERCENTILES, max."""
    import pandas as pd

    ok = runs[runs["status"] == "ok"]
    rows = {}
    for name in metric_names:
        x = ok[name].to_numpy(dtype=float)
        x = x[np.isfinite(x)]
        row = {"runs": len(x)}
        if len(x):
            row.update({"mean": x.mean(), "min": x.min()})
            row.update({f"p{p:g}": v for p, v in zip(PERCENTILES, np.percentile(x, PERCENTILES))})
            row["max"] = x.max()
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def failures(runs):
    """The failed runs: their index and message."""
    return runs.loc[runs["status"] == "failed", ["message"]]


def format_summary(runs, metric_names, max_failures=20):
    """The summary as text: counts, the percentile table, the failed runs (the first max_failures)."""
    n_ok = int((runs["status"] == "ok").sum())
    failed = failures(runs)
    not_run = int((runs["status"] == "not run").sum())
    lines = [f"runs: {len(runs)}, ok {n_ok}, failed {len(failed)}" + (f", not run {not_run}" if not_run else "")]
    if metric_names:
        table = summary_table(runs, metric_names)
        lines += ["", "metric percentiles over the runs that went well:",
                  table.to_string(float_format=lambda v: f"{v:.6g}")]
    if len(failed):
        lines += ["", f"failed runs ({len(failed)}):"]
        for i, message in failed["message"].head(max_failures).items():
            lines.append(f"  run {i}: {message}")
        if len(failed) > max_failures:
            lines.append(f"  ... and {len(failed) - max_failures} more (the store's 'message' column has them all)")
    return "\n".join(lines)


def plot(runs, metric_names, path, title):
    """A PNG of each metric's histogram over the runs that went well, with its median and the
    0.135 / 99.865 percentiles marked (matplotlib, Agg). Written to a temporary name, then renamed."""
    import os

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(metric_names)
    if not names:
        raise ValueError("the campaign has no metrics to plot")
    cols = min(3, len(names))
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    ok = runs[runs["status"] == "ok"]
    for ax, name in zip(axes.flat, names):
        x = ok[name].to_numpy(dtype=float)
        x = x[np.isfinite(x)]
        ax.set_title(name, fontsize=10)
        if len(x) == 0:
            ax.text(0.5, 0.5, "no run went well", ha="center", va="center", transform=ax.transAxes)
            continue
        ax.hist(x, bins=min(50, max(5, len(x) // 10)), color="#4a78b0")
        for p, style in ((0.135, ":"), (50.0, "-"), (99.865, ":")):
            ax.axvline(np.percentile(x, p), color="#c03030", linestyle=style, linewidth=1)
        ax.set_ylabel("runs")
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    tmp = f"{path}.partial.png"
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)
