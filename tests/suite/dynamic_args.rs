//! Runtime-typed launches with every kind of argument the macro takes (CUDA vector types,
//! `#[repr(C)]` structs, texture and surface objects by value), PyCUDA format strings, and
//! the staged call on a stream with dynamic shared memory: on a real GPU, against CPU
//! references on random data.

use std::mem::offset_of;

use gpu_runtime::driver::{
    ArrayDescriptor, ArrayFlags, ContextFlags, CudaArray, Surface, Texture, TextureDesc,
};
use gpu_runtime::launch::{Arg, ArgType, CallOptions, StructType, VectorType};
use gpu_runtime::types::{Float2, Float3, Float4, Int4};
use gpu_runtime::{ArgumentError, Context, DeviceRepr, Dim3, Error, SourceModule, Stream};
use gpu_suite::{assert_close, Rng};

#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct Params {
    scale: f32,
    offset: i32,
    shift: Float2,
}
// SAFETY: repr(C) plain data with the layout of `struct Params` below (checked by
// prepare_args with the fields).
unsafe impl DeviceRepr for Params {}

/// As big as Params, but not it.
#[derive(Clone, Copy)]
#[repr(C)]
struct Small {
    scale: f32,
    offset: i32,
}
// SAFETY: repr(C) plain data.
unsafe impl DeviceRepr for Small {}

const MIX: &str = r#"
struct Params { float scale; int offset; float2 shift; };

__global__ void mix(float *out, const float *x, float4 w, Params p, cudaTextureObject_t tex,
                    int width, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int j = (i + p.offset) % width;
    float t = tex1D<float>(tex, j + 0.5f);
    out[i] = w.x * x[i] + w.y * t + w.z * p.scale + w.w + p.shift.x - p.shift.y;
}

__global__ void ramp(cudaSurfaceObject_t surf, float4 v, int width) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x < width) surf1Dwrite(v.x * x + v.y, surf, x * (int)sizeof(float));
}
"#;

fn mix_reference(x: &[f32], w: Float4, p: Params, table: &[f32]) -> Vec<f32> {
    (0..x.len())
        .map(|i| {
            let t = table[(i + p.offset as usize) % table.len()];
            w.x * x[i] + w.y * t + w.z * p.scale + w.w + p.shift.x - p.shift.y
        })
        .collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn vectors_structs_and_texture_objects_pass_by_value() {
    let ctx = Context::default().unwrap();
    let mut rng = Rng::new(151);
    let (n, width) = (5000usize, 1000usize);
    let x = rng.vec_f32(n);
    let table = rng.vec_f32(width);
    let w = Float4::new(rng.f32(), rng.f32(), rng.f32(), rng.f32());
    let p = Params {
        scale: rng.f32(),
        offset: 17,
        shift: Float2::new(rng.f32(), rng.f32()),
    };
    let module = SourceModule::new(MIX).load(&ctx).unwrap();
    let f = module.get_function("mix").unwrap();
    let params = StructType::of::<Params>().with_fields(&[
        ("scale", offset_of!(Params, scale)),
        ("offset", offset_of!(Params, offset)),
        ("shift", offset_of!(Params, shift)),
    ]);
    let mix = f
        .prepare_args(&[
            ArgType::MutPtr,
            ArgType::ConstPtr,
            ArgType::Vector(VectorType::of::<Float4>()),
            ArgType::Struct(params),
            ArgType::Texture,
            ArgType::I32,
            ArgType::I32,
        ])
        .unwrap();
    let mut array = CudaArray::new(&ctx, ArrayDescriptor::new_2d::<f32>(width, 0)).unwrap();
    array.copy_from_host(&table).unwrap();
    let tex = Texture::from_array(&array, &TextureDesc::default()).unwrap();
    let xd = ctx.to_device(&x).unwrap();
    let mut out = ctx.alloc_zeros::<f32>(n).unwrap();
    let stream = Stream::new(&ctx).unwrap();
    let grid = n.div_ceil(256) as u32;
    mix.prepared_async_call(
        grid,
        256,
        &stream,
        &[
            Arg::output(&mut out),
            Arg::input(&xd),
            Arg::from(w),
            Arg::by_value(&p),
            Arg::from(tex.object()),
            Arg::I32(width as i32),
            Arg::I32(n as i32),
        ],
    )
    .unwrap();
    // Dropping the texture right after an asynchronous launch is fine: its destruction waits.
    drop(tex);
    let want = mix_reference(&x, w, p, &table);
    assert_close(&out.to_vec().unwrap(), &want, 1e-5);

    // The same through the declaration and the staged call with a host array out.
    let tex = Texture::from_array(&array, &TextureDesc::default()).unwrap();
    let mut host = vec![0f32; n];
    f.call(
        grid,
        256,
        &mut [
            Arg::host_out(&mut host),
            Arg::host_in(&x),
            Arg::from(w),
            Arg::by_value(&p),
            Arg::from(tex.object()),
            Arg::I32(width as i32),
            Arg::I32(n as i32),
        ],
    )
    .unwrap();
    assert_close(&host, &want, 1e-5);

    // Mismatches are refused before anything launches: a struct of the wrong size, a vector
    // of the wrong type, a texture where the declaration has an int.
    let declared = f.prepare_declared().unwrap();
    let small = Small {
        scale: 1.0,
        offset: 0,
    };
    let refused = |index: usize, parameter: &str, given: &str, args: &[Arg<'_>]| match declared
        .prepared_call(1, 1, args)
    {
        Err(Error::Argument(ArgumentError::ArgDiffers {
            index: i,
            parameter: p,
            given: g,
            ..
        })) if i == index && &*p == parameter && g == given => {}
        other => panic!("{parameter}: {other:?}"),
    };
    refused(
        3,
        "Params p",
        // The type's full path: the test crate's name leads it.
        &format!(
            "an Arg::by_value of `{}` (8 bytes)",
            std::any::type_name::<Small>()
        ),
        &[
            Arg::output(&mut out),
            Arg::input(&xd),
            Arg::from(w),
            Arg::by_value(&small),
            Arg::from(tex.object()),
            Arg::I32(1),
            Arg::I32(1),
        ],
    );
    refused(
        2,
        "float4 w",
        "an Arg::vector of `int4`",
        &[
            Arg::output(&mut out),
            Arg::input(&xd),
            Arg::from(Int4::splat(1)),
            Arg::by_value(&p),
            Arg::from(tex.object()),
            Arg::I32(1),
            Arg::I32(1),
        ],
    );
    refused(
        5,
        "int width",
        "a texture object",
        &[
            Arg::output(&mut out),
            Arg::input(&xd),
            Arg::from(w),
            Arg::by_value(&p),
            Arg::from(tex.object()),
            Arg::from(tex.object()),
            Arg::I32(1),
        ],
    );
    let e = f.prepare_args(&[
        ArgType::MutPtr,
        ArgType::ConstPtr,
        ArgType::Vector(VectorType::of::<Float4>()),
        ArgType::Struct(StructType::of::<Small>()),
        ArgType::Texture,
        ArgType::I32,
        ArgType::I32,
    ]);
    assert!(
        matches!(
            e,
            Err(Error::Argument(ArgumentError::StructSize {
                index: 3,
                c_bytes: 16,
                rust_bytes: 8,
                ..
            }))
        ),
        "{e:?}"
    );

    // A surface object by value, written through.
    let desc = ArrayDescriptor::new_2d::<f32>(width, 0).with_flags(ArrayFlags::SURFACE_LDST);
    let mut target = CudaArray::new(&ctx, desc).unwrap();
    let v = Float4::new(rng.f32(), rng.f32(), 0.0, 0.0);
    {
        let surface = Surface::new(&mut target).unwrap();
        module
            .get_function("ramp")
            .unwrap()
            .prepare_format("QFi")
            .map(|_| ())
            .expect_err("`F` is a float2, and the kernel takes a float4");
        let ramp = module
            .get_function("ramp")
            .unwrap()
            .prepare_format("Q16si")
            .unwrap();
        ramp.prepared_call(
            width.div_ceil(128) as u32,
            128,
            &[Arg::from(surface.object()), Arg::from(v), Arg::I32(width as i32)],
        )
        .unwrap();
    }
    let want: Vec<f32> = (0..width).map(|i| v.x * i as f32 + v.y).collect();
    assert_close(&target.to_vec::<f32>().unwrap(), &want, 1e-6);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_format_string_prepares_a_kernel_like_pycuda() {
    let ctx = Context::default().unwrap();
    let mut rng = Rng::new(152);
    let module = SourceModule::new(
        r#"
__global__ void affine(double *y, const float *x, double a, long long b, short c,
                       unsigned char d, float2 z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + (double)b + c * d + z.x * z.y;
}"#,
    )
    .load(&ctx)
    .unwrap();
    let n = 3000usize;
    let x = rng.vec_f32(n);
    let (a, b, c, d) = (rng.f64(), (rng.next_u64() % 1000) as i64 - 500, -7i16, 201u8);
    let z = Float2::new(rng.f32(), rng.f32());
    // PyCUDA: func.prepare("PPdqhBFi"); func.prepared_call(grid, block, y, x, a, b, c, d, z, n)
    let affine = module
        .get_function("affine")
        .unwrap()
        .prepare_format("PPdqhBFi")
        .unwrap();
    let xd = ctx.to_device(&x).unwrap();
    let mut y = ctx.alloc_zeros::<f64>(n).unwrap();
    affine
        .prepared_call(
            n.div_ceil(256) as u32,
            256,
            &[
                Arg::output(&mut y),
                Arg::input(&xd),
                a.into(),
                b.into(),
                c.into(),
                d.into(),
                z.into(),
                (n as i32).into(),
            ],
        )
        .unwrap();
    let got = y.to_vec().unwrap();
    for i in 0..n {
        let want = a * x[i] as f64 + b as f64 + (c as i32 * d as i32) as f64 + (z.x * z.y) as f64;
        assert!(
            (got[i] - want).abs() <= 1e-6 * want.abs().max(1.0),
            "{i}: {} vs {want}",
            got[i]
        );
    }
    // `f` for the double is refused, naming the parameter.
    match module.get_function("affine").unwrap().prepare_format("PPfqhBFi") {
        Err(Error::Argument(ArgumentError::TypeDiffers { parameter, given, .. })) => {
            assert!(
                &*parameter == "double a" && given == "f32",
                "{parameter}: {given}"
            )
        }
        other => panic!("{other:?}"),
    }
}

const REVERSE: &str = r#"
__global__ void reverse_blocks(float *y, const float *x, float *acc, float k, int skip, int n) {
    extern __shared__ float tile[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    // `skip` floats of the dynamic shared memory are left unused, so that a large `skip` needs
    // more than the 48 KiB a block gets without opting in.
    tile[skip + t] = x[i];
    __syncthreads();
    y[i] = k * tile[skip + blockDim.x - 1 - t];
    acc[i] += x[i];
}"#;

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_staged_call_runs_on_a_stream_with_dynamic_shared_memory() {
    let ctx = Context::default().unwrap();
    let mut rng = Rng::new(153);
    let module = SourceModule::new(REVERSE).load(&ctx).unwrap();
    let f = module.get_function("reverse_blocks").unwrap();
    let prepared = f.prepare_format("PPPfii").unwrap();
    let (block, blocks) = (256usize, 40usize);
    let n = block * blocks;
    let x = rng.vec_f32(n);
    let acc0 = rng.vec_f32(n);
    let k = rng.f32();
    let stream = Stream::new(&ctx).unwrap();
    for skip in [0usize, 16 << 10] {
        let shared = ((skip + block) * 4) as u32;
        let mut y = vec![0f32; n];
        let mut acc = acc0.clone();
        let opts = CallOptions::new().stream(&stream).shared_mem(shared);
        let args = &mut [
            Arg::host_out(&mut y),
            Arg::host_in(&x),
            Arg::host_in_out(&mut acc),
            Arg::F32(k),
            Arg::I32(skip as i32),
            Arg::I32(n as i32),
        ];
        if skip == 0 {
            f.call_with(blocks as u32, block as u32, args, opts).unwrap();
        } else {
            prepared
                .call_with(blocks as u32, block as u32, args, opts)
                .unwrap();
        }
        let want: Vec<f32> = (0..n)
            .map(|i| {
                let (b, t) = (i / block, i % block);
                k * x[b * block + block - 1 - t]
            })
            .collect();
        assert_close(&y, &want, 1e-6);
        let want_acc: Vec<f32> = acc0.iter().zip(&x).map(|(a, b)| a + b).collect();
        assert_close(&acc, &want_acc, 1e-6);
    }
    // The kernel's own size stays as it was: the per-call size was for those calls only.
    assert_eq!(prepared.function().shared_mem(), 0);
    // A stream of another context is refused before anything is copied.
    let other = Context::create(ctx.device(), ContextFlags::SCHED_AUTO).unwrap();
    let foreign = Stream::new(&other).unwrap();
    let mut y = vec![0f32; n];
    let e = prepared.call_with(
        blocks as u32,
        block as u32,
        &mut [
            Arg::host_out(&mut y),
            Arg::host_in(&x),
            Arg::host_in(&x),
            Arg::F32(k),
            Arg::I32(0),
            Arg::I32(n as i32),
        ],
        CallOptions::new().stream(&foreign).shared_mem((block * 4) as u32),
    );
    assert!(matches!(e, Err(Error::WrongContext { .. })), "{e:?}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_writable_pointer_the_kernel_only_reads_takes_a_shared_borrow() {
    let ctx = Context::default().unwrap();
    let mut rng = Rng::new(153);
    // `x` is a `float *` the kernel only reads, as many real kernels leave it; `v` a float3.
    let module = SourceModule::new(
        r#"
__global__ void scale3(float *y, float *x, float3 v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * v.x + v.y - v.z;
}"#,
    )
    .load(&ctx)
    .unwrap();
    let f = module
        .get_function("scale3")
        .unwrap()
        .prepare_args(&[
            ArgType::MutPtr,
            ArgType::MutPtr,
            ArgType::vector::<Float3>(),
            ArgType::I32,
        ])
        .unwrap();
    let n = 3000usize;
    let x = rng.vec_f32(n);
    let v = Float3::new(rng.f32(), rng.f32(), rng.f32());
    let xd = ctx.to_device(&x).unwrap();
    let (mut y1, mut y2) = (
        ctx.alloc_zeros::<f32>(n).unwrap(),
        ctx.alloc_zeros::<f32>(n).unwrap(),
    );
    // Two launches read `xd` through shared borrows; the grid is a u64 and a mixed tuple.
    let (blocks, n32) = ((n as u64).div_ceil(256), n as i32);
    for (y, grid) in [
        (&mut y1, Dim3::from(blocks)),
        (&mut y2, Dim3::from((blocks, 1u8))),
    ] {
        let args = [Arg::output(y), Arg::read_only(&xd), v.into(), n32.into()];
        f.prepared_call(grid, (256usize, 1u16), &args).unwrap();
    }
    let want: Vec<f32> = x.iter().map(|&x| x * v.x + v.y - v.z).collect();
    assert_close(&y1.to_vec().unwrap(), &want, 1e-6);
    assert_close(&y2.to_vec().unwrap(), &want, 1e-6);
    // `Arg::input` still does not fit the writable pointer: read_only is the explicit word.
    match f.prepared_call(
        blocks,
        256,
        &[Arg::output(&mut y1), Arg::input(&xd), v.into(), n32.into()],
    ) {
        Err(Error::Argument(ArgumentError::ArgDiffers {
            index: 1, parameter, ..
        })) => {
            assert_eq!(&*parameter, "float *x")
        }
        other => panic!("{other:?}"),
    }
    // Still length-checked: a buffer of 8-byte elements for a `float *` is refused.
    let wide = ctx.alloc_zeros::<f64>(n).unwrap();
    match f.prepared_call(
        blocks,
        256,
        &[Arg::output(&mut y1), Arg::read_only(&wide), v.into(), n32.into()],
    ) {
        Err(Error::Argument(ArgumentError::ElementSize {
            index: 1,
            given_bytes: 8,
            expected_bytes: 4,
            ..
        })) => {}
        other => panic!("{other:?}"),
    }
}
