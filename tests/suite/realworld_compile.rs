//! Real-world CUDA C under real NVRTC (and nvJitLink), no GPU: vector-type layouts, struct
//! layouts, standard headers, missing headers, linking relocatable sources.

use crate::candle_kernels;
use crate::realworld_kernels as kernels;

use std::mem::{align_of, offset_of, size_of};

use gpu_runtime::compiler::layout::{check_layout, probe_constants};
use gpu_runtime::compiler::{DynamicModule, LinkInput, Target};
use gpu_runtime::types::VECTOR_TYPES;
use gpu_runtime::Error;
use kernels::*;

const SM90: Target = Target::Cubin { major: 9, minor: 0 };

#[test]
fn every_vector_type_has_the_size_and_alignment_nvrtc_gives_it() {
    let mut exprs = Vec::new();
    for (c, _, _) in VECTOR_TYPES {
        exprs.push(format!("sizeof({c})"));
        exprs.push(format!("alignof({c})"));
    }
    let refs: Vec<&str> = exprs.iter().map(String::as_str).collect();
    let got = probe_constants("#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n", &refs).unwrap();
    assert_eq!(VECTOR_TYPES.len(), 50);
    for (i, (c, size, align)) in VECTOR_TYPES.iter().enumerate() {
        assert_eq!(
            (got[2 * i] as usize, got[2 * i + 1] as usize),
            (*size, *align),
            "C `{c}` (sizeof, alignof) per NVRTC vs the Rust type"
        );
    }
    // The notable ones, spelled out.
    assert_eq!(
        (
            std::mem::size_of::<gpu_runtime::types::Float3>(),
            std::mem::align_of::<gpu_runtime::types::Float3>()
        ),
        (12, 4)
    );
    assert_eq!(
        (
            std::mem::size_of::<gpu_runtime::types::Float4>(),
            std::mem::align_of::<gpu_runtime::types::Float4>()
        ),
        (16, 16)
    );
}

#[test]
fn fp8_types_match_the_c_types() {
    use gpu_runtime::types::{Fp8E4M3, Fp8E5M2, Fp8x2E4M3, Fp8x2E5M2, Fp8x4E4M3, Fp8x4E5M2};
    let rust = [
        (Fp8E4M3::C_NAME, size_of::<Fp8E4M3>(), align_of::<Fp8E4M3>()),
        (Fp8E5M2::C_NAME, size_of::<Fp8E5M2>(), align_of::<Fp8E5M2>()),
        (Fp8x2E4M3::C_NAME, size_of::<Fp8x2E4M3>(), align_of::<Fp8x2E4M3>()),
        (Fp8x2E5M2::C_NAME, size_of::<Fp8x2E5M2>(), align_of::<Fp8x2E5M2>()),
        (Fp8x4E4M3::C_NAME, size_of::<Fp8x4E4M3>(), align_of::<Fp8x4E4M3>()),
        (Fp8x4E5M2::C_NAME, size_of::<Fp8x4E5M2>(), align_of::<Fp8x4E5M2>()),
    ];
    let exprs: Vec<String> = rust
        .iter()
        .flat_map(|(c, _, _)| [format!("sizeof({c})"), format!("alignof({c})")])
        .collect();
    let refs: Vec<&str> = exprs.iter().map(String::as_str).collect();
    let got = probe_constants("#include <cuda_fp8.h>\n", &refs).unwrap();
    for (i, (c, size, align)) in rust.iter().enumerate() {
        assert_eq!(
            (got[2 * i] as usize, got[2 * i + 1] as usize),
            (*size, *align),
            "C `{c}` (sizeof, alignof) per NVRTC vs the Rust type"
        );
    }
}

#[test]
fn candle_kernel_files_declared_with_file_alone_compile() {
    // reduce.cu waits for issue 42's part 3 (its `int64_t`s), see candle_kernels.rs.
    for source in [
        candle_kernels::unary::uexp_f32::source(),
        candle_kernels::binary::badd_f32::source(),
        candle_kernels::affine::affine_f32::source(),
        candle_kernels::cast::cast_u8_f32::source(),
        candle_kernels::fill::fill_f32::source(),
        candle_kernels::ternary::where_u8_f32::source(),
        candle_kernels::indexing::is_u32_f32::source(),
        candle_kernels::sort::asort_asc_f32::source(),
    ] {
        let out = source.compile(SM90).unwrap_or_else(|e| panic!("{e}"));
        assert!(out.image.starts_with(b"\x7fELF"));
    }
}

#[test]
fn half_types_match_the_c_types() {
    let got = probe_constants(
        "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n",
        &[
            "sizeof(__half)",
            "alignof(__half)",
            "sizeof(__nv_bfloat16)",
            "alignof(__nv_bfloat16)",
        ],
    )
    .unwrap();
    assert_eq!(got, [2, 2, 2, 2]);
    assert_eq!(std::mem::size_of::<gpu_runtime::half::f16>(), 2);
    assert_eq!(std::mem::align_of::<gpu_runtime::half::bf16>(), 2);
}

#[test]
fn struct_layout_is_checked_against_the_c_struct() {
    check_layout::<Params>(
        PARAMS_C,
        "Params",
        &[
            ("scale", offset_of!(Params, scale)),
            ("offset", offset_of!(Params, offset)),
            ("bias", offset_of!(Params, bias)),
            ("flag", offset_of!(Params, flag)),
        ],
    )
    .unwrap();

    // A Rust struct that forgot a field: the sizes differ, and the error says by how much.
    #[derive(Clone, Copy)]
    #[repr(C)]
    struct Short {
        scale: f32,
        offset: i32,
        bias: f64,
    }
    match check_layout::<Short>(PARAMS_C, "Params", &[]) {
        Err(Error::LayoutMismatch { detail, .. }) => {
            assert!(detail.contains("24") && detail.contains("16"), "{detail}")
        }
        other => panic!("expected a layout mismatch, got {other:?}"),
    }
    // Same size, fields swapped.
    #[derive(Clone, Copy)]
    #[repr(C)]
    struct Swapped {
        offset: i32,
        scale: f32,
        bias: f64,
        flag: i8,
    }
    let err =
        check_layout::<Swapped>(PARAMS_C, "Params", &[("scale", offset_of!(Swapped, scale))]).unwrap_err();
    assert!(
        err.to_string()
            .contains("field `scale` is at byte 0 in C but at byte 4 in Rust"),
        "{err}"
    );
}

#[test]
fn real_world_kernels_compile() {
    for source in [
        fma3::source(),
        mix::source(),
        apply_params::source(),
        headers::source(),
        math_constants::source(),
        templates::axpby::source(),
        say::source(),
        reverse4000::source(),
        reverse_dyn::source(),
        scale_bias::source(),
        fp8_convert::source(),
        row_sum_sq_256::source(),
        row_sum_32::source(),
        scaled_copy::source(),
    ] {
        let out = source.compile(SM90).unwrap_or_else(|e| panic!("{e}"));
        assert!(out.image.starts_with(b"\x7fELF"));
    }
}

#[test]
fn each_standard_header_compiles_alone() {
    for h in [
        "stdio.h",
        "cstdio",
        "math.h",
        "cmath",
        "stdint.h",
        "cstdint",
        "stddef.h",
        "cstddef",
        "cuda_fp16.h",
        "cuda_bf16.h",
        "cuda/std/cstdint",
    ] {
        let src = format!("#include <{h}>\nextern \"C\" __global__ void k(int *x) {{ x[0] = 1; }}\n");
        gpu_runtime::compiler::compile(&src, "h.cu", &["k"], &[], SM90)
            .unwrap_or_else(|e| panic!("<{h}>: {e}"));
    }
}

#[test]
fn a_source_module_includes_cpp_headers_and_keeps_c_names_and_line_numbers() {
    // SourceModule wraps the code in extern "C", but not the leading includes: cuda_fp16.h
    // declares overloads that C linkage would refuse.
    let src = "// half precision\n#include <cuda_fp16.h>\n\n__global__ void hscale(__half *x, __half s, int n) {\n    int i = threadIdx.x;\n    if (i < n) x[i] = __hmul(x[i], s);\n}\n";
    let report = gpu_runtime::SourceModule::new(src)
        .arch("sm_90")
        .cache_dir(None::<std::path::PathBuf>)
        .kernels(["hscale"])
        .compile_report()
        .unwrap();
    assert_eq!(
        report.module.lowered_names,
        ["hscale"],
        "a C name, not a mangled one"
    );
    // An error in the code still points at its line as written (line 6 here).
    let bad = src.replace("__hmul(x[i], s)", "__hmul(x[i], undefined_name)");
    let e = gpu_runtime::SourceModule::new(bad)
        .arch("sm_90")
        .cache_dir(None::<std::path::PathBuf>)
        .compile_report()
        .unwrap_err();
    assert!(e.to_string().contains("(6): error"), "{e}");
}

#[test]
fn a_missing_header_is_a_compile_error_naming_it_and_the_search_path() {
    let src = "#include <no_such_header.h>\n__global__ void k() {}\n";
    match gpu_runtime::compiler::compile(src, "m.cu", &["k"], &[], SM90) {
        Err(Error::Compile(e)) => {
            let text = e.to_string();
            assert!(text.contains("`no_such_header.h` was not found"), "{text}");
            // Where it was looked for: the CUDA headers' directories, or (none found) what to
            // install.
            assert!(
                text.contains("none of the CUDA header directories (-I")
                    || text.contains("pip install nvidia-cuda-runtime nvidia-cuda-cccl"),
                "{text}"
            );
            assert!(text.contains("built-in headers"), "{text}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

const LIB_SRC: &str = "__device__ float twice(float x) { return 2.0f * x; }\n";
const USE_SRC: &str = r#"
__device__ float twice(float x);
extern "C" __global__ void k(float *y) { y[threadIdx.x] = twice(y[threadIdx.x]); }
"#;

#[test]
fn two_relocatable_sources_link_into_one_image() {
    let mut m = DynamicModule::new();
    m.add_source(LIB_SRC, "lib.cu", &[], &[])
        .add_source(USE_SRC, "use.cu", &["k"], &[]);
    let out = m.link_image(SM90, (9, 0)).unwrap();
    assert!(out.image.starts_with(b"\x7fELF"), "a cubin");
    assert_eq!(out.lowered_names, ["k"]);
    // Without the source defining `twice`, the link fails and says what is undefined.
    let mut alone = DynamicModule::new();
    alone.add_source(USE_SRC, "use.cu", &["k"], &[]);
    match alone.link_image(SM90, (9, 0)) {
        Err(Error::Link { log, .. }) => assert!(log.contains("twice") || log.contains("Undefined"), "{log}"),
        other => panic!("expected a link error, got {other:?}"),
    }
}

#[test]
fn precompiled_ptx_links_with_a_source() {
    let ptx = gpu_runtime::compiler::compile(
        LIB_SRC,
        "lib.cu",
        &[],
        &["-rdc=true"],
        Target::Ptx { major: 9, minor: 0 },
    )
    .unwrap();
    let mut m = DynamicModule::new();
    m.add_data(
        ptx.image.strip_suffix(&[0]).unwrap().to_vec(),
        LinkInput::Ptx,
        "lib.ptx",
    )
    .add_source(USE_SRC, "use.cu", &["k"], &[]);
    assert!(m.link_image(SM90, (9, 0)).unwrap().image.starts_with(b"\x7fELF"));
}

#[test]
fn a_kernel_launching_a_kernel_links_with_cudadevrt() {
    // The macro's two-source module, linked with the device runtime.
    let out = dynpar::parent::source()
        .compile(SM90)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.image.starts_with(b"\x7fELF"));
    assert_eq!(out.lowered_names, ["parent", "child"]);
    // Without cudadevrt the link fails with a hint.
    let mut m = DynamicModule::new();
    m.add_source(
        r#"extern "C" __global__ void c(int *x) { x[0] = 1; }
           extern "C" __global__ void p(int *x) { c<<<1, 1>>>(x); }"#,
        "p.cu",
        &["p"],
        &[],
    );
    match m.link_image(SM90, (9, 0)) {
        Err(Error::Link { log, .. }) => assert!(log.contains("cudadevrt"), "{log}"),
        other => panic!("expected a link error, got {other:?}"),
    }
}

#[test]
fn a_missing_device_library_is_a_clear_error() {
    match DynamicModule::new().add_stdlib("no_such_devlib") {
        Err(e @ Error::LibraryNotFound { .. }) => {
            assert!(e.to_string().contains("libno_such_devlib.a"), "{e}")
        }
        other => panic!("expected LibraryNotFound, got {other:?}"),
    }
}

/// `tests/realworld/llm.c/…`.
fn llm_c(path: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("realworld/llm.c")
        .join(path)
}

#[test]
fn files_holding_host_launchers_and_std_vector_compile_unchanged_at_run_time() {
    // llm.c's layernorm_forward.cu: six kernels beside their launchers, a CPU reference and
    // main(), including cuBLAS through common.h; encoder.cuh: kernels beside launchers that use
    // std::vector, std::unordered_map and std::sort. As written, their kernels found by name.
    for (file, kernels) in [
        (
            "dev/cuda/layernorm_forward.cu",
            &["layernorm_forward_kernel3", "layernorm_forward_kernel6"][..],
        ),
        (
            "llmc/encoder.cuh",
            &["encoder_forward_kernel3", "wpe_backward_kernel"][..],
        ),
    ] {
        let path = llm_c(file);
        let source = std::fs::read_to_string(&path).unwrap();
        assert!(source.contains("<<<"), "{file} launches its kernels");
        let include = format!("-I{}", path.parent().unwrap().display());
        let out = gpu_runtime::compiler::compile(&source, "k.cu", kernels, &[&include], SM90)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(out.image.starts_with(b"\x7fELF"), "{file}");
        assert_eq!(out.lowered_names.len(), kernels.len());
        for (k, l) in kernels.iter().zip(&out.lowered_names) {
            assert!(l.contains(k), "{file}: {k} -> {l}");
        }
    }
    // Declared through `#[kernel(file = …)]` (checked at build time): its run-time compile.
    let out = layernorm_forward_kernel3::source()
        .compile(SM90)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.image.starts_with(b"\x7fELF"));
    // With `-default-device` NVRTC is asked to take the host code as device code: it is not
    // left out, and fails on what only the host has.
    let path = llm_c("dev/cuda/layernorm_forward.cu");
    let source = std::fs::read_to_string(&path).unwrap();
    let include = format!("-I{}", path.parent().unwrap().display());
    let e = gpu_runtime::compiler::compile(&source, "k.cu", &[], &[&include, "-default-device"], SM90)
        .expect_err("host code compiled as device code");
    assert!(matches!(e, Error::Compile(_)), "{e}");
}

#[test]
fn an_error_in_a_built_in_header_names_it_as_built_in() {
    // A source declaring `int64_t` as another type than the built-in <stdint.h> does: the
    // message at the built-in header's line says whose header it is.
    let src = "#include <stdint.h>\ntypedef long int64_t;\n__global__ void k() {}\n";
    match gpu_runtime::compiler::compile(src, "m.cu", &["k"], &[], SM90) {
        Err(Error::Compile(e)) => {
            let text = e.to_string();
            assert!(text.contains("of gpu-runtime's built-in stdint.h"), "{text}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}
