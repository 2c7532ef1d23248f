//! Real NVRTC compiles of every test kernel, and compile errors, on any machine (no GPU).
//! NVRTC must be loadable: `scripts/test.sh` installs it from PyPI when the system has none.

use crate::common;

use gpu_runtime::compiler::{compile, ModuleSource, Target};
use gpu_runtime::{CompileError, Error};

const SM90: Target = Target::Cubin { major: 9, minor: 0 };
const SM80: Target = Target::Cubin { major: 8, minor: 0 };
const PTX75: Target = Target::Ptx { major: 7, minor: 5 };

fn sources() -> Vec<(&'static str, &'static ModuleSource)> {
    vec![
        ("axpy", common::axpy::source()),
        ("affine", common::affine::affine_int::source()),
        ("echo_scalars", common::echo_scalars::source()),
        ("add2d", common::add2d::source()),
        ("block_reverse", common::block_reverse::source()),
        ("apply_affine", common::apply_affine::source()),
        ("pair", common::pair::squares::source()),
        ("scale", common::scale::source()),
    ]
}

#[test]
fn every_test_kernel_compiles_to_cubins_and_ptx() {
    for (name, source) in sources() {
        for target in [SM90, SM80, PTX75] {
            let out = source
                .compile(target)
                .unwrap_or_else(|e| panic!("{name} for {target:?}: {e}"));
            assert_eq!(out.target, target);
            assert_eq!(out.lowered_names.len(), source.kernels().len(), "{name}");
            match target {
                Target::Cubin { .. } => {
                    assert_eq!(&out.image[..4], b"\x7fELF", "{name}: a cubin is an ELF file")
                }
                Target::Ptx { .. } => {
                    let ptx = std::str::from_utf8(&out.image[..out.image.len() - 1]).unwrap();
                    assert!(
                        ptx.contains(".target sm_75"),
                        "{name}: {}",
                        &ptx[..200.min(ptx.len())]
                    );
                    assert_eq!(out.image.last(), Some(&0), "PTX handed to the driver ends in NUL");
                    for lowered in &out.lowered_names {
                        assert!(
                            ptx.contains(&format!(".entry {lowered}")),
                            "{name}: no entry {lowered}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn extern_c_kernels_keep_their_name_and_cxx_kernels_are_found_mangled() {
    let out = common::pair::squares::source().compile(PTX75).unwrap();
    assert_eq!(out.lowered_names[0], "squares", "declared in extern \"C\"");
    assert!(out.lowered_names[1].starts_with("_Z") && out.lowered_names[1].contains("sum_rows"));
}

#[test]
fn every_module_kernel_is_in_one_image() {
    let src = common::affine::affine_int::source();
    assert!(std::ptr::eq(src, common::affine::affine_double::source()));
    assert_eq!(src.kernels().len(), 18);
    let out = src.compile(SM90).unwrap();
    assert_eq!(out.lowered_names.len(), 18);
}

const BROKEN_SYNTAX: &str = "__global__ void k(float *x) {\n    int i = threadIdx.x\n    x[i] = 1.0f;\n}\n";
const UNDEFINED: &str =
    "__global__ void k(float *x) {\n    int i = threadIdx.x;\n\n    x[i] = missing_value;\n}\n";

fn compile_error(src: &str) -> CompileError {
    match compile(src, "broken.cu", &["k"], &[], SM90) {
        Err(Error::Compile(e)) => e,
        other => panic!("expected a compile error, got {other:?}"),
    }
}

#[test]
fn a_syntax_error_carries_the_nvrtc_log_with_its_line() {
    let e = compile_error(BROKEN_SYNTAX);
    assert!(e.log.contains("broken.cu(3)"), "log: {}", e.log);
    assert!(e.log.contains("error"), "log: {}", e.log);
    assert!(e.reported_lines().contains(&3), "{:?}", e.reported_lines());
    let msg = e.to_string();
    assert!(msg.contains(">   3 |     x[i] = 1.0f;"), "{msg}");
    assert!(msg.contains("--gpu-architecture=sm_90"), "{msg}");
    assert!(e.compiler.starts_with("NVRTC 13."), "{}", e.compiler);
}

#[test]
fn an_undefined_identifier_is_reported_at_its_line() {
    let e = compile_error(UNDEFINED);
    assert!(e.log.contains("missing_value"), "log: {}", e.log);
    assert!(e.log.contains("undefined"), "log: {}", e.log);
    assert_eq!(e.reported_lines(), vec![4]);
    assert!(e.source_excerpt().contains(">   4 |     x[i] = missing_value;"));
}

#[test]
fn a_bad_option_is_an_nvrtc_error_not_a_panic() {
    let err = compile(
        "__global__ void k() {}",
        "k.cu",
        &["k"],
        &["--no-such-option"],
        SM90,
    )
    .unwrap_err();
    assert!(matches!(err, Error::Nvrtc { .. } | Error::Compile(_)), "{err:?}");
}

#[test]
fn the_device_target_falls_back_to_ptx_for_unknown_architectures() {
    let archs = gpu_runtime::compiler::supported_archs().unwrap();
    assert!(archs.contains(&90) && archs.contains(&80), "{archs:?}");
    assert_eq!(Target::for_device((9, 0)).unwrap(), SM90);
    // A future device NVRTC does not know gets PTX for the newest architecture it does know.
    let newest = *archs.iter().max().unwrap();
    assert_eq!(
        Target::for_device((99, 9)).unwrap(),
        Target::Ptx {
            major: newest / 10,
            minor: newest % 10
        }
    );
    assert!(Target::for_device((1, 0)).is_err());
}
