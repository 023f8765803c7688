export JAXMMAP_COMPILATION_CACHE=off
for spec in "100 40 0 0" "101 80 0 0" "102 150 0 0" "103 300 0 0" "104 500 0 0" "105 800 0 0" "106 1000 0 0" "107 1200 0 0" "108 300 0 0" "109 600 0 0" "300 300 0.1 1" "301 600 0.15 0" "302 1000 0.2 1" "305 300 0.2 0" "306 600 0.1 1" "307 1000 0.15 0"; do
  for share in 0.3 0.6 0.9; do python probe_share.py.txt $spec $share 10 2>&1 | grep -v Warn; done
done
for spec in "200 2000 0 0" "201 3000 0 0" "202 5000 0 0" "203 8000 0 0" "303 1500 0.1 0" "304 2500 0.15 1" "308 1500 0.2 1" "309 2500 0.1 0"; do
  for share in 0.3 0.6 0.9; do python probe_share.py.txt $spec $share 30 2>&1 | grep -v Warn; done
done
