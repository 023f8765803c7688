"""What a training run shows people: the progress bar's last known loss, and where a resumed
run began (so that its summary counts this run's iterations, not the total)."""

import math

import pytest
from builders import PAD, RULES, expert_config, tiny

from jaxmmap.agent.loop import _show, fit


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


@pytest.mark.xdist_group("expert")
def test_a_resumed_run_says_where_it_began(tmp_path):
    problem, config = tiny(3), expert_config()
    options = dict(rules=RULES, padding=PAD, workdir=str(tmp_path / "run"), checkpoint_every=1)
    first = fit(problem, config, max_iterations=4, **options)
    assert first.resumed == (0, 0)
    again = fit(problem, config, max_iterations=8, **options)
    done = first.history[-1]
    assert again.resumed == (done["iteration"], sum(r["finished"] for r in first.history)) and done["iteration"] > 0
    assert again.history[-1]["iteration"] == 8  # the total; this run's share is 8 - resumed[0]
