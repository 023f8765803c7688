#!/bin/bash
# issue 27: Table 2 at 600 s on programs of about 300, 3,000 and 10,000 buffers (agent, ES, random),
# one core a run, two at a time, persistent cache off (2026-11-27, twelfth session, commit b5e7c70)
export JAXMMAP_COMPILATION_CACHE=off
A=suite:alexnet_train_b32@tpu_v4i; B=suite:wavenet_train@gpu; C=suite:nmt_train@gpu
(taskset -c 0 python -m jaxmmap compare --instances $A $B $C --solvers muzero --budget 600 --seeds 1 -o table2-600s-muzero > t2-muzero.log 2>&1
 taskset -c 0 python -m jaxmmap compare --instances $A --solvers random --budget 600 --seeds 1 -o table2-600s-random-a > t2-random-a.log 2>&1) &
(taskset -c 1 python -m jaxmmap compare --instances $A $B $C --solvers es --budget 600 --seeds 1 -o table2-600s-es > t2-es.log 2>&1
 taskset -c 1 python -m jaxmmap compare --instances $B $C --solvers random --budget 600 --seeds 1 -o table2-600s-random-bc > t2-random-bc.log 2>&1) &
wait
# after the fix of the agent's deadline (commit d65a140):
taskset -c 0 python -m jaxmmap compare --instances $C --solvers muzero --budget 600 --seeds 1 -o table2-600s-muzero-nmt-after > t2-muzero-after.log 2>&1
# ES with the tail of commit 4f184b0 (reverted since):
taskset -c 0 python -m jaxmmap compare --instances $C --solvers es --budget 600 --seeds 1 -o table2-600s-es-nmt-after > t2-es-after.log 2>&1
