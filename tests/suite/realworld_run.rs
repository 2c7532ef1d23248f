//! Real-world CUDA C on a real GPU, each checked against a CPU reference on random data.
//! Run on a GPU machine: `cargo test --test suite -- --ignored realworld_run::`.

use crate::realworld_kernels as kernels;

use gpu_runtime::launch::{Capture, GraphBuffer, GraphInput};
use gpu_runtime::types::{Double2, Float3, Float4, Int2, UChar4};
use gpu_runtime::Stream;
use gpu_suite::{assert_close, Rng};
use kernels::*;

use crate::common::{ctx, test_path};

fn flat3(v: &[Float3]) -> Vec<f32> {
    v.iter().flat_map(|p| <[f32; 3]>::from(*p)).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn float3_by_value_and_in_buffers() {
    let ctx = ctx();
    let n = 10_007;
    let mut rng = Rng::new(91);
    let a: Vec<Float3> = (0..n)
        .map(|_| Float3::new(rng.f32(), rng.f32(), rng.f32()))
        .collect();
    let v = Float3::new(rng.f32(), rng.f32(), rng.f32());
    let s = rng.f32();
    let k = fma3::prepare(&ctx).unwrap();
    let ad = ctx.to_device(&a).unwrap();
    let mut out = ctx.to_device(&vec![Float3::default(); n]).unwrap();
    k.prepared_call(((n as u32).div_ceil(128),), (128,), v, s, &ad, &mut out, n as i32)
        .unwrap();
    let want: Vec<Float3> = a
        .iter()
        .map(|p| Float3::new(p.x * s + v.x, p.y * s + v.y, p.z * s + v.z))
        .collect();
    assert_close(&flat3(&out.to_vec().unwrap()), &flat3(&want), 1e-6);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn vector_types_in_ndarray_and_vec_buffers() {
    let ctx = ctx();
    let n = 4099;
    let mut rng = Rng::new(92);
    let c = ndarray::Array1::from_iter((0..n).map(|_| {
        let r = rng.next_u64().to_le_bytes();
        UChar4::new(r[0], r[1], r[2], r[3])
    }));
    let p: Vec<Int2> = (0..n)
        .map(|_| Int2::new(rng.next_u64() as i32, rng.next_u64() as i32))
        .collect();
    let k = mix::prepare(&ctx).unwrap();
    let (cd, pd) = (
        ctx.to_device(c.as_slice().unwrap()).unwrap(),
        ctx.to_device(&p).unwrap(),
    );
    let mut f = ctx.to_device(&vec![Float4::default(); n]).unwrap();
    let mut d = ctx.to_device(&vec![Double2::default(); n]).unwrap();
    k.prepared_call(
        ((n as u32).div_ceil(256),),
        (256,),
        &cd,
        &pd,
        &mut f,
        &mut d,
        n as i32,
    )
    .unwrap();
    let (f, d) = (f.to_vec().unwrap(), d.to_vec().unwrap());
    for i in 0..n {
        let ci = c[i];
        assert_eq!(
            f[i],
            Float4::new(ci.x as f32, ci.y as f32, ci.z as f32, ci.w as f32),
            "float4 {i}"
        );
        assert_eq!(
            d[i],
            Double2::new(p[i].x as f64 * 0.5, p[i].y as f64 * 0.25),
            "double2 {i}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn struct_by_value() {
    let ctx = ctx();
    let n = 5000;
    let mut rng = Rng::new(93);
    let x = rng.vec_f32(n);
    let p = Params {
        scale: rng.f32() + 0.5,
        offset: (rng.next_u64() % 100) as i32 - 50,
        bias: rng.f64(),
        flag: 1,
    };
    let mut y = vec![0.0f64; n];
    apply_params(&ctx, ((n as u32).div_ceil(256),), (256,), p, &x, &mut y, n as i32).unwrap();
    for i in 0..n {
        let want = (x[i] * p.scale) as f64 + p.bias + p.offset as f64;
        assert!(
            (y[i] - want).abs() <= 1e-9 * want.abs().max(1.0),
            "{i}: {} vs {want}",
            y[i]
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn half_and_bfloat16_arguments_with_standard_headers() {
    use gpu_runtime::half::{bf16, f16};
    let ctx = ctx();
    let n = 3001;
    let mut rng = Rng::new(94);
    let h: Vec<f16> = (0..n).map(|_| f16::from_f32(rng.f32())).collect();
    let b: Vec<bf16> = (0..n).map(|_| bf16::from_f32(rng.f32())).collect();
    let k = headers::prepare(&ctx).unwrap();
    let (hd, bd) = (ctx.to_device(&h).unwrap(), ctx.to_device(&b).unwrap());
    let mut out = ctx.to_device(&vec![0.0f32; n]).unwrap();
    k.prepared_call(((n as u32).div_ceil(256),), (256,), &hd, &bd, &mut out, n as i32)
        .unwrap();
    let want: Vec<f32> = h
        .iter()
        .zip(&b)
        .map(|(h, b)| h.to_f32() + b.to_f32() + 2.0)
        .collect();
    assert_close(&out.to_vec().unwrap(), &want, 1e-6);
}

/// INFINITY, NAN, HUGE_VAL and HUGE_VALF of the built-in `<math.h>` have their IEEE 754 values
/// on the device (NAN's bits are glibc's positive quiet NaN).
#[test]
#[ignore = "needs a CUDA GPU"]
fn math_h_infinity_nan_and_huge_val_have_their_values() {
    let ctx = ctx();
    let n = 4099;
    let x = Rng::new(95).vec_f32(n);
    let (mut f, mut d) = (vec![0.0f32; n], vec![0.0f64; n]);
    let grid = ((n as u32).div_ceil(256),);
    math_constants(&ctx, grid, (256,), &x, &mut f, &mut d, n as i32).unwrap();
    for (i, &v) in x.iter().enumerate() {
        let want_f = if v > 0.75 {
            f32::INFINITY
        } else if v > 0.5 {
            f32::NEG_INFINITY
        } else if v > 0.25 {
            f32::from_bits(0x7fc0_0000)
        } else {
            v
        };
        let want_d = if v > 0.5 { f64::INFINITY } else { f64::from(v) };
        assert_eq!(f[i].to_bits(), want_f.to_bits(), "f[{i}] for x = {v}");
        assert_eq!(d[i].to_bits(), want_d.to_bits(), "d[{i}] for x = {v}");
    }
}

/// Two kernel templates of one `#[kernel] mod`, each launched for both instantiations (`f32`
/// and `f64`), beside the module's plain kernel, against the CPU reference.
#[test]
#[ignore = "needs a CUDA GPU"]
fn templates_instantiated_in_a_module() {
    let ctx = ctx();
    let n = 5003;
    let mut rng = Rng::new(96);
    let grid = ((n as u32).div_ceil(256),);
    let x32 = rng.vec_f32(n);
    let y32 = rng.vec_f32(n);
    let (a, b) = (rng.f32(), rng.f32());
    let mut got = y32.clone();
    templates::axpby::<f32>(&ctx, grid, (256,), a, &x32, b, &mut got, n as i32).unwrap();
    let want: Vec<f32> = x32.iter().zip(&y32).map(|(x, y)| a * x + b * y).collect();
    assert_close(&got, &want, 1e-6);
    templates::square_sum::<f32>(&ctx, grid, (256,), &x32, &mut got, n as i32).unwrap();
    let want: Vec<f32> = x32.iter().zip(&want).map(|(x, w)| x * x + w).collect();
    assert_close(&got, &want, 1e-6);

    let x64: Vec<f64> = (0..n).map(|_| rng.f64()).collect();
    let y64: Vec<f64> = (0..n).map(|_| rng.f64()).collect();
    let (a, b) = (rng.f64(), rng.f64());
    let k = templates::axpby::prepare::<f64>(&ctx).unwrap();
    let xd = ctx.to_device(&x64).unwrap();
    let mut yd = ctx.to_device(&y64).unwrap();
    k.prepared_call(grid, (256,), a, &xd, b, &mut yd, n as i32)
        .unwrap();
    let mut got = yd.to_vec().unwrap();
    for i in 0..n {
        let want = a * x64[i] + b * y64[i];
        assert!(
            (got[i] - want).abs() <= 1e-12 * (1.0 + want.abs()),
            "axpby<double>[{i}]: {} vs {want}",
            got[i]
        );
    }
    let before = got.clone();
    templates::square_sum::<f64>(&ctx, grid, (256,), &x64, &mut got, n as i32).unwrap();
    for i in 0..n {
        let want = x64[i] * x64[i] + before[i];
        assert!(
            (got[i] - want).abs() <= 1e-12 * (1.0 + want.abs()),
            "square_sum<double>[{i}]"
        );
    }

    let mut c = vec![0i32; n];
    templates::fill(&ctx, grid, (256,), &mut c, 7, n as i32).unwrap();
    assert!(c.iter().all(|&v| v == 7));
}

const PRINTF_CHILD: &str = "GPU_RUNTIME_PRINTF_CHILD";

/// Device printf reaches the process's stdout at synchronization: this test runs itself as a
/// child process (with PRINTF_CHILD set, it only launches and synchronizes) and reads the
/// child's stdout.
#[test]
#[ignore = "needs a CUDA GPU"]
fn device_printf_reaches_stdout() {
    let n = 37;
    if let Some(tag) = std::env::var_os(PRINTF_CHILD) {
        let ctx = ctx();
        let tag: i32 = tag.to_str().unwrap().parse().unwrap();
        say(&ctx, (1,), (64,), tag, n).unwrap();
        ctx.synchronize().unwrap();
        return;
    }
    let tag = (Rng::new(95).next_u64() % 100_000) as i32;
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            test_path(module_path!(), "device_printf_reaches_stdout").as_str(),
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PRINTF_CHILD, tag.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The harness's "test name ... " has no newline of its own, so the first line may follow it.
    let mut lines: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.find("gpu-printf ").map(|at| &l[at..]))
        .collect();
    lines.sort_by_key(|l| {
        l.split("thread=")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|t| t.parse::<i32>().ok())
    });
    let want: Vec<String> = (0..n)
        .map(|i| format!("gpu-printf tag={tag} thread={i} square={}", i * i))
        .collect();
    assert_eq!(
        lines,
        want.iter().map(String::as_str).collect::<Vec<_>>(),
        "child stdout:\n{stdout}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn linked_module_where_a_kernel_launches_a_kernel() {
    let ctx = ctx();
    let n = 100_000;
    let mut rng = Rng::new(96);
    let x = rng.vec_f32(n);
    let k = rng.f32() + 0.5;
    let parent = dynpar::parent::prepare(&ctx).unwrap();
    let mut xd = ctx.to_device(&x).unwrap();
    parent.prepared_call((1,), (32,), &mut xd, k, n as i32).unwrap();
    let want: Vec<f32> = x.iter().map(|v| v * k + 1.0).collect();
    assert_close(&xd.to_vec().unwrap(), &want, 1e-6);
    // The child kernel of the same linked module, launched from the host.
    let child = dynpar::child::prepare(&ctx).unwrap();
    child
        .prepared_call(((n as u32).div_ceil(256),), (256,), &mut xd, k, n as i32)
        .unwrap();
    let want2: Vec<f32> = want.iter().map(|v| v * k + 1.0).collect();
    assert_close(&xd.to_vec().unwrap(), &want2, 1e-5);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dynamic_module_api_links_and_launches() {
    let ctx = ctx();
    let mut m = gpu_runtime::compiler::DynamicModule::new();
    m.add_source("__device__ float twice(float x) { return 2.0f * x + 0.5f; }", "lib.cu", &[], &[])
        .add_source(
            "__device__ float twice(float x);\nextern \"C\" __global__ void k(float *y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = twice(y[i]); }",
            "use.cu",
            &["k"],
            &[],
        );
    m.add_stdlib("cudadevrt").unwrap();
    let linked = m.load(&ctx).unwrap();
    let f = linked.function("k").unwrap();
    let n = 777usize;
    let y = Rng::new(97).vec_f32(n);
    let yd = ctx.to_device(&y).unwrap();
    let ptr = yd.device_ptr();
    let n_arg = n as i32;
    let mut params = [
        &ptr as *const u64 as *mut std::ffi::c_void,
        &n_arg as *const i32 as *mut std::ffi::c_void,
    ];
    // SAFETY: the parameters are (float*, int) as the kernel declares; yd outlives the sync, and
    // its only other use (the copy that filled it) ran on the same, legacy default stream.
    unsafe { f.launch_raw(4u32.into(), 256u32.into(), std::ptr::null_mut(), &mut params) }.unwrap();
    ctx.synchronize().unwrap();
    let want: Vec<f32> = y.iter().map(|v| 2.0 * v + 0.5).collect();
    assert_close(&yd.to_vec().unwrap(), &want, 1e-6);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn static_shared_memory_of_4000_ints() {
    let ctx = ctx();
    let blocks = 37;
    let mut rng = Rng::new(98);
    let input: Vec<i32> = (0..blocks * 4000)
        .map(|_| (rng.next_u64() % 1_000_000) as i32)
        .collect();
    let mut out = vec![0i32; input.len()];
    let k = reverse4000::prepare(&ctx).unwrap();
    assert_eq!(k.function().limits().unwrap().static_shared_bytes, 16_000);
    let ind = ctx.to_device(&input).unwrap();
    let mut outd = ctx.to_device(&out).unwrap();
    k.prepared_call((blocks as u32,), (256,), &ind, &mut outd)
        .unwrap();
    outd.copy_to_host(&mut out).unwrap();
    for b in 0..blocks {
        for i in 0..4000 {
            assert_eq!(
                out[b * 4000 + i],
                input[b * 4000 + 3999 - i] * 2,
                "block {b} index {i}"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dynamic_shared_memory_of_100_kib() {
    let ctx = ctx();
    let bytes = 100 * 1024u32;
    let m = (bytes / 4) as usize;
    let blocks = 9;
    let input = Rng::new(99).vec_f32(blocks * m);
    let k = reverse_dyn::prepare(&ctx).unwrap().with_shared_mem(bytes);
    let ind = ctx.to_device(&input).unwrap();
    let mut outd = ctx.to_device(&vec![0.0f32; input.len()]).unwrap();
    k.prepared_call((blocks as u32,), (512,), &ind, &mut outd, m as i32)
        .unwrap();
    let out = outd.to_vec().unwrap();
    let want: Vec<f32> = (0..blocks)
        .flat_map(|b| (0..m).map(move |i| (b, i)))
        .map(|(b, i)| input[b * m + m - 1 - i] + 1.0)
        .collect();
    assert_close(&out, &want, 0.0);
}

/// Per-launch dynamic shared memory (PyCUDA's `shared_size=`): one handle launched with 4 KiB
/// and with 100 KiB (which opts the kernel in) through `prepared_call_shared` and
/// `prepared_async_call_shared`, each against the CPU reference; the handle keeps its own size,
/// and a size past the device's limit is the typed launch error.
#[test]
#[ignore = "needs a CUDA GPU"]
fn dynamic_shared_memory_per_call() {
    use gpu_runtime::{Error, LaunchConfigError};
    let ctx = ctx();
    let k = reverse_dyn::prepare(&ctx).unwrap();
    let stream = gpu_runtime::Stream::new(&ctx).unwrap();
    let blocks = 7;
    for (round, bytes) in [4 * 1024u32, 100 * 1024, 4 * 1024].into_iter().enumerate() {
        let m = (bytes / 4) as usize;
        let input = Rng::new(100 + round as u64).vec_f32(blocks * m);
        let ind = ctx.to_device(&input).unwrap();
        let mut outd = ctx.to_device(&vec![0.0f32; input.len()]).unwrap();
        if round % 2 == 0 {
            k.prepared_call_shared((blocks as u32,), (256,), bytes, &ind, &mut outd, m as i32)
                .unwrap();
        } else {
            k.prepared_async_call_shared(
                (blocks as u32,),
                (256,),
                &stream,
                bytes,
                &ind,
                &mut outd,
                m as i32,
            )
            .unwrap();
        }
        let want: Vec<f32> = (0..blocks)
            .flat_map(|b| (0..m).map(move |i| (b, i)))
            .map(|(b, i)| input[b * m + m - 1 - i] + 1.0)
            .collect();
        assert_close(&outd.to_vec().unwrap(), &want, 0.0);
        assert_eq!(k.function().shared_mem(), 0, "the handle keeps its own size");
    }
    let limits = *ctx.limits();
    let limit = limits
        .max_shared_memory_per_block_optin
        .max(limits.max_shared_memory_per_block);
    let (ind, mut outd) = (
        ctx.to_device(&[0.0f32; 4]).unwrap(),
        ctx.to_device(&[0.0f32; 4]).unwrap(),
    );
    let e = k
        .prepared_call_shared((1,), (32,), limit + 1, &ind, &mut outd, 4)
        .unwrap_err();
    assert!(
        matches!(e, Error::InvalidLaunch(LaunchConfigError::SharedMemoryTooLarge { requested, .. }) if requested == u64::from(limit) + 1),
        "{e:?}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn llm_c_layernorm_from_a_file_that_holds_host_code() {
    // Launched as the file's own `layernorm_forward3` does: a warp per row.
    let ctx = ctx();
    let (n, c) = (67usize, 771usize);
    let mut rng = Rng::new(94);
    let inp: Vec<f32> = (0..n * c).map(|_| rng.f32() * 3.0 + 0.5).collect();
    let weight: Vec<f32> = (0..c).map(|_| rng.f32()).collect();
    let bias: Vec<f32> = (0..c).map(|_| rng.f32()).collect();
    let k = layernorm_forward_kernel3::prepare(&ctx).unwrap();
    let (ind, wd, bd) = (
        ctx.to_device(&inp).unwrap(),
        ctx.to_device(&weight).unwrap(),
        ctx.to_device(&bias).unwrap(),
    );
    let mut out = ctx.alloc_zeros::<f32>(n * c).unwrap();
    let mut mean = ctx.alloc_zeros::<f32>(n).unwrap();
    let mut rstd = ctx.alloc_zeros::<f32>(n).unwrap();
    let block = 256u32;
    let grid = ((n * 32) as u32).div_ceil(block);
    k.prepared_call(
        (grid,),
        (block,),
        &mut out,
        &mut mean,
        &mut rstd,
        &ind,
        &wd,
        &bd,
        n as i32,
        c as i32,
    )
    .unwrap();
    let (mut want, mut want_mean, mut want_rstd) = (vec![0.0f32; n * c], vec![0.0f32; n], vec![0.0f32; n]);
    for r in 0..n {
        let x = &inp[r * c..(r + 1) * c];
        let m = x.iter().map(|&v| v as f64).sum::<f64>() / c as f64;
        let var = x.iter().map(|&v| (v as f64 - m).powi(2)).sum::<f64>() / c as f64;
        let s = 1.0 / (var + 1e-5).sqrt();
        for i in 0..c {
            want[r * c + i] = ((x[i] as f64 - m) * s * weight[i] as f64 + bias[i] as f64) as f32;
        }
        (want_mean[r], want_rstd[r]) = (m as f32, s as f32);
    }
    assert_close(&mean.to_vec().unwrap(), &want_mean, 1e-4);
    assert_close(&rstd.to_vec().unwrap(), &want_rstd, 1e-4);
    assert_close(&out.to_vec().unwrap(), &want, 1e-3);
}

/// `scale_bias`'s reference: `x * (w or 1) + (b or 0)`, and the sum of that.
fn scale_bias_want(x: &[f32], w: Option<&[f32]>, b: Option<&[f32]>) -> (Vec<f32>, f32) {
    let y: Vec<f32> = (0..x.len())
        .map(|i| x[i] * w.map_or(1.0, |w| w[i]) + b.map_or(0.0, |b| b[i]))
        .collect();
    let sum = y.iter().sum();
    (y, sum)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn nullable_pointers_are_null_for_none_in_every_call_form() {
    let ctx = ctx();
    let n = 5000usize;
    let mut rng = Rng::new(93);
    let (x, w, b) = (rng.vec_f32(n), rng.vec_f32(n), rng.vec_f32(n));
    let grid = (n as u32).div_ceil(256);
    let bd = ctx.to_device(&b).unwrap();

    // The convenience call: `w` and `sum` host data, staged only when `Some`; `b` device
    // memory or null.
    let mut y = vec![0f32; n];
    scale_bias(&ctx, grid, 256, &x, None, None, &mut y, None, n as i32).unwrap();
    assert_close(&y, &scale_bias_want(&x, None, None).0, 1e-6);
    let mut sum = vec![0.5f32];
    scale_bias(
        &ctx,
        grid,
        256,
        &x,
        Some(&w),
        Some(&bd),
        &mut y,
        Some(&mut sum),
        n as i32,
    )
    .unwrap();
    let (want, want_sum) = scale_bias_want(&x, Some(&w), Some(&b));
    assert_close(&y, &want, 1e-6);
    assert_close(&sum, &[0.5 + want_sum], 1e-3);
    let k = scale_bias::prepare(&ctx).unwrap();
    k.call(grid, 256, &x, Some(&w[..]), None, &mut y, None, n as i32)
        .unwrap();
    assert_close(&y, &scale_bias_want(&x, Some(&w), None).0, 1e-6);

    // The prepared call on device memory: `Some(&buffer)` or `None`.
    let (xd, wd) = (ctx.to_device(&x).unwrap(), ctx.to_device(&w).unwrap());
    let mut yd = ctx.alloc_zeros::<f32>(n).unwrap();
    let mut sd = ctx.to_device(&[0.0f32]).unwrap();
    k.prepared_call(grid, 256, &xd, None, Some(&bd), &mut yd, Some(&mut sd), n as i32)
        .unwrap();
    let (want, want_sum) = scale_bias_want(&x, None, Some(&b));
    assert_close(&yd.to_vec().unwrap(), &want, 1e-6);
    assert_close(&sd.to_vec().unwrap(), &[want_sum], 1e-3);
    // A `#[len]` is checked when the pointer is not null: a short `b` is refused before launch.
    let short = ctx.to_device(&b[..10]).unwrap();
    assert!(k
        .prepared_call(grid, 256, &xd, None, Some(&short), &mut yd, None, n as i32)
        .is_err());

    // In a graph: null pointers recorded as no buffer, the others as the graph's.
    let mut yg_buf = ctx.alloc_zeros::<f32>(n).unwrap();
    {
        let (xg, wg) = (GraphInput::new(&xd), GraphInput::new(&wd));
        let mut yg = GraphBuffer::new(&mut yg_buf);
        let mut cap = Capture::begin(&ctx).unwrap();
        k.capture(&mut cap, grid, 256, &xg, Some(&wg), None, &mut yg, None, n as i32)
            .unwrap();
        let mut exec = cap.end().unwrap().instantiate().unwrap();
        let stream = Stream::new(&ctx).unwrap();
        exec.launch(&stream).unwrap();
    }
    assert_close(
        &yg_buf.to_vec().unwrap(),
        &scale_bias_want(&x, Some(&w), None).0,
        1e-6,
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn fp8_conversions_agree_with_cudas() {
    use gpu_runtime::types::{Fp8E4M3, Fp8E5M2, Fp8x2E4M3};
    let ctx = ctx();
    let mut rng = Rng::new(94);
    // Random magnitudes over the whole range of both types, and the values at the edges.
    let mut x: Vec<f32> = (0..4096).map(|i| rng.f32() * 2f32.powi((i % 44) - 24)).collect();
    x.extend([
        0.0,
        -0.0,
        448.0,
        449.0,
        464.0,
        480.0,
        57344.0,
        61440.0,
        1e30,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        2f32.powi(-9),
        2f32.powi(-10),
        3.0 * 2f32.powi(-10),
        2f32.powi(-16),
        2f32.powi(-17),
    ]);
    let n = x.len().max(256);
    x.resize(n, 1.0);
    let bits4: Vec<Fp8E4M3> = (0..n).map(|i| Fp8E4M3(i as u8)).collect();
    let bits5: Vec<Fp8E5M2> = (0..n).map(|i| Fp8E5M2(i as u8)).collect();
    let pair = Fp8x2E4M3([Fp8E4M3::from_f32(1.5), Fp8E4M3::from_f32(-0.25)]);
    let xd = ctx.to_device(&x).unwrap();
    let (b4, b5) = (ctx.to_device(&bits4).unwrap(), ctx.to_device(&bits5).unwrap());
    let mut e4 = ctx.alloc_zeros::<Fp8E4M3>(n).unwrap();
    let mut e5 = ctx.alloc_zeros::<Fp8E5M2>(n).unwrap();
    let mut back4 = ctx.alloc_zeros::<f32>(n + 1).unwrap();
    let mut back5 = ctx.alloc_zeros::<f32>(n).unwrap();
    fp8_convert::prepare(&ctx)
        .unwrap()
        .prepared_call(
            (n as u32).div_ceil(256),
            256,
            &xd,
            &mut e4,
            &mut e5,
            &b4,
            &b5,
            &mut back4,
            &mut back5,
            pair,
            n as i32,
        )
        .unwrap();
    let (e4, e5) = (e4.to_vec().unwrap(), e5.to_vec().unwrap());
    for (i, v) in x.iter().enumerate() {
        if v.is_nan() {
            assert!(e4[i].to_f32().is_nan() && e5[i].to_f32().is_nan(), "NaN {i}");
            continue;
        }
        assert_eq!(e4[i], Fp8E4M3::from_f32(*v), "E4M3 of {v}");
        assert_eq!(e5[i], Fp8E5M2::from_f32(*v), "E5M2 of {v}");
    }
    let (back4, back5) = (back4.to_vec().unwrap(), back5.to_vec().unwrap());
    for i in 0..n {
        for (gpu, cpu) in [(back4[i], bits4[i].to_f32()), (back5[i], bits5[i].to_f32())] {
            assert!(
                (gpu.is_nan() && cpu.is_nan()) || gpu.to_bits() == cpu.to_bits(),
                "bits {i:#x}: GPU {gpu}, CPU {cpu}"
            );
        }
    }
    assert_eq!(back4[n], 1.25);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn templates_over_values_run_the_instance_bound() {
    let ctx = ctx();
    let (rows, cols) = (37usize, 1000usize);
    let mut rng = Rng::new(95);
    let x = rng.vec_f32(rows * cols);
    let mut out = vec![0f32; rows];
    // `row_sum<256, true>`: 256 threads a row, squares summed.
    row_sum_sq_256(&ctx, rows as u32, 256, &x, &mut out, cols as i32).unwrap();
    let want: Vec<f32> = x.chunks(cols).map(|r| r.iter().map(|v| v * v).sum()).collect();
    assert_close(&out, &want, 1e-4);
    // `row_sum<32, false>`: 32 threads a row, values summed.
    row_sum_32(&ctx, rows as u32, 32, &x, &mut out, cols as i32).unwrap();
    let want: Vec<f32> = x.chunks(cols).map(|r| r.iter().sum()).collect();
    assert_close(&out, &want, 1e-4);
    assert_eq!(row_sum_32::source().kernels(), ["row_sum<32, false>"]);

    // `scaled_copy<float, 128>` and `scaled_copy<double, 64>`, by the Rust type.
    let n = 10_000usize;
    let mut y = vec![0f32; n];
    scaled_copy::<f32>(
        &ctx,
        (n as u32).div_ceil(128),
        128,
        &x[..n],
        &mut y,
        2.5,
        n as i32,
    )
    .unwrap();
    assert_close(&y, &x[..n].iter().map(|v| v * 2.5).collect::<Vec<_>>(), 1e-6);
    let xd: Vec<f64> = x[..n].iter().map(|v| f64::from(*v)).collect();
    let mut yd = vec![0f64; n];
    scaled_copy::<f64>(&ctx, (n as u32).div_ceil(64), 64, &xd, &mut yd, -0.5, n as i32).unwrap();
    assert!(yd.iter().zip(&xd).all(|(y, x)| *y == -0.5 * x));
}
