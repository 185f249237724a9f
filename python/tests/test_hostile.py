"""Hostile arguments the package must refuse rather than reinterpret: a path with a NUL (C would
read a shorter path: another file), a body index that is not an integer (int(1.5) picked body 1),
a Jacobian point that is not finite (reported as the Jacobian overflowing)."""
import os

import numpy as np
import pytest

import soadyn
from conftest import MODELS


def path(name):
    return os.path.join(MODELS, name)


def test_path_with_nul_is_refused():
    with pytest.raises(soadyn.ArgumentError, match="NUL"):
        soadyn.load(path("double_pendulum.urdf") + "\0.bak")


def test_body_index_must_be_an_integer():
    m = soadyn.load(path("double_pendulum.urdf"))
    q = np.zeros(m.nq)
    with pytest.raises(soadyn.ArgumentTypeError, match="not float 1.5"):
        m.jacobian(q, 1.5)
    with pytest.raises(soadyn.ArgumentTypeError, match="bool"):
        m.jacobian(q, True)
    assert np.array_equal(m.jacobian(q, np.int64(1)), m.jacobian(q, 1))


def test_jacobian_point_not_finite_is_named():
    m = soadyn.load(path("double_pendulum.urdf"))
    q = np.zeros(m.nq)
    with pytest.raises(soadyn.ArgumentError, match="point .* not finite"):
        m.jacobian(q, 1, (0.0, np.nan, 0.0))
    with pytest.raises(soadyn.ArgumentError, match="point .* not finite"):
        m.jacobian(q, 1, (np.inf, 0.0, 0.0))
