#!/bin/bash
# muzero-prod in the deferred game with the edf copy supply (`--copy-supply edf`), otherwise as
# ../agent-cpu-2026-11-30/prod_commands.sh (the early supply, prod's default): the 15 suite
# instances with room, 300 s, seed 0 (SEED=1 for seed 1), one core a run, two at a time, the
# persistent cache off. prod_edf.md (seed 0) and prod_edf_seed1.md (seed 1): 2026-12-02, the
# package's code of commit e8f104f. Run from an empty folder: bash prod_edf.sh
out=prod_edf.md; [ "${SEED:-0}" = 0 ] || out=prod_edf_seed$SEED.md
SUPPLY=edf bash "$(dirname "$0")/../agent-cpu-2026-11-30/prod_commands.sh" && mv prod.md $out
