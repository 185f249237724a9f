"""Controllers for tests/test_campaign.py, imported by the campaign's workers by name."""
import time

import numpy as np


def slow_zero(gains):
    """A control law of zero torque whose making takes gains['delay'] seconds: each run of a campaign
    lasts long enough for a test to act while the campaign is under way."""
    time.sleep(gains.get("delay", 0.0))
    return lambda t, q, u: np.zeros(len(u))


def pd_shoulder(gains):
    """tau_shoulder = kp (target - q_shoulder) - kd u_shoulder (speed 0 of the flexible arm)."""
    kp, kd, target = gains["kp"], gains["kd"], gains["target"]

    def law(t, q, u):
        tau = np.zeros(len(u))
        tau[0] = kp * (target - q[0]) - kd * u[0]
        return tau
    return law
