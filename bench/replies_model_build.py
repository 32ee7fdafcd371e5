#!/usr/bin/env python
"""Build time of the reply classifier's model (`python -m replies.model`, what `make run` waits for on a fresh
clone), against the serial build measured in the same run: the same code in one process, as every build ran
before the work was shared between processes. Reports wall time, CPU time (this process and its children) and
whether the two builds give the same model (same vocabularies and coefficients).

    .venv/bin/python bench/replies_model_build.py [--workers N] [--skip-serial]
"""

import argparse
import os
import pickle
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def cpu_seconds() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed_build(workers: int, folder: Path) -> tuple[float, float, Path]:
    from replies import model

    wall, cpu = time.perf_counter(), cpu_seconds()
    path = model.build(folder / model.model_path().name, workers=workers, out=sys.stdout)
    return time.perf_counter() - wall, cpu_seconds() - cpu, path


def same_model(a: Path, b: Path) -> bool:
    import numpy as np

    with open(a, "rb") as fa, open(b, "rb") as fb:
        x, y = pickle.load(fa), pickle.load(fb)  # noqa: S301 - our own artifacts, just built
    for head in ("intent", "language"):
        cx, cy = x[head].steps[-1][1], y[head].steps[-1][1]
        if not (np.array_equal(cx.coef_, cy.coef_) and np.array_equal(cx.intercept_, cy.intercept_)):
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    parser.add_argument("--skip-serial", action="store_true")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    with tempfile.TemporaryDirectory() as tmp:
        shared = Path(tmp) / "shared"
        shared.mkdir()
        wall, cpu, path = timed_build(args.workers, shared)
        print(f"build, {args.workers} processes: {wall:6.1f} s wall, {cpu:6.1f} s CPU")
        if args.skip_serial:
            return
        serial_dir = Path(tmp) / "serial"
        serial_dir.mkdir()
        swall, scpu, spath = timed_build(1, serial_dir)
        print(f"build, 1 process:  {swall:6.1f} s wall, {scpu:6.1f} s CPU")
        print(f"wall-time ratio {wall / swall:.2f}; the same model: {same_model(path, spath)}; "
              f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
