// The device side of conditional graph nodes and programmatic dependent launches, for NVRTC,
// shipped with the gpu-runtime crate:
//
//   cudaGraphSetConditional(handle, value);   // a conditional node's condition (CUDA 12.3)
//   cudaGridDependencySynchronize();          // wait for the kernel this one depends on
//   cudaTriggerProgrammaticLaunchCompletion(); // let the kernel that depends on this one start
//
// CUDA's cuda_device_runtime_api.h declares these only for relocatable device code (-rdc), so
// NVRTC's whole-program compiles (the default) do not see them. They need no device runtime
// library: cudaGraphSetConditional is resolved by the driver when the module is loaded (as
// printf's vprintf is), and the other two are single PTX instructions (sm_90; below it a
// dependent launch is never made, and they do nothing). With -rdc, or under nvcc, CUDA's own
// declarations are used and this header adds nothing.
#pragma once

#if defined(__CUDACC_RTC__) && !defined(__CUDACC_RDC__)
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                                    unsigned int value);

static __device__ __forceinline__ void cudaGridDependencySynchronize(void) {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

static __device__ __forceinline__ void cudaTriggerProgrammaticLaunchCompletion(void) {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}
#endif
