"""An XLA-style heuristic: a simplified memory-space assignment (MSA).

XLA decides which buffers live in the alternate (fast) memory with a best-fit heap over buffer
intervals sorted by how memory-bound they are. This module follows that design in the game's
units (grid columns, supply ticks). Its result is an action per buffer with its own offsets and
copy intervals: a solution of the physical problem that the validator checks, as XLA's
assignment is in the paper. `mode="game"` replays the decisions in the JAX game instead (its
own placement rules), `mode="best"` returns the better of the two. docs/solvers.md says where
this departs from XLA.

Plan (`plan`):

1. **Order.** Work items are whole alias groups (all their tensors together, all or nothing, one
   offset) and unaliased tensors, sorted by estimated benefit per sqrt(size) (descending), then
   size, then live-range length. A latency-table buffer's benefit is the better of its gain
   alone and what it adds to the best completion of its table (`_potential`).
2. **Pins** (NoCopy of an output: the tensor lives in fast memory all its life, with no copy;
   only where the rules allow, `Discretized.pinnable`). A tensor is pinned where XLA would keep
   it in fast memory without evicting it: no gap between its uses, nor its life after the last
   one, longer than `max_overlap` copies (then the pin holds about what copying holds, and uses
   no supply). Otherwise it is also pinned if that places more than copying it (tried, then
   undone), or, in an alias group, if its output cannot be copied out.
3. **Per use, in time order: keep, prefetch or leave.** A use whose tensor is already in fast
   memory is *kept* (NoCopy, extending the previous allocation) if the gap is at most
   `max_overlap` (10) copy times (XLA's `CanAllocateInAlternateMemoryNoCopy`); otherwise it is
   *prefetched* again (Copy), starting where the overlap (elapsed time of the copy over the copy
   time) is nearest `preferred_overlap` (1.5) within `[min_overlap, max_overlap]` = [0.8, 10]
   (XLA's cost-analysis prefetch interval picker). An output that is not pinned is written into
   fast memory and copied out (evicted) as early as the copy engine allows. A use that neither
   fits nor earns a positive benefit (given the plan so far) is *left* in slow memory (Drop).
4. **Best fit.** Every new allocation goes to the smallest free run of columns that holds it over
   its whole interval (XLA's best-fit heap); an alias group takes one offset for all its members.
5. **Copy resources.** One copy engine (two copy intervals share at most one step, the game's
   equation 6) and the per-step supply, checked exactly (earliest deadline first) whenever a copy
   is added, as XLA's asynchronous-copy resource is.

The solver (`heuristic`) makes several plans while its budget lasts and keeps the best (`PLANS`):
the one above; the pinning greedy of `pinning.py` alone (`_pins`); that greedy's pins first
(benefit per byte-step, lowest offsets; only of the tensors XLA would keep, or of all), then the
plan above for the rest; and the plan without pins. Then it improves the best plan by local moves (ruin
and recreate, `_moves.improve`: take placed items out, place the rest again, grow; keep what
pays), at most `MOVES` of them while the budget lasts.

The package: `_memory` (the occupancy grid and the copy engine), `_pins` (the pinning greedy's
units and order), `_items` (the work items and their order), `_plan` (the plan, and its placer
mode for another solution's decisions, `plan(decisions=...)`), `_moves` (local moves), `_solver`
(the solver and the replay).
`solvers/placer.py` and `solvers/pinning.py` are built on it.

Replay (`mode="game"`): the game plays the planned action of each buffer when it is legal, else
the next one in a fixed fallback order (planned Copy: Copy, NoCopy, Drop, and of an output Copy,
Drop, NoCopy, since its NoCopy pins the tensor for life; NoCopy: NoCopy, Copy, Drop; Drop: Drop,
NoCopy, Copy), with the Drop-backup on. The game places greedily in buffer
order (lowest offset, latest copy start), so the replay usually returns less than the plan.
"""
from jaxmmap.solvers.heuristic._memory import Memory
from jaxmmap.solvers.heuristic._moves import MOVES, NOISE, improve, removal_order
from jaxmmap.solvers.heuristic._pins import pin_order, unit_steps, units
from jaxmmap.solvers.heuristic._plan import (
                                             MAX_OVERLAP,
                                             MIN_OVERLAP,
                                             PIN_MODES,
                                             PREFERRED_OVERLAP,
                                             Plan,
                                             benefit_estimate,
                                             plan,
)
from jaxmmap.solvers.heuristic._solver import PLAN_SHARE, PLANS, from_plan, heuristic, plan_policy, plan_start, play_plan

__all__ = ["MAX_OVERLAP", "MIN_OVERLAP", "MOVES", "NOISE", "PIN_MODES", "PLANS", "PLAN_SHARE", "PREFERRED_OVERLAP",
           "Memory", "Plan", "benefit_estimate", "heuristic", "improve", "pin_order", "plan", "plan_policy",
           "from_plan", "plan_start", "removal_order", "play_plan", "unit_steps", "units"]
