# Source this file: it makes NVRTC (libnvrtc.so.13) loadable, installing it from the PyPI wheel
# `nvidia-cuda-nvrtc` into .nvrtc/ when neither the system nor LD_LIBRARY_PATH has it.
# NVRTC runs on the CPU, so every compile test runs on machines without a GPU.
_gpu_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_gpu_have_nvrtc() {
  local d
  local path=${LD_LIBRARY_PATH:-}
  for d in ${path//:/ } /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [[ -e $d/libnvrtc.so.13 ]] && { [[ :${LD_LIBRARY_PATH:-}: == *:$d:* ]] || export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; return 0; }
  done
  ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so\.13 '
}
if ! _gpu_have_nvrtc; then
  _gpu_lib=$_gpu_root/.nvrtc/nvidia/cu13/lib
  if [[ ! -e $_gpu_lib/libnvrtc.so.13 ]]; then
    echo "NVRTC not found: installing the PyPI wheel nvidia-cuda-nvrtc into .nvrtc/" >&2
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$_gpu_root/.nvrtc" 'nvidia-cuda-nvrtc>=13,<14' >&2
  fi
  export LD_LIBRARY_PATH=$_gpu_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
unset -f _gpu_have_nvrtc
unset _gpu_root _gpu_lib
