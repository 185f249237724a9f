"""Run one pytest file for ctest: `run_pytest.py [--shared] FILE`. With --shared the file reads the
robot models of ../shared/models (SOADYN_SHARED_MODELS): when that folder is absent it says so and
exits 77, which ctest reports as skipped."""
import os
import sys

import pytest


def main():
    args = sys.argv[1:]
    if args and args[0] == "--shared":
        args = args[1:]
        shared = os.environ.get("SOADYN_SHARED_MODELS", "")
        if not os.path.isdir(shared):
            print(f"skipped: the shared models folder {shared!r} is absent")
            return 77
    return pytest.main(["-q", "-p", "no:cacheprovider"] + args)


# Guarded: a process started by multiprocessing's "spawn" (Dask's workers in tests/test_campaign.py)
# imports this main module again, and must not run the tests once more.
if __name__ == "__main__":
    sys.exit(main())
