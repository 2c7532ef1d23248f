#!/usr/bin/env bash
# The port's CPU reference (`gpt2_train cpu`, train_gpt2.c in Rust) against llm.c's own
# train_gpt2.c built with gcc: the same small checkpoint and shard, llm.c's 40 steps (B=4,
# T=64, lr 1e-4, its shuffled batches), the per-step losses side by side. No GPU needed.
#
#   bash examples/gpt2_train/verify_cpu.sh PORT_BINARY
#
# llm.c's main() reads fixed paths (./gpt2_124M.bin, dev/data/tinyshakespeare/*.bin,
# ./gpt2_tokenizer.bin): it runs unpatched in a work directory laid out that way.
set -euo pipefail
PORT=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${WORK:-$(mktemp -d /tmp/gpt2_cpu.XXXXXX)}
cp -r "$HERE/llmc_ref/." "$WORK/"
cd "$WORK"
gcc -O3 -fopenmp train_gpt2.c -lm -o train_gpt2
"$PORT" make-inputs --out in --config small -b 4 -t 64 --steps 12
mkdir -p dev/data/tinyshakespeare
ln -sf "$WORK/in/gpt2_small.bin" gpt2_124M.bin
ln -sf "$WORK/in/gpt2_tokenizer.bin" gpt2_tokenizer.bin
ln -sf "$WORK/in/tokens_small.bin" dev/data/tinyshakespeare/tiny_shakespeare_train.bin
ln -sf "$WORK/in/tokens_small.bin" dev/data/tinyshakespeare/tiny_shakespeare_val.bin
./train_gpt2 > llmc.txt
"$PORT" cpu --checkpoint in/gpt2_small.bin --shard in/tokens_small.bin -b 4 -t 64 --steps 40 --lr 1e-4 > port.txt
# llm.c: "step 0: train loss 6.219920 (took ...)"; port: "step 1: loss 6.219920 (... ms)".
grep -E '^step [0-9]+: train loss' llmc.txt | awk '{print $2+1, $5}' | tr -d ':' > llmc.tsv
grep -E '^step [0-9]+: loss' port.txt | awk '{print $2, $4}' | tr -d ':' > port.tsv
printf '%5s %12s %12s %10s\n' step llm.c port rel.diff
awk 'NR == FNR {l[$1] = $2; next} ($1 in l) {d = l[$1] - $2; if (d < 0) d = -d; r = d / l[$1]; if (r > m) m = r; n++;
     printf "%5d %12.6f %12.6f %10.2e\n", $1, l[$1], $2, r} END {printf "%d steps, largest relative difference %.2e\n", n, m}' llmc.tsv port.tsv
