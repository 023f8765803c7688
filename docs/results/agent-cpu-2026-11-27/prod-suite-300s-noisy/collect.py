"""The table of results.md from out/*.json (`jaxmmap solve`'s output, one file a run)."""

import json

from jaxmmap.core import suite

ORDER = ["resnet18_infer@tpu_v4i-30", "alexnet_train_b32@tpu_v4i", "resnet50_infer@dram_pmem-25",
         "resnet50_infer@gpu", "mnasnet_infer@tpu_v4i-30", "gpt_small_train@tpu_v4i-30",
         "transformer_bf16_infer@tpu_v4i-30", "resnet18_train@gpu", "nmt_infer@tpu_v4i-30",
         "gpt_medium_train@gpu", "gpt_train_donated@gpu", "resnet50_train@tpu_v4i",
         "transformer_bf16_train@gpu", "mnasnet_train@gpu", "nmt_train@gpu"]


def main() -> None:
    print("| instance | buffers | heuristic | prod seed 0 | speed-up | improved | s | prod seed 1 | speed-up "
          "| improved | s | agent's placed game (0, 1) |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---|---:|---|")
    wins, speedups = {0: 0, 1: 0}, {0: [], 1: []}
    for name in ORDER:
        cells, agents, heuristic = [], [], None
        for seed in (0, 1):
            try:
                with open(f"out/{name.replace('@', '_')}-s{seed}.json") as f:
                    r = json.load(f)
            except (OSError, ValueError):
                cells.append("- | - | - | -")
                agents.append("-")
                continue
            heuristic, s = r["info"]["heuristic"], r["speedup_over_heuristic_percent"]
            speedups[seed].append(s)
            wins[seed] += s >= 0.1
            mark = "**" if s >= 0.1 else ""
            cells.append(f"{mark}{r['return']:.6g}{mark} | {s:+.2f}% | {r['info']['improved']} | {r['seconds']:.0f}")
            agents.append(f"{r['info']['agent_placed']:.6g}")
        print(f"| {name} | {suite.load(name).num_buffers:,} | {heuristic:.6g} | {' | '.join(cells)} "
              f"| {', '.join(agents)} |")
    for seed in (0, 1):
        if speedups[seed]:
            n = len(speedups[seed])
            print(f"\nseed {seed}: faster by 0.1% or more on {wins[seed]} of {n}; mean speed-up "
                  f"{sum(speedups[seed]) / n:+.3f}%")


if __name__ == "__main__":
    main()
