#!/bin/bash
# muzero-prod in the deferred game with the edf copy supply (`--copy-supply edf`), otherwise as
# ../agent-cpu-2026-11-30/prod_commands.sh (the early supply, prod's default): the 15 suite
# instances with room, 300 s, seed 0, one core a run, two at a time, the persistent cache off.
# prod_edf.md: 2026-12-02, commit e8f104f. Run from an empty folder: bash prod_edf.sh
SUPPLY=edf bash "$(dirname "$0")/../agent-cpu-2026-11-30/prod_commands.sh" && mv prod.md prod_edf.md
