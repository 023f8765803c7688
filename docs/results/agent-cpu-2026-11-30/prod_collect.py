"""The table of muzero-prod's runs (out/*-sSEED.json, `jaxmmap solve --json`): the heuristic's return
(prod's own first step), prod's, its simulated speed-up over the heuristic, the start its last local
moves improved ("agent": the agent's placed game, or "heuristic"), the agent's placed game, seconds;
then per seed the mean speed-up. Run from the folder that holds out/."""
import glob
import json
import re
import statistics

runs = {}
for path in sorted(glob.glob("out/*-s*.json")):
    match = re.fullmatch(r"out/(.+)-s(\d+)\.json", path)
    if match is None or path.endswith(".sol.json"):
        continue
    with open(path) as f:
        text = f.read()
    if text.strip():  # (a run under way has written nothing yet)
        run = json.loads(text)
        runs[(run["problem"], int(match.group(2)))] = run
seeds = sorted({s for _, s in runs})
columns = "prod seed {} | speed-up | improved | agent's placed game | s"
print("| instance | heuristic | " + " | ".join(columns.format(s) for s in seeds) + " |")
print("|---|---:|" + "---:|---:|---|---:|---:|" * len(seeds))
for name in dict.fromkeys(n for n, _ in runs):
    first = next(runs[(name, s)] for s in seeds if (name, s) in runs)
    row = [name, f"{first['info']['heuristic']:.6g}"]
    for s in seeds:
        r = runs.get((name, s))
        if r is None:
            row += [""] * 5
            continue
        placed = r["info"].get("agent_placed")
        row += [f"{r['return']:.6g}", f"{r['speedup_over_heuristic_percent']:+.2f}%", str(r["info"].get("improved")),
                "" if placed is None else f"{placed:.6g}", f"{r['seconds']:.0f}"]
    print("| " + " | ".join(row) + " |")
print()
for s in seeds:
    ups = [r["speedup_over_heuristic_percent"] for (_, t), r in runs.items() if t == s]
    agent = sum(r["info"].get("improved") == "agent" for (_, t), r in runs.items() if t == s)
    print(f"seed {s}: faster by 0.1% or more on {sum(u >= 0.1 for u in ups)} of {len(ups)}, slower on "
          f"{sum(u < 0 for u in ups)}; mean speed-up {statistics.mean(ups):+.3f}%; the agent's placed game the "
          f"better start on {agent}")
