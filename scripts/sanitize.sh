#!/usr/bin/env bash
# sanitize.sh: run NVIDIA compute-sanitizer (memcheck, racecheck, initcheck, synccheck) over the
# packed GPU test binaries and examples, and print how many reports each run produced.
#
#   bash scripts/sanitize.sh [PACKED_DIR] [TOOLS...]
#
# PACKED_DIR is what ../shared/gpu/pack gathered (default .gpu; pack with --examples to include
# the examples). TOOLS default to all four. Runs on the GPU machine (no Rust needed). Logs go to
# $OUT/sanitize/ when OUT is set, else /tmp/sanitize/. Exit status: 0 when every run finished
# with zero reports.
#
# API errors are not reported (--report-api-errors no): many tests provoke them on purpose to
# check the typed errors (a bad PCI bus id, peer access on one GPU, out of memory, a missing
# global), and an unexpected one fails its test anyway.
#
# Left out on purpose: the JIT-options test, whose driver JIT writes no info log under the
# sanitizer (seen on the H100, driver 580); the `fault_*` tests, whose kernels fault deliberately (the sanitizer
# would rightly report them); the leak test, because the sanitizer's own allocations move the
# device-memory figures it checks; and under racecheck (which only looks at shared memory) the
# thread stress test and the staged calls from several threads, whose kernels use none: racecheck
# slows them past the time limit, and on the latter reports "Internal Sanitizer Error: Detected a
# failure to track a kernel launch" (H100, driver 580). Both pass memcheck, initcheck and
# synccheck; the stress test runs shortened (GPU_STRESS_SECS) under them.
set -u
dir=${1:-.gpu}
shift || true
tools=("$@")
((${#tools[@]})) || tools=(memcheck racecheck initcheck synccheck)
per_run_timeout=${SANITIZE_TIMEOUT:-240}
logs=${OUT:-/tmp}/sanitize
mkdir -p "$logs"
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
         /usr/lib/x86_64-linux-gnu; do
  [[ -d $d ]] && LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[[ -x $cs ]] || { echo "sanitize: compute-sanitizer not found" >&2; exit 2; }
export GPU_STRESS_SECS=${GPU_STRESS_SECS:-2}

total=0 bad=0
# Extra compute-sanitizer options for the next run() only.
extra=()
run() { # run TOOL NAME CMD...
  local tool=$1 name=$2; shift 2
  local log="$logs/$tool-$name.log"
  timeout "$per_run_timeout" "$cs" --tool "$tool" --error-exitcode 99 --print-limit 50 --report-api-errors no \
    "${extra[@]}" --log-file "$log" "$@" >"$logs/$tool-$name.out" 2>&1
  local code=$?
  local n
  # memcheck, initcheck and synccheck end with 'ERROR SUMMARY: N errors'; racecheck with
  # 'RACECHECK SUMMARY: N hazards displayed'.
  n=$(grep -oE '(ERROR|RACECHECK) SUMMARY: [0-9]+' "$log" 2>/dev/null | awk '{s+=$3} END {print s+0}')
  local status=ok
  if ((code == 124)); then status="TIMED OUT after ${per_run_timeout}s"; bad=$((bad + 1))
  elif ((code == 99 || n > 0)); then status="REPORTS"; bad=$((bad + 1))
  elif ((code != 0)); then status="exit $code (tests failed?)"; bad=$((bad + 1)); fi
  extra=()
  total=$((total + n))
  printf '%-10s %-40s %4d reports  %s\n' "$tool" "$name" "$n" "$status"
  if [[ $status != ok ]]; then
    grep -E '^=========  ?(Invalid|Uninitialized|Race|Barrier|Error|Program hit|[A-Z][a-z]+ .* (error|hazard)|.*SUMMARY)' "$log" | sort | uniq -c | head -10
    tail -5 "$log"
    grep -E '(FAILED|panicked)' "$logs/$tool-$name.out" | head -5
  fi
}

for tool in "${tools[@]}"; do
  for t in "$dir"/tests/*; do
    [[ -x $t ]] || continue
    # Binaries without GPU tests (unit tests, NVRTC-only tests) launch nothing.
    (("$("$t" --list --ignored 2>/dev/null | grep -c ': test$')" > 0)) || continue
    skips=(--skip fault_ --skip allocate_free_and_prepare_drop_cycles --skip modules_load_from_ptx_files_and_buffers_with_jit_options)
    # compute-sanitizer does not support dynamic parallelism ("not supported by the selected
    # tool", counted as a report).
    skips+=(--skip linked_module_where_a_kernel_launches_a_kernel)
    [[ $tool == racecheck ]] && skips+=(--skip stress_ --skip staged_calls_from_several_threads)
    # initcheck reports the destination of a cuMemcpyPeer between two contexts of one device as
    # uninitialised when it is read back (2500 reports in that test alone, H100, driver 580); the
    # test checks the copied values against the host data itself.
    [[ $tool == initcheck ]] && skips+=(--skip a_device_is_not_its_own_peer_and_same_device_peer_copies_work)
    # Nor does it follow writes made by another process: in the IPC test's child, every read of
    # the buffer the parent filled counts as uninitialised (65,793 reports, one per 32 bytes of
    # its 2 MiB). That test runs on its own with only the parent process checked.
    ipc=ipc_memory_and_event_handles_work_in_another_process
    # Its whole name, `module::name` in a crate of modules, for --exact.
    ipc_test=$("$t" --list --ignored 2>/dev/null | sed -n "s/^\(\(.*::\)\?$ipc\): test$/\1/p")
    if [[ $tool == initcheck && -n $ipc_test ]]; then
      skips+=(--skip "$ipc")
      extra=(--target-processes application-only)
      run "$tool" "test-$(basename "$t")-$ipc" "$t" --ignored --exact "$ipc_test"
    fi
    # A test crate of modules (tests/suite/ and the others) runs one module at a time, each
    # under its own time limit, as when each module was a test binary of its own; a crate with
    # a test at its root runs whole.
    list=$("$t" --list --ignored 2>/dev/null | sed -n 's/: test$//p')
    mods=""
    grep -qv '::' <<<"$list" || mods=$(sed 's/::.*//' <<<"$list" | sort -u)
    if [[ -z $mods ]]; then
      run "$tool" "test-$(basename "$t")" "$t" --ignored --test-threads=1 "${skips[@]}"
    fi
    for m in $mods; do
      run "$tool" "test-$(basename "$t")-$m" "$t" --ignored --test-threads=1 "${skips[@]}" "$m::"
    done
  done
  for e in "$dir"/examples/*; do
    [[ -x $e ]] || continue
    # Dynamic parallelism, which the tools do not support (see above).
    [[ $(basename "$e") == linked ]] && continue
    run "$tool" "example-$(basename "$e")" "$e"
  done
done
echo "sanitize: $total reports in all; $bad runs with reports, failures or timeouts; logs in $logs"
((bad == 0))
