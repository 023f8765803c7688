"""How much room prod's programs leave: for each row of a prod table (prod_collect.py's), the
simulated speed-up over the heuristic that the LP bound would give (`cpsat.upper_bound`: no
fragmentation, no copy engine, so an upper bound, loose where a few tensors are large against
memory), beside prod's per seed and the share of that room prod took. On imported programs the
simulated latency is the all-slow latency less the return (docs/simulator.md), so a return maps to
a speed-up exactly. Run: python prod_headroom.py prod.md"""
import statistics
import sys

from jaxmmap.core.io import open_problem
from jaxmmap.core.simulator import speedup, step_latency
from jaxmmap.solvers.cpsat import upper_bound

bound, taken = [], []
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if not line.startswith("| ") or "@" not in cells[0]:
        continue
    name, heuristic, prods = cells[0], float(cells[1]), [float(c) for c in cells[2::5]]
    problem = open_problem("suite:" + name)
    slow = float(step_latency(problem).sum())
    room = speedup(slow - heuristic, slow - float(upper_bound(problem)))
    got = [speedup(slow - heuristic, slow - p) for p in prods]
    bound.append(room)
    taken.append(statistics.mean(got))
    print(f"{name:34} {problem.num_buffers:6d} buffers  LP bound {room:+7.3f}%  prod "
          + " ".join(f"{g:+.3f}%" for g in got) + f"  share {statistics.mean(got) / room:.2f}")
print(f"mean: LP bound {statistics.mean(bound):+.3f}%, prod {statistics.mean(taken):+.3f}% (mean of the seeds)")
