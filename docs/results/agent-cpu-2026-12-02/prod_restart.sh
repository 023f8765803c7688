#!/bin/bash
# muzero-prod with the expert's stalled search starting again from its first center (`restart_stall`
# 1.0, the default), otherwise as ../agent-cpu-2026-11-30/prod_commands.sh: the 15 suite instances
# with room, 300 s, seed 0 (SEED=1 for seed 1), the deferred game with the early copy supply, one
# core a run, two at a time, the persistent cache off. prod_restart.md (seed 0): 2026-12-02, the
# package's code of commit bbcd3ab. Run from an empty folder: bash prod_restart.sh
out=prod_restart.md; [ "${SEED:-0}" = 0 ] || out=prod_restart_seed$SEED.md
bash "$(dirname "$0")/../agent-cpu-2026-11-30/prod_commands.sh" && mv prod.md $out
