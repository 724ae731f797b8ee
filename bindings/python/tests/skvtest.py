"""Shared paths for the binding's tests (run by `make check T=python`)."""
import os
import unittest

SRC = os.environ.get("SKV_TEST_SRC_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BUILD = os.environ.get("SKV_TEST_BUILD_DIR") or os.path.join(SRC, "build")
SHARED = os.path.join(SRC, "..", "shared", "data")
DGX2 = os.path.join(SHARED, "topologies", "nvidia-dgx2.xml")
OPENB = os.path.join(SHARED, "traces", "openb")
PHILLY = os.path.join(SHARED, "traces", "philly", "philly_vc_subset.csv")


def need_file(path):
    """Skip (with the reason printed) when a data file is missing."""
    if not os.path.exists(path):
        raise unittest.SkipTest(f"SKIP: needs {path}")


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
