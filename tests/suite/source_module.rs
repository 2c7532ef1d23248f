//! SourceModule, Module and runtime-typed launches on a real GPU, against CPU references.

use std::path::PathBuf;

use gpu_runtime::compiler::CacheStatus;
use gpu_runtime::driver::{CacheConfig, JitOptions, Module, SharedConfig};
use gpu_runtime::launch::{Arg, ArgType};
use gpu_runtime::{kernel, ArgumentError, Context, CopyError, Error, SourceModule};
use gpu_suite::Rng;

const AXPY: &str = r#"
__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"#;

#[kernel(
    r#"
__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"#,
    // Compiled at run time even where the build machine has a GPU (which would ship PTX for
    // it by default): the tests below compare `prepare`'s module with SourceModule's compile.
    embed = []
)]
fn axpy(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpu-rt-gpu-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn random(rng: &mut Rng, n: usize) -> Vec<f32> {
    rng.vec_f32(n)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_runtime_source_runs_through_prepared_args() {
    let ctx = Context::default().unwrap();
    let n = 1000usize;
    let mut rng = Rng::new(41);
    let (x, y) = (random(&mut rng, n), random(&mut rng, n));
    let src = format!("{AXPY}\n__global__ void add_k(float *y, int n) {{ int i = threadIdx.x + blockIdx.x * blockDim.x; if (i < n) y[i] += {}.5f; }}", 3);
    let module = SourceModule::new(src)
        .cache_dir(Some(temp_dir("rt")))
        .load(&ctx)
        .unwrap();
    let f = module.get_function("axpy").unwrap();
    let types = [ArgType::F32, ArgType::ConstPtr, ArgType::MutPtr, ArgType::I32];
    let k = f.prepare_args(&types).unwrap();
    let xd = ctx.to_device(&x).unwrap();
    let mut yd = ctx.to_device(&y).unwrap();
    k.prepared_call(
        4,
        256,
        &[
            Arg::F32(1.5),
            Arg::input(&xd),
            Arg::output(&mut yd),
            Arg::I32(n as i32),
        ],
    )
    .unwrap();
    let add = module
        .get_function("add_k")
        .unwrap()
        .prepare_args(&[ArgType::MutPtr, ArgType::I32])
        .unwrap();
    add.prepared_call(4, 256, &[Arg::output(&mut yd), (n as i32).into()])
        .unwrap();
    let got = yd.to_vec().unwrap();
    for i in 0..n {
        let want = 1.5 * x[i] + y[i] + 3.5;
        assert!(
            (got[i] - want).abs() <= 1e-5 * want.abs().max(1.0),
            "{i}: {} vs {want}",
            got[i]
        );
    }

    // Every mistake is a typed error before anything is launched.
    let bad_decl = f.prepare_args(&[ArgType::F32, ArgType::MutPtr, ArgType::MutPtr, ArgType::I32]);
    assert!(
        matches!(
            &bad_decl,
            Err(Error::Argument(ArgumentError::TypeDiffers { index: 1, parameter, .. })) if &**parameter == "const float *x"
        ),
        "{bad_decl:?}"
    );
    assert!(matches!(
        f.prepare_args(&types[..3]),
        Err(Error::Argument(ArgumentError::TypeCount {
            given: 3,
            expected: 4,
            ..
        }))
    ));
    let xi = ctx.to_device(&vec![0i64; n]).unwrap();
    let mut yd2 = ctx.to_device(&y).unwrap();
    type Case<'a> = (&'static str, Vec<Arg<'a>>, fn(&ArgumentError) -> bool);
    let cases: [Case<'_>; 4] = [
        ("too few", vec![Arg::F32(1.0)], |e| {
            matches!(
                e,
                ArgumentError::ArgCount {
                    given: 1,
                    prepared: 4,
                    ..
                }
            )
        }),
        (
            "a scalar of the wrong type",
            vec![Arg::F64(1.0), Arg::input(&xd), Arg::input(&xd), Arg::I32(1)],
            |e| matches!(e, ArgumentError::ArgDiffers { index: 0, given, .. } if given == "an f64"),
        ),
        (
            "an input buffer for a T*",
            vec![Arg::F32(1.0), Arg::input(&xd), Arg::input(&xd), Arg::I32(1)],
            |e| matches!(e, ArgumentError::ArgDiffers { index: 2, .. }),
        ),
        (
            "8-byte elements for float*",
            vec![Arg::F32(1.0), Arg::input(&xi), Arg::output(&mut yd2), Arg::I32(1)],
            |e| {
                matches!(
                    e,
                    ArgumentError::ElementSize {
                        index: 1,
                        given_bytes: 8,
                        expected_bytes: 4,
                        ..
                    }
                )
            },
        ),
    ];
    for (what, args, is_expected) in cases {
        let e = k.prepared_call(1, 1, &args).unwrap_err();
        assert!(matches!(&e, Error::Argument(a) if is_expected(a)), "{what}: {e}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn host_arrays_go_in_and_out_through_call() {
    let ctx = Context::default().unwrap();
    let mut rng = Rng::new(42);
    // PyCUDA's first example: multiply_them(drv.Out(dest), drv.In(a), drv.In(b)).
    let module = SourceModule::new(format!(
        "{AXPY}\n__global__ void multiply_them(float *dest, const float *a, const float *b) {{ int i = threadIdx.x; dest[i] = a[i] * b[i]; }}"
    ))
    .load(&ctx)
    .unwrap();
    let (a, b) = (random(&mut rng, 400), random(&mut rng, 400));
    let mut dest = vec![0f32; 400];
    module
        .get_function("multiply_them")
        .unwrap()
        .call(
            1,
            400,
            &mut [Arg::host_out(&mut dest), Arg::host_in(&a), Arg::host_in(&b)],
        )
        .unwrap();
    let want: Vec<f32> = a.iter().zip(&b).map(|(a, b)| a * b).collect();
    assert_eq!(dest, want);

    // Prepared once from the declaration; an ndarray in, a Vec in and out, many chunks each.
    let axpy = module.get_function("axpy").unwrap().prepare_declared().unwrap();
    assert_eq!(
        axpy.arg_types(),
        [ArgType::F32, ArgType::ConstPtr, ArgType::MutPtr, ArgType::I32]
    );
    let n = 3_000_017;
    let x = gpu_runtime::ndarray::Array2::from_shape_vec((1, n), random(&mut rng, n)).unwrap();
    let mut y = random(&mut rng, n);
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 0.25 * x + y).collect();
    let grid = (n as u32).div_ceil(256);
    axpy.call(
        grid,
        256,
        &mut [
            Arg::F32(0.25),
            Arg::host_in(&x),
            Arg::host_in_out(&mut y),
            Arg::I32(n as i32),
        ],
    )
    .unwrap();
    assert_eq!(y, want);
    // Device memory mixes with host arrays.
    let xd = ctx.to_device(x.as_slice().unwrap()).unwrap();
    let mut y2 = random(&mut rng, n);
    let want: Vec<f32> = x.iter().zip(&y2).map(|(x, y)| -2.0 * x + y).collect();
    axpy.call(
        grid,
        256,
        &mut [
            Arg::F32(-2.0),
            Arg::input(&xd),
            Arg::host_in_out(&mut y2),
            Arg::I32(n as i32),
        ],
    )
    .unwrap();
    assert_eq!(y2, want);

    // Mistakes are typed errors, and nothing is launched or copied back.
    let mut untouched = y2.clone();
    let wide = vec![0f64; 16];
    let square = gpu_runtime::ndarray::Array2::<f32>::zeros((4, 4));
    for what in [
        "an Out array for a const pointer",
        "8-byte elements for float*",
        "an f64 for a float",
    ] {
        let mut args = match what {
            "an Out array for a const pointer" => vec![
                Arg::F32(1.0),
                Arg::host_out(&mut dest),
                Arg::host_in_out(&mut untouched),
                Arg::I32(1),
            ],
            "8-byte elements for float*" => vec![
                Arg::F32(1.0),
                Arg::host_in(&wide),
                Arg::host_in_out(&mut untouched),
                Arg::I32(1),
            ],
            _ => vec![Arg::F64(1.0), Arg::host_in(&a), Arg::host_in(&b), Arg::I32(1)],
        };
        let e = axpy.call(1, 1, &mut args).unwrap_err();
        let index = match what {
            "an Out array for a const pointer" => 1,
            "8-byte elements for float*" => 1,
            _ => 0,
        };
        assert!(
            matches!(
                &e,
                Error::Argument(ArgumentError::ArgDiffers { index: i, .. } | ArgumentError::ElementSize { index: i, .. })
                    if *i == index
            ),
            "{what}: {e}"
        );
    }
    assert_eq!(untouched, y2);
    let e = axpy
        .call(
            1,
            16,
            &mut [
                Arg::F32(1.0),
                Arg::host_in(&square.slice(gpu_runtime::ndarray::s![.., 1..3])),
                Arg::host_in_out(&mut untouched),
                Arg::I32(16),
            ],
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::HostArrayLayout {
                operation: "Arg::host_in",
                ..
            })
        ),
        "{e}"
    );
    // prepared_call launches without copying, so it refuses host arrays.
    let e = axpy
        .prepared_call(
            1,
            1,
            &[
                Arg::F32(1.0),
                Arg::host_in(&a),
                Arg::output(&mut ctx.alloc::<f32>(1).unwrap()),
                Arg::I32(1),
            ],
        )
        .unwrap_err();
    assert!(
        matches!(e, Error::Argument(ArgumentError::HostArgument { index: 1, .. })),
        "{e}"
    );
    // A launch the device refuses leaves the staging usable.
    let e = axpy
        .call(
            1,
            4096,
            &mut [
                Arg::F32(1.0),
                Arg::host_in(&a),
                Arg::host_in_out(&mut untouched),
                Arg::I32(1),
            ],
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch(_)), "{e}");
    let mut small = b.clone();
    axpy.call(
        2,
        256,
        &mut [
            Arg::F32(1.0),
            Arg::host_in(&a),
            Arg::host_in_out(&mut small),
            Arg::I32(400),
        ],
    )
    .unwrap();
    let want: Vec<f32> = a.iter().zip(&b).map(|(a, b)| a + b).collect();
    assert_eq!(small, want);

    // Half-precision scalars and arrays (a product of two halves is exact in f32, so rounding
    // it once to half on the CPU matches the GPU's __hmul).
    use gpu_runtime::half::f16;
    let halves = SourceModule::new(
        "#include <cuda_fp16.h>\n__global__ void hscale(__half *x, __half s, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = __hmul(x[i], s); }",
    )
    .load(&ctx)
    .unwrap();
    let mut x: Vec<f16> = random(&mut rng, 1000).into_iter().map(f16::from_f32).collect();
    let s = f16::from_f32(-1.375);
    let want: Vec<f16> = x.iter().map(|v| f16::from_f32(v.to_f32() * s.to_f32())).collect();
    halves
        .get_function("hscale")
        .unwrap()
        .call(
            4,
            256,
            &mut [Arg::host_in_out(&mut x), Arg::F16(s), Arg::I32(1000)],
        )
        .unwrap();
    assert_eq!(x, want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_macro_and_source_module_share_one_compile_per_context() {
    let ctx = Context::default().unwrap();
    ctx.clear_module_cache();
    let dir = temp_dir("share");
    let k = axpy::prepare(&ctx).unwrap();
    let from_static = SourceModule::from_static(axpy::source()).load(&ctx).unwrap();
    assert_eq!(
        from_static.get_function("axpy").unwrap().raw(),
        k.function().raw()
    );
    let runtime = SourceModule::new(axpy::source().source())
        .name(axpy::source().name())
        .no_extern_c(true)
        .kernels(["axpy"])
        .load(&ctx)
        .unwrap();
    assert_eq!(
        runtime.raw(),
        from_static.raw(),
        "same source and options: same module"
    );
    // A different cache directory is not part of the module's identity.
    let again = SourceModule::from_static(axpy::source())
        .cache_dir(Some(&dir))
        .load(&ctx)
        .unwrap();
    assert_eq!(again.raw(), from_static.raw());
    gpu_runtime::tools::clear_context_caches();
    let fresh = SourceModule::from_static(axpy::source())
        .cache_dir(Some(&dir))
        .load(&ctx)
        .unwrap();
    assert_ne!(fresh.raw(), from_static.raw(), "cleared caches load anew");
    assert_eq!(fresh.cache_status(), Some(CacheStatus::Miss));
    ctx.clear_module_cache();
    let hit = SourceModule::from_static(axpy::source())
        .cache_dir(Some(&dir))
        .load(&ctx)
        .unwrap();
    assert_eq!(hit.cache_status(), Some(CacheStatus::Hit));
    // The kernel from a cache hit computes the right thing.
    let mut rng = Rng::new(5);
    let (x, mut y) = (random(&mut rng, 300), random(&mut rng, 300));
    let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| 2.0 * a + b).collect();
    let f = hit
        .get_function("axpy")
        .unwrap()
        .prepare_args(&[ArgType::F32, ArgType::ConstPtr, ArgType::MutPtr, ArgType::I32])
        .unwrap();
    let xd = ctx.to_device(&x).unwrap();
    let mut yd = ctx.to_device(&y).unwrap();
    f.prepared_call(
        2,
        256,
        &[
            Arg::F32(2.0),
            Arg::input(&xd),
            Arg::output(&mut yd),
            Arg::I32(300),
        ],
    )
    .unwrap();
    y = yd.to_vec().unwrap();
    gpu_suite::assert_close(&y, &want, 1e-6);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn globals_attributes_and_cache_preferences() {
    let ctx = Context::default().unwrap();
    let src = "__constant__ float coeffs[4];\n__device__ int counter;\n__global__ void poly(const float *x, float *y, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) { float v = x[i]; y[i] = coeffs[0] + v * (coeffs[1] + v * (coeffs[2] + v * coeffs[3])); }\n  if (i == 0) counter = n;\n}\n";
    let module = SourceModule::new(src)
        .cache_dir(Some(temp_dir("glob")))
        .load(&ctx)
        .unwrap();
    let coeffs = module.get_global("coeffs").unwrap();
    assert_eq!(coeffs.size_bytes(), 16);
    let mut rng = Rng::new(9);
    let c = random(&mut rng, 4);
    coeffs.write(&c).unwrap();
    assert!(matches!(
        coeffs.write(&c[..3]),
        Err(Error::Copy(CopyError::GlobalSize {
            global_bytes: 16,
            host_bytes: 12,
            len: 3,
            element_bytes: 4,
            ..
        }))
    ));
    assert!(matches!(
        module.get_global("nope"),
        Err(Error::GlobalNotFound { .. })
    ));
    let n = 777;
    let x = random(&mut rng, n);
    let f = module.get_function("poly").unwrap();
    assert!(f.num_regs().unwrap() > 0);
    assert!(f.max_threads_per_block().unwrap() >= 256);
    assert_eq!(f.shared_size_bytes().unwrap(), 0);
    assert_eq!(f.local_size_bytes().unwrap(), 0);
    let (cc_major, cc_minor) = ctx.compute_capability();
    assert_eq!(f.binary_version().unwrap(), cc_major * 10 + cc_minor);
    f.set_cache_config(CacheConfig::PreferL1).unwrap();
    f.set_shared_config(SharedConfig::FourByteBankSize).unwrap();
    let k = f
        .prepare_args(&[ArgType::ConstPtr, ArgType::MutPtr, ArgType::I32])
        .unwrap();
    let xd = ctx.to_device(&x).unwrap();
    let mut yd = ctx.alloc_zeros::<f32>(n).unwrap();
    k.prepared_call(
        4,
        256,
        &[Arg::input(&xd), Arg::output(&mut yd), Arg::I32(n as i32)],
    )
    .unwrap();
    let want: Vec<f32> = x
        .iter()
        .map(|v| c[0] + v * (c[1] + v * (c[2] + v * c[3])))
        .collect();
    gpu_suite::assert_close(&yd.to_vec().unwrap(), &want, 1e-5);
    let mut counter = [0i32];
    module.get_global("counter").unwrap().read(&mut counter).unwrap();
    assert_eq!(counter[0], n as i32);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn modules_load_from_ptx_files_and_buffers_with_jit_options() {
    let ctx = Context::default().unwrap();
    let ptx = SourceModule::new(AXPY)
        .arch("compute_75")
        .cache_dir(None::<PathBuf>)
        .compile()
        .unwrap();
    let dir = temp_dir("ptx");
    let path = dir.join("axpy.ptx");
    // Without the trailing NUL, as a PTX file on disk usually is.
    std::fs::write(&path, &ptx.image[..ptx.image.len() - 1]).unwrap();
    let jit = JitOptions::default()
        .max_registers(32)
        .optimization_level(3)
        .log_verbose(true);
    let m = Module::from_file(&ctx, &path, &jit).unwrap();
    assert!(!m.jit_info_log().is_empty(), "a verbose JIT writes an info log");
    let f = m.get_function("axpy").unwrap();
    assert!(f.num_regs().unwrap() <= 32);
    assert!(
        matches!(
            f.prepare_args(&[ArgType::F32]),
            Err(Error::Argument(ArgumentError::NoDeclaration { .. }))
        ),
        "no declaration for an image"
    );
    // SAFETY: axpy takes (float, const float*, float*, int), as listed.
    let k = unsafe {
        f.prepare_args_unchecked(&[ArgType::F32, ArgType::ConstPtr, ArgType::MutPtr, ArgType::I32])
    }
    .unwrap();
    let mut rng = Rng::new(3);
    let (x, y) = (random(&mut rng, 500), random(&mut rng, 500));
    let xd = ctx.to_device(&x).unwrap();
    let mut yd = ctx.to_device(&y).unwrap();
    k.prepared_call(
        2,
        256,
        &[
            Arg::F32(-0.5),
            Arg::input(&xd),
            Arg::output(&mut yd),
            Arg::I32(500),
        ],
    )
    .unwrap();
    let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| -0.5 * a + b).collect();
    gpu_suite::assert_close(&yd.to_vec().unwrap(), &want, 1e-6);

    let cubin = SourceModule::new(AXPY)
        .cache_dir(None::<PathBuf>)
        .load(&ctx)
        .unwrap();
    assert!(cubin.get_function("axpy").is_ok());
    let bad = Module::from_image(
        &ctx,
        b".version 8.0\n.target sm_75\nthis is not ptx",
        &JitOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(bad, Error::ModuleLoad { ref log, .. } if !log.is_empty()),
        "{bad}"
    );
    assert!(matches!(
        Module::from_file(&ctx, dir.join("missing.ptx"), &JitOptions::default()),
        Err(Error::Io { action: "read", ref source, .. }) if source.kind() == std::io::ErrorKind::NotFound
    ));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn nvcc_compiles_with_keep_and_include_dirs() {
    let ctx = Context::default().unwrap();
    let inc = temp_dir("nvcc-inc");
    std::fs::write(inc.join("scale.h"), "#define SCALE 4.0f\n").unwrap();
    let src = "#include \"scale.h\"\n__global__ void scale(float *x, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] *= SCALE;\n}\n";
    let m = SourceModule::new(src)
        .nvcc()
        .keep(true)
        .include_dir(&inc)
        .options(["-O3"])
        .cache_dir(Some(temp_dir("nvcc-cache")))
        .load(&ctx)
        .unwrap();
    let build = m
        .build_dir()
        .expect("keep gives the build directory")
        .to_path_buf();
    assert!(build.join("kernel.cu").is_file());
    assert!(build.join("kernel.cubin").is_file());
    let mut rng = Rng::new(77);
    let x = random(&mut rng, 400);
    let mut xd = ctx.to_device(&x).unwrap();
    let k = m
        .get_function("scale")
        .unwrap()
        .prepare_args(&[ArgType::MutPtr, ArgType::I32])
        .unwrap();
    k.prepared_call(2, 256, &[Arg::output(&mut xd), Arg::I32(400)])
        .unwrap();
    let want: Vec<f32> = x.iter().map(|v| v * 4.0).collect();
    gpu_suite::assert_close(&xd.to_vec().unwrap(), &want, 0.0);
    std::fs::remove_dir_all(&build).unwrap();

    let err = SourceModule::new("__global__ void k() { undefined_thing; }")
        .nvcc()
        .cache_dir(None::<PathBuf>)
        .compile()
        .unwrap_err();
    match err {
        Error::Compile(e) => {
            // a message test: the compiler's log and the excerpt show the offending source.
            assert!(e.log.contains("undefined_thing"), "{}", e.log);
            assert!(
                e.options.iter().any(|o| o.starts_with("-arch=sm_")),
                "{:?}",
                e.options
            );
            assert!(e.to_string().contains(">   1 |"), "{e}");
        }
        other => panic!("expected a compile error, got {other}"),
    }
}

/// Threads asking one context for one source at once share one build (one module), and
/// threads asking for different sources build them at once (the module map is not locked
/// across a compile); every kernel computes its own result.
#[test]
#[ignore = "needs a CUDA GPU"]
fn threads_share_one_build_of_a_source_and_build_different_sources_at_once() {
    use gpu_runtime::driver::ContextFlags;
    let ctx = Context::create(Context::default().unwrap().device(), ContextFlags::SCHED_AUTO).unwrap();
    // A source no earlier run compiled: its build is a miss in this context and on disk.
    let tag = format!("{}_{:?}", std::process::id(), std::time::SystemTime::now());
    let scaled = |k: u32| {
        format!(
            "// {tag}\n__global__ void scaled(const float *x, float *y, int n) {{\n    \
             int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = {k}.0f * x[i];\n}}\n"
        )
    };
    let run = |module: &gpu_runtime::driver::Module, k: u32| {
        let mut rng = Rng::new(u64::from(k));
        let x = random(&mut rng, 1000);
        let xd = ctx.to_device(&x).unwrap();
        let mut yd = ctx.alloc_zeros::<f32>(x.len()).unwrap();
        module
            .get_function("scaled")
            .unwrap()
            .prepare_args(&[ArgType::ConstPtr, ArgType::MutPtr, ArgType::I32])
            .unwrap()
            .prepared_call(4, 256, &[Arg::input(&xd), Arg::output(&mut yd), Arg::I32(1000)])
            .unwrap();
        let want: Vec<f32> = x.iter().map(|v| k as f32 * v).collect();
        gpu_suite::assert_close(&yd.to_vec().unwrap(), &want, 0.0);
    };
    let same: Vec<Module> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| s.spawn(|| SourceModule::new(scaled(3)).load(&ctx).unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for m in &same {
        assert_eq!(m.raw(), same[0].raw(), "one source, one module");
    }
    run(&same[0], 3);
    std::thread::scope(|s| {
        for k in 4..12 {
            let (ctx, scaled, run) = (&ctx, &scaled, &run);
            s.spawn(move || {
                let m = SourceModule::new(scaled(k)).load(ctx).unwrap();
                run(&m, k);
            });
        }
    });
    // A source that does not compile, asked for by eight threads at once: each gets the
    // compile error with its log (the thread that built returns its own, the others build
    // again for theirs), none waits forever, and the context still builds what compiles.
    let broken = format!("// {tag}\n__global__ void broken(float *y) {{ y[0] = undefined_name; }}\n");
    std::thread::scope(|s| {
        for _ in 0..8 {
            let (ctx, broken) = (&ctx, &broken);
            s.spawn(move || match SourceModule::new(broken.clone()).load(ctx) {
                Err(Error::Compile(e)) => assert!(e.log.contains("undefined_name"), "{}", e.log),
                other => panic!("expected the compile error, got {other:?}"),
            });
        }
    });
    run(&SourceModule::new(scaled(12)).load(&ctx).unwrap(), 12);
}
