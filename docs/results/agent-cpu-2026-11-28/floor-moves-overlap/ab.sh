export JAXMMAP_COMPILATION_CACHE=off
cd /tmp/s21/ab
S="suite:resnet50_infer@gpu suite:gpt_small_train@tpu_v4i-30 suite:transformer_bf16_infer@tpu_v4i-30 suite:lstm_stacked_infer_unrolled@dram_pmem-25 /tmp/s21/sel-103.json.gz /tmp/s21/sel-106.json.gz /tmp/s21/sel-108.json.gz"
L="suite:gpt_medium_train@gpu suite:resnet50_train@tpu_v4i suite:transformer_bf16_train@gpu"
for o in 0 1; do
  JAXMMAP_OVERLAP=$o jaxmmap compare --instances $S --solvers generalist --budget 10 --seeds 1 --no-bound -o gen10-o$o > log10-o$o.txt 2>&1
  JAXMMAP_OVERLAP=$o jaxmmap compare --instances $L --solvers generalist --budget 30 --seeds 1 --no-bound -o gen30-o$o > log30-o$o.txt 2>&1
done
echo done
