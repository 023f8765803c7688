"""The harness: solvers measured side by side and reported.

compare  solvers x instances x seeds under one budget -> CSV, Markdown, PNG
report   Tables 3-5 and figures from comparison results and training runs
speed    the simulated latency and speed-up over the heuristic beside every return
tables   what `jaxmmap solve` and `jaxmmap latency` print for people (`--json`: the data)
plots    memory layouts, training curves, speedup bars, correlation scatter (matplotlib)
"""
