# Source this file: it makes NVRTC (libnvrtc.so.13) and the device linker nvJitLink
# (libnvJitLink.so.13) loadable, and the device runtime library libcudadevrt.a findable (for
# dynamic parallelism), installing the PyPI wheels `nvidia-cuda-nvrtc`, `nvidia-nvjitlink` and
# `nvidia-cuda-runtime` (with the CUDA headers) into .nvrtc/ when neither the system nor
# LD_LIBRARY_PATH has them, and with them `nvidia-cuda-cccl` (libcu++).
# All three run on the CPU, so every compile and link test runs on machines without a GPU.
_gpu_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_gpu_lib=$_gpu_root/.nvrtc/nvidia/cu13/lib
# _gpu_have FILE: finds FILE outside .nvrtc/ (LD_LIBRARY_PATH or the toolkit), adding its
# directory to LD_LIBRARY_PATH (gpu-runtime looks for libcudadevrt.a there too).
_gpu_have() {
  local d
  local path=${LD_LIBRARY_PATH:-}
  for d in ${path//:/ } /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [[ $d == "$_gpu_lib" ]] && continue
    [[ -e $d/$1 ]] && { [[ :${LD_LIBRARY_PATH:-}: == *:$d:* ]] || export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; return 0; }
  done
  [[ $1 == *.so.* ]] && ldconfig -p 2>/dev/null | grep -q "${1//./\\.} "
}
# Wheels are installed together: pip --target replaces the whole nvidia/ folder on each install.
_gpu_wheels=() _gpu_missing=0
for _gpu_pair in libnvrtc.so.13:nvidia-cuda-nvrtc libnvJitLink.so.13:nvidia-nvjitlink libcudadevrt.a:nvidia-cuda-runtime; do
  if ! _gpu_have "${_gpu_pair%%:*}"; then
    _gpu_wheels+=("${_gpu_pair#*:}>=13,<14")
    [[ -e $_gpu_lib/${_gpu_pair%%:*} ]] || _gpu_missing=1
  fi
done
# libcu++ (<cuda/std/...>) for the CUDA headers of nvidia-cuda-runtime, which the build-time
# check and the run-time compile find beside the libraries (nvidia/cu13/include/cccl): the
# nvidia-cuda-cccl wheel, installed with the others.
if ((${#_gpu_wheels[@]})); then
  _gpu_wheels+=("nvidia-cuda-cccl>=13,<14")
  [[ -e $_gpu_root/.nvrtc/nvidia/cu13/include/cccl/cuda/std/version ]] || _gpu_missing=1
fi
if ((${#_gpu_wheels[@]})); then
  if ((_gpu_missing)); then
    echo "installing the PyPI wheels ${_gpu_wheels[*]} into .nvrtc/" >&2
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --upgrade --target "$_gpu_root/.nvrtc" "${_gpu_wheels[@]}" >&2
  fi
  [[ :${LD_LIBRARY_PATH:-}: == *:$_gpu_lib:* ]] || export LD_LIBRARY_PATH=$_gpu_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
# NVRTC 13.0 as well, beside the rest and off the loader's path: PTX embedded at build time must
# come from an NVRTC no newer than the driver that loads it, and 13.0's is what a CUDA 13.0
# driver takes (`GPU_RUNTIME_NVRTC=$GPU_SUITE_NVRTC_13_0 cargo build ...`). tests/nvrtc_by_path.rs
# uses it: unlike later ones, it finds its builtins only on the loader's path.
_gpu_old=$_gpu_root/.nvrtc-13.0
if [[ ! -e $_gpu_old/nvidia/cu13/lib/libnvrtc.so.13 ]]; then
  echo "installing the PyPI wheel nvidia-cuda-nvrtc==13.0.88 into .nvrtc-13.0/" >&2
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$_gpu_old" "nvidia-cuda-nvrtc==13.0.88" >&2 || true
fi
[[ -e $_gpu_old/nvidia/cu13/lib/libnvrtc.so.13 ]] && export GPU_SUITE_NVRTC_13_0=$_gpu_old/nvidia/cu13/lib/libnvrtc.so.13
unset _gpu_old
# NCCL, for the `nccl` feature. cudarc opens it as libnccl.so (or libnccl.so.13, ...), never under
# NCCL's soname libnccl.so.2, which is all that the PyPI wheel and the libnccl2 package ship. So
# unless libnccl.so is on the loader's path already, .nccl/lib/libnccl.so is made a link to a
# libnccl.so.2 found on LD_LIBRARY_PATH, in the ld.so cache or in a wheel Python already has (a
# PyTorch install), else in the wheel nvidia-nccl-cu13 installed into .nccl/ (a folder of its own:
# pip --target replaces the whole nvidia/ folder, so not .nvrtc/), and .nccl/lib goes on
# LD_LIBRARY_PATH.
_gpu_nccl=$_gpu_root/.nccl
# _gpu_nccl_find FILE: prints the path of FILE on LD_LIBRARY_PATH (outside .nccl/lib) or in the
# ld.so cache.
_gpu_nccl_find() {
  local d
  local path=${LD_LIBRARY_PATH:-}
  for d in ${path//:/ }; do
    [[ $d != "$_gpu_nccl/lib" && -e $d/$1 ]] && { echo "$d/$1"; return 0; }
  done
  ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n { print $NF; found = 1; exit } END { exit !found }'
}
if ! _gpu_nccl_find libnccl.so >/dev/null; then
  _gpu_so2=$(_gpu_nccl_find libnccl.so.2) || _gpu_so2=
  if [[ -z $_gpu_so2 ]]; then
    for _gpu_d in $(python3 -c 'import importlib.util as u; s = u.find_spec("nvidia.nccl"); print(*(s.submodule_search_locations if s else []))' 2>/dev/null); do
      if [[ -e $_gpu_d/lib/libnccl.so.2 && $_gpu_d != "$_gpu_nccl/nvidia/nccl" ]]; then
        _gpu_so2=$_gpu_d/lib/libnccl.so.2
        break
      fi
    done
  fi
  if [[ -z $_gpu_so2 ]]; then
    if [[ ! -e $_gpu_nccl/nvidia/nccl/lib/libnccl.so.2 ]]; then
      echo "installing the PyPI wheel nvidia-nccl-cu13 into .nccl/" >&2
      python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$_gpu_nccl" "nvidia-nccl-cu13>=2.27,<3" >&2 ||
        echo "NCCL could not be installed: the nccl feature's tests will say so" >&2
    fi
    if [[ -e $_gpu_nccl/nvidia/nccl/lib/libnccl.so.2 ]]; then
      _gpu_so2=$_gpu_nccl/nvidia/nccl/lib/libnccl.so.2
    fi
  fi
  if [[ -n $_gpu_so2 ]]; then
    mkdir -p "$_gpu_nccl/lib"
    ln -sfn "$_gpu_so2" "$_gpu_nccl/lib/libnccl.so"
    [[ :${LD_LIBRARY_PATH:-}: == *:$_gpu_nccl/lib:* ]] || export LD_LIBRARY_PATH=$_gpu_nccl/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
fi
unset -f _gpu_have _gpu_nccl_find
unset _gpu_root _gpu_lib _gpu_pair _gpu_wheels _gpu_missing _gpu_nccl _gpu_so2 _gpu_d
