//! The guide, in chapters: read them in order the first time, or jump to the one you need.
//!
//! Each chapter is a module with documentation and no items, so that every code block in it is
//! compiled as a doctest with the crate. The chapters' text lives in the markdown files beside
//! this one (`gpu-runtime/src/guide/*.md` in the repository); the link targets they share are in
//! `links.md`, appended to every chapter.
//!
//! 1. [`first_kernel`]: a kernel in a string, a Rust signature, a call; where things are.
//! 2. [`kernels`]: the type table (C parameter to Rust parameter), what `#[kernel]` generates,
//!    device variables and kernel templates.
//! 3. [`memory`]: device, host, page-locked, managed and pooled memory, and copies.
//! 4. [`streams`]: streams and events, and awaiting the GPU from `async` code.
//! 5. [`graphs`]: CUDA graphs, loops and branches on the GPU, programmatic dependent launches,
//!    thread-block clusters and cooperative launches.
//! 6. [`arrays`]: `DeviceArray`, elementwise kernels, reductions, scans, random numbers.
//! 7. [`compiling`]: NVRTC, the compile cache, the check at `cargo build`, headers, kernels
//!    embedded in the binary.
//! 8. [`several_gpus`]: NCCL collectives, in one process or many, across machines.
//! 9. [`other_libraries`]: DLPack, and cudarc with its libraries (cuBLAS, cuRAND, cuFFT, ...).
//! 10. [`testing`]: testing your own kernels, with and without a GPU.
//! 11. [`errors`]: the error types and what to match on; faults.
//! 12. [`threads_and_safety`]: which handles cross threads, and the safety model.
//! 13. [`performance`]: what a launch, a copy and a generated kernel cost, measured against the
//!     driver.
//! 14. [`coming_from_cudarc`]: a cudarc launch and the same launch here, side by side.
//! 15. [`coming_from_pycuda`]: a PyCUDA program and the same program here, side by side; every
//!     PyCUDA call and its counterpart.
//! 16. [`coming_from_cupy`]: CuPy's arrays, kernels and streams next to the same code here.
//! 17. [`gpt2_port`]: a whole CUDA C++ program ported, llm.c's GPT-2 training step: its host
//!     code mapped onto the library, its checks and its speed.

// A chapter is a module with no items: its text, then the link targets all chapters share (each
// a `crate::` path, so that a chapter needs no imports and the layer check sees none).
macro_rules! chapter {
    ($(#[$meta:meta])* $name:ident, $file:literal) => {
        $(#[$meta])*
        pub mod $name {
            #![doc = include_str!($file)]
            #![doc = include_str!("links.md")]
        }
    };
}

chapter!(first_kernel, "first_kernel.md");
chapter!(kernels, "kernels.md");
chapter!(memory, "memory.md");
chapter!(streams, "streams.md");
chapter!(graphs, "graphs.md");
chapter!(arrays, "arrays.md");
chapter!(compiling, "compiling.md");
chapter!(several_gpus, "several_gpus.md");
chapter!(other_libraries, "other_libraries.md");
chapter!(testing, "testing.md");
chapter!(errors, "errors.md");
chapter!(threads_and_safety, "threads_and_safety.md");
chapter!(performance, "performance.md");
chapter!(coming_from_cudarc, "coming_from_cudarc.md");
chapter!(coming_from_pycuda, "coming_from_pycuda.md");
chapter!(coming_from_cupy, "coming_from_cupy.md");
chapter!(gpt2_port, "gpt2_port.md");
