//! Reductions and scans with no GPU: the user-struct accumulator's source compiles with NVRTC
//! when the C type matches the Rust one and is refused when it does not, and `ReduceAxis`'s
//! forms.

use crate::error::Error;
use crate::gpuarray::kernels::registry::{check_arch, compile_check};
use crate::gpuarray::reduce::axis::ReduceAxis;
use crate::gpuarray::reduce::kernel::{ReductionKernel, ReductionVariant};

#[derive(Clone, Copy)]
#[repr(C)]
struct MinMax {
    lo: f32,
    hi: f32,
}
// SAFETY: repr(C), two f32 fields, every bit pattern is valid; the preamble below declares it.
unsafe impl crate::types::repr::DeviceRepr for MinMax {}

const MINMAX: &str = "struct minmax { float lo, hi; };\n\
__device__ minmax mm(float lo, float hi) { minmax r; r.lo = lo; r.hi = hi; return r; }";

fn minmax_kernel(c_type: &str, preamble: &str) -> ReductionKernel<f32> {
    ReductionKernel::<f32>::with_struct_accumulator::<MinMax>(
        "const float *x",
        "mm(x, x)",
        "mm(fminf(a.lo, b.lo), fmaxf(a.hi, b.hi))",
        "mm(__int_as_float(0x7f800000), __int_as_float(0xff800000))",
        c_type,
        preamble,
    )
    .unwrap()
    .post_map("a.hi - a.lo")
}

#[test]
fn struct_accumulators_compile_in_every_variant() {
    let k = minmax_kernel("minmax", MINMAX);
    for v in [
        ReductionVariant::Contiguous,
        ReductionVariant::Strided(2),
        ReductionVariant::Final,
        ReductionVariant::AxisBlock(2),
        ReductionVariant::AxisThread(2),
        ReductionVariant::AxisColumns(3),
        ReductionVariant::AxisBlockSplit(2),
        ReductionVariant::AxisPartials,
    ] {
        let src = k.source(v);
        if let Err(e) = compile_check(&src, check_arch(&src)) {
            panic!("{v:?} does not compile: {e}\n{src}");
        }
    }
}

#[test]
fn a_c_struct_of_another_size_is_a_compile_error() {
    let wider = "struct minmax3 { float lo, hi, extra; };\n\
                 __device__ minmax3 mm(float lo, float hi) { minmax3 r; r.lo = lo; r.hi = hi; r.extra = 0; return r; }";
    let k = minmax_kernel("minmax3", wider);
    let src = k.source(ReductionVariant::Contiguous);
    match compile_check(&src, "sm_90") {
        Err(Error::Compile(e)) => assert!(format!("{e}").contains("size and alignment"), "{e}"),
        other => panic!("expected a compile error, got {other:?}"),
    }
}

#[test]
fn gathered_reductions_compile() {
    use crate::gpuarray::reduce::at::{gather_source, ALL_OPS};
    for op in ALL_OPS {
        for src in [
            gather_source::<f32>(op),
            gather_source::<i64>(op),
            gather_source::<u8>(op),
        ] {
            if let Err(e) = compile_check(&src, check_arch(&src)) {
                panic!("{op:?} does not compile: {e}\n{src}");
            }
            gpu_cuda_source::find_kernel(&src, "gpu_gather_reduce").unwrap();
            gpu_cuda_source::find_kernel(&src, "gpu_gather_final").unwrap();
        }
    }
}

#[test]
fn reduce_axis_forms() {
    assert_eq!(
        ReduceAxis::from(2),
        ReduceAxis {
            axis: 2,
            keepdims: false
        }
    );
    assert_eq!(ReduceAxis::new(1), ReduceAxis::from(1));
    assert!(ReduceAxis::keepdims(0).keepdims);
    assert_ne!(ReduceAxis::keepdims(0), ReduceAxis::new(0));
}

/// The reduction over all axes is one launch whose last block finishes: the source keeps the
/// partials and the ticket in the module, takes a ticket per block (acquire-release), resets
/// it, and loads the other blocks' partials through L2; blocks reduce by warp shuffles.
#[test]
fn all_axes_reductions_finish_in_their_last_block() {
    let k = minmax_kernel("minmax", MINMAX);
    for v in [ReductionVariant::Contiguous, ReductionVariant::Strided(3)] {
        let src = k.source(v);
        for needle in [
            "__device__ unsigned int gpu_ticket;",
            "atom.add.acq_rel.gpu.u32",
            "gpu_take_ticket() == gridDim.x - 1",
            "gpu_ticket = 0u;",
            "__ldcg(",
            "gpu_out[gpu_out_o] = gpu_post(gpu_all, n);",
            "__shfl_down_sync(",
        ] {
            assert!(src.contains(needle), "{v:?} lacks {needle}:\n{src}");
        }
        let name = k.c_name(v);
        let decl = gpu_cuda_source::find_kernel(&src, &name).unwrap_or_else(|e| panic!("{e}\n{src}"));
        assert!(decl.extern_c);
    }
}

/// Every NaN-ignoring reduction, for every real element type, compiles in the variants a launch
/// uses, and its kernel's declaration is readable.
#[test]
fn nan_reductions_compile() {
    use crate::gpuarray::reduce::nan::test_kernels;
    let variants = [
        ReductionVariant::Contiguous,
        ReductionVariant::Strided(2),
        ReductionVariant::AxisBlock(2),
        ReductionVariant::AxisThread(2),
        ReductionVariant::AxisColumns(2),
        ReductionVariant::AxisBlockSplit(2),
        ReductionVariant::AxisPartials,
    ];
    for (name, sources) in test_kernels(&variants) {
        // Every variant for the float types; the contiguous one for the rest (the same text
        // around another element type).
        let all = name.contains("f16") || name.contains("f32") || name.contains("f64");
        for (s, v) in sources
            .iter()
            .zip(&variants)
            .take(if all { variants.len() } else { 1 })
        {
            if let Err(e) = compile_check(s, check_arch(s)) {
                panic!("{name} {v:?} does not compile: {e}\n{s}");
            }
        }
    }
}

#[test]
fn nan_reductions_of_complex_are_refused() {
    use crate::gpuarray::reduce::nan::{nan_kernel, NanOp};
    use crate::gpuarray::reduce::ops::IndexWidth;
    use crate::types::Complex32;
    for op in [NanOp::Sum, NanOp::Max, NanOp::ArgMax] {
        let r = nan_kernel::<Complex32, Complex32>(op, IndexWidth::I64);
        assert!(
            matches!(
                r,
                Err(Error::Argument(
                    crate::error::ArgumentError::UndefinedOnElement { .. }
                ))
            ),
            "{op:?}: {r:?}"
        );
    }
}

/// The one-launch reduction's scratch is `__device__` memory of its module, shared by every
/// launch of the kernel: the loaded module must count as writing variables, so that launches
/// on two streams are ordered one after the other (`driver::ordering::ModuleUses`). Its
/// compiled image must say so.
#[test]
fn the_one_launch_scratch_orders_launches_of_its_module() {
    use crate::compiler::nvrtc::compile;
    use crate::compiler::target::Target;
    use crate::driver::module::vars::module_vars;
    use crate::driver::ordering::ModuleVars;
    let k = minmax_kernel("minmax", MINMAX);
    for v in [ReductionVariant::Contiguous, ReductionVariant::Strided(2)] {
        let src = k.source(v);
        for target in [
            Target::Cubin { major: 9, minor: 0 },
            Target::Ptx { major: 9, minor: 0 },
        ] {
            let image = compile(&src, "r.cu", &[], &[], target)
                .unwrap_or_else(|e| panic!("{v:?}: {e}"))
                .image;
            assert_eq!(module_vars(&image), ModuleVars::Device, "{v:?} {target:?}");
        }
    }
}
