"""What a training run shows people: the progress bar's last known loss (where a resumed run
began: tests/test_robustness.py's resumed run)."""

import math

from jaxmmap.agent.loop import _show


class _Bar:
    """The two calls `_show` makes on a tqdm bar."""

    n = 0.0
    postfix = ""

    def update(self, k):
        self.n += k

    def set_postfix_str(self, text, refresh=True):
        self.postfix = text


def test_the_bar_shows_the_last_known_loss_not_a_dash():
    rows = [{"iteration": 10, "mean_return": 1.0, "loss": 0.25},
            {"iteration": 20, "mean_return": 1.5, "loss": math.nan}]  # a chunk without a learner step
    bar = _Bar()
    _show(bar, 0.5, rows[-1], 2.0, rows)
    assert bar.postfix == "it=20 ret=1.5 best=2 loss=0.25" and bar.n == 50.0
    _show(bar, 0.75, rows[0], 2.0, rows[:1] + [{"loss": None}])
    assert bar.postfix.endswith("loss=0.25") and bar.n == 75.0
    _show(bar, 1.0, rows[-1], -math.inf, [rows[-1]])  # no loss yet, no game won yet
    assert bar.postfix == "it=20 ret=1.5 best=- loss=-"
