#!/usr/bin/env bash
# llm.c's train_gpt2_fp32.cu against the Rust port (examples/gpt2_train), on one GPU, from the
# same random 124M checkpoint and token shard: per-step loss of both, and the median step time
# over the steps after warm-up.
#
#   bash examples/gpt2_train/compare.sh PORT_BINARY [STEPS=30] [B=4] [T=1024] [WARMUP=5]
#
# PORT_BINARY is the example built with `cargo build --release --features cublas --example
# gpt2_train` (target/release/examples/gpt2_train). Needs nvcc and cuBLAS (a CUDA toolkit), no
# network. llm.c is built from llmc_ref/, its files byte for byte (karpathy/llm.c f1e2ace6,
# MIT license, llmc_ref/LICENSE), unpatched: its main() reads the checkpoint from
# ./gpt2_124M.bin, which make-inputs writes into the work directory it runs in, and takes the
# rest as flags (-i/-j the shards, -b, -t; -v/-s/-m/-g keep its validation and sampling, which
# are outside its timed step, to one batch and one token). Both train one epoch of the shard:
# STEPS batches, in llm.c's shuffled order (the port's loader is llm.c's, seed 42).
#
# Then the port again with each variant of its step (PORT_VARIANTS, ';'-separated sets of the
# port's flags; default: each departure from llm.c's host code added in turn, see gpu::Opts), and
# one line per run with its median step time, so that one run shows llm.c, the port as llm.c
# does it, and each variant's gain (`--graph on`: the whole step as one CUDA graph, launched
# once per step after the first). A variant whose first word is `bin=PATH` runs that build
# of the port instead (e.g. one built with GPU_RUNTIME_EMBED=sm_90: llm.c's kernels as machine
# code compiled by NVRTC at build time, instead of PTX that the driver compiles at load).
set -euo pipefail
PORT=$(realpath "$1")
CALLER=$PWD
STEPS=${2:-30}
B=${3:-4}
T=${4:-1024}
WARMUP=${5:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${WORK:-$(mktemp -d /tmp/gpt2_compare.XXXXXX)}
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
cp -r "$HERE/llmc_ref/." "$WORK/"
cd "$WORK"
echo "== building llm.c's train_gpt2_fp32.cu in $WORK"
# llm.c's Makefile: nvcc -O3 --use_fast_math ... -lcublas -lcublasLt; -arch=native as its
# Makefile's detected compute capability (the port JIT-compiles for the same GPU).
nvcc -O3 --use_fast_math -arch=native train_gpt2_fp32.cu -lcublas -lcublasLt -o train_gpt2fp32cu
echo "== inputs"
"$PORT" make-inputs --out "$WORK" --config 124M -b "$B" -t "$T" --steps "$STEPS"
echo "== llm.c"
./train_gpt2fp32cu -i tokens_124M.bin -j tokens_124M.bin -b "$B" -t "$T" -v 1000000 -s 1000000 -m 1 -g 2 | tee llmc.txt
echo "== port"
"$PORT" train --checkpoint gpt2_124M.bin --shard tokens_124M.bin -b "$B" -t "$T" --steps "$STEPS" --warmup "$WARMUP" | tee port.txt
# llm.c: "step    1/30: train loss 10.98 (123.4 ms, 33000 tok/s)"; port: "step 1: loss 10.98 (120.1 ms)".
grep -E '^step +[0-9]+/' llmc.txt | sed -E 's/^step +([0-9]+)\/[0-9]+: train loss ([-0-9.naif]+) \(([0-9.]+) ms.*/\1 \2 \3/' > llmc.tsv
grep -E '^step [0-9]+: loss' port.txt | sed -E 's/^step ([0-9]+): loss ([-0-9.naif]+) \(([0-9.]+) ms\)/\1 \2 \3/' > port.tsv
echo
echo "== per-step loss (B=$B T=$T, lr 3e-4, TF32 as llm.c sets it)"
printf '%5s %12s %12s %10s %12s %12s\n' step llm.c port rel.diff llm.c_ms port_ms
awk 'NR == FNR {l[$1] = $2; t[$1] = $3; next}
     ($1 in l) {d = l[$1] - $2; if (d < 0) d = -d; a = l[$1] < 0 ? -l[$1] : l[$1];
                printf "%5d %12.6f %12.6f %10.2e %12.3f %12.3f\n", $1, l[$1], $2, d / a, t[$1], $3}' llmc.tsv port.tsv
median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "nan"; else print v[int(NR/2)+1]}'; }
ML=$(awk -v w="$WARMUP" '$1 > w {print $3}' llmc.tsv | median)
MP=$(awk -v w="$WARMUP" '$1 > w {print $3}' port.tsv | median)
N=$(awk -v w="$WARMUP" '$1 > w' port.tsv | wc -l)
echo
echo "median step time over $N steps after $WARMUP of warm-up: llm.c $ML ms, port $MP ms (port/llm.c $(awk -v a="$MP" -v b="$ML" 'BEGIN {printf "%.3f", a / b}'))"

PORT_VARIANTS=${PORT_VARIANTS:---lean-memset on;--lean-memset on --late-loss on;--graph on}
SUMMARY=$(printf '%-44s %10s %8s %14s\n' run median_ms /llm.c max_loss_rdiff)
SUMMARY+=$'\n'$(printf '%-44s %10s %8s %14s' "llm.c" "$ML" 1.000 -)
SUMMARY+=$'\n'$(printf '%-44s %10s %8.3f %14s' "port (as llm.c)" "$MP" "$(awk -v a="$MP" -v b="$ML" 'BEGIN {print a / b}')" \
    "$(awk 'NR == FNR {l[$1] = $2; next} ($1 in l) {d = (l[$1] - $2) / l[$1]; if (d < 0) d = -d; if (d > m) m = d} END {printf "%.2e", m}' llmc.tsv port.tsv)")
IFS=';' read -r -a VARIANTS <<< "$PORT_VARIANTS"
i=0
for v in "${VARIANTS[@]}"; do
    i=$((i + 1))
    echo
    echo "== port $v"
    BIN=$PORT
    FLAGS=$v
    case "$v" in
        bin=*) BIN=${v%% *}; BIN=$(cd "$CALLER" && realpath "${BIN#bin=}"); FLAGS=${v#* }; [ "$FLAGS" = "$v" ] && FLAGS="" ;;
    esac
    # shellcheck disable=SC2086 # the variant is a list of flags
    "$BIN" train --checkpoint gpt2_124M.bin --shard tokens_124M.bin -b "$B" -t "$T" --steps "$STEPS" --warmup "$WARMUP" $FLAGS | tee "port_v$i.txt"
    grep -E '^step [0-9]+: loss' "port_v$i.txt" | sed -E 's/^step ([0-9]+): loss ([-0-9.naif]+) \(([0-9.]+) ms\)/\1 \2 \3/' > "port_v$i.tsv"
    MV=$(awk -v w="$WARMUP" '$1 > w {print $3}' "port_v$i.tsv" | median)
    RD=$(awk 'NR == FNR {l[$1] = $2; next} ($1 in l) {d = (l[$1] - $2) / l[$1]; if (d < 0) d = -d; if (d > m) m = d} END {printf "%.2e", m}' llmc.tsv "port_v$i.tsv")
    SUMMARY+=$'\n'$(printf '%-44s %10s %8.3f %14s' "port $v" "$MV" "$(awk -v a="$MV" -v b="$ML" 'BEGIN {print a / b}')" "$RD")
done
echo
echo "== summary: median step time over $N steps after $WARMUP of warm-up (B=$B T=$T), the largest relative loss difference from llm.c over the $STEPS steps"
echo "$SUMMARY"
