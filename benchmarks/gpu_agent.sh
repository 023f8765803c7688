#!/usr/bin/env bash
# The agent (`muzero`, its default expert mode) on a GPU against one CPU core of the same machine,
# at the same time, in one call of the device machine (about 5 minutes):
#
#     bash benchmarks/gpu_agent.sh            # writes under $OUT (else /tmp/gpu-agent)
#
# `jaxmmap solve P --solver muzero --budget 120 --columns auto` on two programs of the suite's
# training split (411 and 2,191 buffers), compile included, persistent cache off: the written
# return, the seconds, and the generations and games the search played (`info`).
source "$(dirname "$0")/gpu_setup.sh" /tmp/gpu-agent
agent() {  # agent DEVICE PREFIX...
  local where=$1
  shift
  for p in suite:alexnet_train_b32@tpu_v4i suite:resnet18_train@gpu; do
    timed "agent_$where" 150 "$@" $PY -m jaxmmap solve "$p" --solver muzero --budget 120 --columns auto --json
  done
}
agent gpu &
agent cpu env JAX_PLATFORMS=cpu taskset -c 3 &
wait
for w in gpu cpu; do
  $PY - "$OUT/agent_$w.txt" "$w" <<'PYEOF' | tee -a "$OUT/agent_summary.txt"
import json, re, sys
text = open(sys.argv[1]).read()
for m in re.finditer(r"^\{\n.*?^\}", text, re.S | re.M):
    r = json.loads(m.group(0))
    i = r["info"]
    print(sys.argv[2], r["problem"], f"return {r['return']:.6g}", f"speed-up {r['speedup_over_heuristic_percent']:+.3f}%",
          f"{r['seconds']:.1f} s", f"generations {i.get('iterations')}", f"games {i.get('episodes')}",
          f"game {i.get('game')}", f"first {r['trace'][0][0]:.1f} s")
PYEOF
done
