//! Fortran order, doubles and complex numbers, and linear textures at any offset (issue 15,
//! parts 5, 6 and 8): PyCUDA's `np_to_array(a, "F")`, its "double hack" (`fp_tex2D` of
//! `pycuda-helpers.hpp`), `pycuda::complex` and `TextureReference.set_address(...,
//! allow_offset=True)`, written the Rust way.
//!
//! The NVRTC tests run everywhere (CI); the others need a GPU:
//! `cargo test --test suite -- --ignored doubles_and_textures::`. Each compares with a host reference on random
//! data.

use gpu_runtime::compiler::layout::probe_constants;
use gpu_runtime::compiler::{compile, Target};
use gpu_runtime::ndarray::{Array2, Array3, Order, ShapeBuilder};
use gpu_runtime::types::{Complex32, Complex64, COMPLEX_TYPES};
// The ported PyCUDA tests import the driver layer whole, as `from pycuda.driver import *`.
use gpu_runtime::driver::*;
use gpu_runtime::*;
use gpu_suite::Rng;

const SM90: Target = Target::Cubin { major: 9, minor: 0 };

/// A column-major m x n matrix, indexed as Fortran code does: out(i, j) = 2 a(i, j) + j.
#[kernel(
    r#"
__global__ void colmajor(const float *a, float *out, int m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
    if (i < m && j < n) out[i + j * m] = 2.0f * a[i + j * m] + (float)j;
}"#
)]
fn colmajor(#[In] a: &[f32], #[Out] out: &mut [f32], m: i32, n: i32);

/// Texture reads of CUDA arrays of floats, doubles and complex numbers, through the header.
#[kernel(
    r#"
#include <gpu_runtime/texture_fetch.h>
typedef gpu_runtime::complex<float> cfloat;

__global__ void read2d_f32(cudaTextureObject_t tex, float *out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) out[x + y * w] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
}
__global__ void read2d_f64(cudaTextureObject_t tex, double *out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) out[x + y * w] = fp_tex2D<double>(tex, x + 0.5f, y + 0.5f);
}
__global__ void read3d_f64(cudaTextureObject_t tex, double *out, int w, int h, int d) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
    if (x < w && y < h && z < d) out[x + w * (y + h * z)] = fp_tex3D<double>(tex, x + 0.5f, y + 0.5f, z + 0.5f);
}
__global__ void read2d_c64(cudaTextureObject_t tex, cfloat *out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) out[x + y * w] = fp_tex2D<cfloat>(tex, x + 0.5f, y + 0.5f);
}
__global__ void read2d_c128(cudaTextureObject_t tex, gpu_runtime::complex<double> *out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) out[x + y * w] = fp_tex2D<gpu_runtime::complex<double> >(tex, x + 0.5f, y + 0.5f);
}
__global__ void fetch_f32(cudaTextureObject_t tex, int offset, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fp_tex1Dfetch<float>(tex, i + offset);
}
__global__ void fetch_c128(cudaTextureObject_t tex, int offset, gpu_runtime::complex<double> *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fp_tex1Dfetch<gpu_runtime::complex<double> >(tex, i + offset);
}
__global__ void surf_write_f64(cudaSurfaceObject_t surf, const double *src, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) fp_surf2Dwrite(3.0 * src[x + y * w] - 1.0, surf, x, y);
}
__global__ void surf_read_c128(cudaSurfaceObject_t surf, gpu_runtime::complex<double> *out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) fp_surf2Dread(&out[x + y * w], surf, x, y);
}
"#
)]
mod fetch {
    fn read2d_f32(tex: TextureObject, out: &mut [f32], w: i32, h: i32);
    fn read2d_f64(tex: TextureObject, out: &mut [f64], w: i32, h: i32);
    fn read3d_f64(tex: TextureObject, out: &mut [f64], w: i32, h: i32, d: i32);
    fn read2d_c64(tex: TextureObject, out: &mut [Complex32], w: i32, h: i32);
    fn read2d_c128(tex: TextureObject, out: &mut [Complex64], w: i32, h: i32);
    fn fetch_f32(tex: TextureObject, offset: i32, out: &mut [f32], n: i32);
    fn fetch_c128(tex: TextureObject, offset: i32, out: &mut [Complex64], n: i32);
    fn surf_write_f64(surf: SurfaceObject, src: &[f64], w: i32, h: i32);
    fn surf_read_c128(surf: SurfaceObject, out: &mut [Complex64], w: i32, h: i32);
}

/// z = a x + y on complex numbers, a by value: the BLAS zaxpy.
#[kernel(
    r#"
#include <gpu_runtime/complex.h>
__global__ void zaxpy(gpu_runtime::complex<double> a, const gpu_runtime::complex<double> *x,
                      gpu_runtime::complex<double> *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"#
)]
fn zaxpy(a: Complex64, #[In] x: &[Complex64], #[InOut] y: &mut [Complex64], n: i32);

/// One template for real and complex numbers, through `__shared__` memory.
#[kernel(
    r#"
#include <gpu_runtime/complex.h>
template <typename T>
__global__ void mix(const T *x, const T *y, T *out, int n) {
    __shared__ T tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) tile[threadIdx.x] = x[i] / y[i];
    __syncthreads();
    if (i < n) out[i] = tile[threadIdx.x] * T(2) - x[i];
}"#,
    instantiate = [f64, Complex32, Complex64]
)]
fn mix<T>(#[In] x: &[T], #[In] y: &[T], #[Out] out: &mut [T], n: i32);

/// A kernel ported from PyCUDA: `pycuda::complex`, conjugates, square roots, magnitudes,
/// arguments, exponentials and logarithms.
#[kernel(
    r#"
#include <pycuda-complex.hpp>
template <typename C>
__global__ void cfuncs(const C *z, C *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        C v = z[i];
        out[4 * i] = pycuda::conj(v) * v;
        out[4 * i + 1] = pycuda::sqrt(v);
        out[4 * i + 2] = C(abs(v), arg(v));
        out[4 * i + 3] = exp(log(v));
    }
}"#,
    instantiate = [Complex64]
)]
fn cfuncs<C>(#[In] z: &[C], #[Out] out: &mut [C], n: i32);

/// libcu++'s complex numbers are Complex32/Complex64 too.
#[kernel(
    r#"
#include <cuda/std/complex>
__global__ void cstd_square(const cuda::std::complex<float> *z, cuda::std::complex<float> *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = z[i] * z[i];
}"#
)]
fn cstd_square(#[In] z: &[Complex32], #[Out] out: &mut [Complex32], n: i32);

use crate::common::ctx;

fn c64s(rng: &mut Rng, n: usize) -> Vec<Complex64> {
    (0..n).map(|_| Complex64::new(rng.f64(), rng.f64())).collect()
}

fn c32s(rng: &mut Rng, n: usize) -> Vec<Complex32> {
    (0..n).map(|_| Complex32::new(rng.f32(), rng.f32())).collect()
}

// ---- on any machine: NVRTC compiles the headers and the kernels above ----

#[test]
fn complex_types_have_the_layout_nvrtc_gives_them() {
    let mut exprs = Vec::new();
    for (c, _, _, _) in COMPLEX_TYPES {
        exprs.push(format!("sizeof({c})"));
        exprs.push(format!("alignof({c})"));
        exprs.push(format!("offsetof({c}, im)"));
        exprs.push(format!("__is_trivially_copyable({c})"));
        exprs.push(format!("__is_trivially_constructible({c})"));
    }
    let refs: Vec<&str> = exprs.iter().map(String::as_str).collect();
    let got = probe_constants("#include <gpu_runtime/complex.h>\n", &refs).unwrap();
    for (k, (c, rust, size, align)) in COMPLEX_TYPES.iter().enumerate() {
        let host = match *rust {
            "Complex32" => std::mem::size_of::<Complex32>(),
            "Complex64" => std::mem::size_of::<Complex64>(),
            other => panic!("{other}"),
        };
        assert_eq!(
            &got[5 * k..5 * k + 5],
            &[*size as u64, *align as u64, (*size / 2) as u64, 1, 1],
            "C `{c}`: size, alignment, offset of the imaginary part, trivially copyable, \
             trivially default-constructible (so __shared__ arrays of it compile)"
        );
        assert_eq!(host, *size, "{rust}");
    }
}

/// The other complex templates the macro maps to Complex32/Complex64 have the same size and
/// alignment (their parts are in the same order: real, then imaginary).
#[test]
fn cuda_std_and_pycuda_complex_match_gpu_runtime_complex() {
    let src = "#include <cuda/std/complex>\n#include <pycuda-complex.hpp>\n";
    for t in ["float", "double"] {
        let mut exprs = Vec::new();
        for ns in ["gpu_runtime", "cuda::std", "pycuda"] {
            let c = format!("{ns}::complex<{t}>");
            exprs.push(format!("sizeof({c})"));
            exprs.push(format!("alignof({c})"));
        }
        let refs: Vec<&str> = exprs.iter().map(String::as_str).collect();
        let got = probe_constants(src, &refs).unwrap();
        for pair in got.chunks(2) {
            assert_eq!(pair, &got[..2], "complex<{t}>: {exprs:?} = {got:?}");
        }
        // The real part comes first in memory: (3, 5) reads back as the vector (3, 5).
        let v = if t == "float" { "float2" } else { "double2" };
        let parts = [
            format!("__builtin_bit_cast({v}, cuda::std::complex<{t}>(3, 5)).x"),
            format!("__builtin_bit_cast({v}, cuda::std::complex<{t}>(3, 5)).y"),
        ];
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        assert_eq!(
            probe_constants(src, &refs).unwrap(),
            [3, 5],
            "cuda::std::complex<{t}>"
        );
    }
}

#[test]
fn every_helper_of_the_header_compiles_for_every_element_type() {
    let mut src = String::from(
        "#include <gpu_runtime/texture_fetch.h>\n#include <pycuda-complex.hpp>\n\
         template <typename T> __device__ void all(cudaTextureObject_t t, cudaSurfaceObject_t s, T *out) {\n\
             out[0] = fp_tex1Dfetch<T>(t, 1); out[1] = fp_tex1D<T>(t, 1.5f);\n\
             out[2] = fp_tex2D<T>(t, 1, 2); out[3] = fp_tex3D<T>(t, 1, 2, 3);\n\
             out[4] = fp_tex1DLayered<T>(t, 1, 0); out[5] = fp_tex2DLayered<T>(t, 1, 2, 0);\n\
             fp_surf1Dwrite(out[0], s, 1); fp_surf2Dwrite(out[0], s, 1, 2);\n\
             fp_surf3Dwrite(out[0], s, 1, 2, 3, cudaBoundaryModeClamp); fp_surf2DLayeredwrite(out[0], s, 1, 2, 0);\n\
             out[6] = fp_surf1Dread<T>(s, 1); out[7] = fp_surf2Dread<T>(s, 1, 2);\n\
             out[8] = fp_surf3Dread<T>(s, 1, 2, 3); out[9] = fp_surf2DLayeredread<T>(s, 1, 2, 0);\n\
             fp_surf2Dread(&out[10], s, 1, 2); fp_surf3Dread(&out[11], s, 1, 2, 3);\n\
         }\n",
    );
    let types = [
        "float",
        "int",
        "unsigned char",
        "float4",
        "double",
        "gpu_runtime::complex<float>",
        "gpu_runtime::complex<double>",
        "pycuda::complex<double>",
    ];
    let mut names = Vec::new();
    for (i, t) in types.iter().enumerate() {
        src.push_str(&format!(
            "extern \"C\" __global__ void k{i}(cudaTextureObject_t t, cudaSurfaceObject_t s, {t} *out) {{ all<{t} >(t, s, out); }}\n"
        ));
        names.push(format!("k{i}"));
    }
    // Arithmetic, conversions and CUDA's own complex type, on both parts' types.
    src.push_str(
        "extern \"C\" __global__ void arith(gpu_runtime::complex<float> *f, gpu_runtime::complex<double> *d, float2 *v) {\n\
             __shared__ gpu_runtime::complex<double> tile[32];\n\
             gpu_runtime::complex<double> z = d[0]; z += 1.0; z -= d[1]; z *= 2.0; z /= d[2];\n\
             tile[threadIdx.x] = -z + 1.0 - z * 3.0 / (z + gpu_runtime::complex<double>(0, 1));\n\
             __syncthreads();\n\
             d[threadIdx.x] = gpu_runtime::polar(abs(tile[threadIdx.x]), arg(z)) + conj(z) + sqrt(z) + exp(z) + log(z);\n\
             gpu_runtime::complex<float> w(d[0]); w.real(norm(w)); w.imag(real(w) + imag(w));\n\
             f[0] = (w == f[1] || w != f[2]) ? gpu_runtime::from_vector(v[0]) : w;\n\
             v[1] = gpu_runtime::to_vector(f[0]);\n\
         }\n",
    );
    names.push("arith".to_owned());
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let out = compile(&src, "helpers.cu", &refs, &[], SM90).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(&out.image[..4], b"\x7fELF");
}

#[test]
fn the_kernels_of_this_file_compile_with_nvrtc() {
    for (name, source) in [
        ("colmajor", colmajor::source()),
        ("fetch", fetch::read2d_f32::source()),
        ("zaxpy", zaxpy::source()),
        ("mix", mix::source()),
        ("cfuncs", cfuncs::source()),
        ("cstd_square", cstd_square::source()),
    ] {
        let out = source.compile(SM90).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&out.image[..4], b"\x7fELF", "{name}");
    }
    let _ = mix::prepare::<f64>;
    let _ = mix::prepare::<Complex32>;
    let _ = mix::prepare::<Complex64>;
}

// ---- on a GPU ----

#[test]
#[ignore = "needs a CUDA GPU"]
fn fortran_ordered_host_arrays_go_in_and_out_in_memory_order() {
    let ctx = ctx();
    let mut rng = Rng::new(501);
    let (m, n) = (300usize, 7usize);
    let a = Array2::from_shape_fn((m, n).f(), |_| rng.f32());
    let mut out = Array2::<f32>::zeros((m, n).f());
    colmajor(
        &ctx,
        ((m as u32).div_ceil(128), n as u32),
        128,
        &a,
        &mut out,
        m as i32,
        n as i32,
    )
    .unwrap();
    for ((i, j), &v) in out.indexed_iter() {
        assert_eq!(v, 2.0 * a[[i, j]] + j as f32, "({i}, {j})");
    }
    // A transposed C array is column-major too: the kernel sees the C array's rows as columns.
    let c = Array2::from_shape_fn((n, m), |_| rng.f32());
    let mut out_t = Array2::<f32>::zeros((m, n).f());
    colmajor(
        &ctx,
        ((m as u32).div_ceil(128), n as u32),
        128,
        &c.t(),
        &mut out_t,
        m as i32,
        n as i32,
    )
    .unwrap();
    for ((i, j), &v) in out_t.indexed_iter() {
        assert_eq!(v, 2.0 * c[[j, i]] + j as f32, "({i}, {j})");
    }
    // Neither order: refused before anything runs.
    let strided = a.slice(gpu_runtime::ndarray::s![..;2, ..]);
    let e = colmajor(&ctx, 1, 128, &strided, &mut out, m as i32 / 2, n as i32).unwrap_err();
    assert!(matches!(e, Error::Copy(CopyError::HostArrayLayout { .. })), "{e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn fortran_ordered_cuda_arrays_round_trip_and_map_the_first_axis_to_x() {
    let ctx = ctx();
    let mut rng = Rng::new(502);
    let (w, h) = (77usize, 40usize);
    // Column-major, as Fortran keeps it: x runs down the columns.
    let m = Array2::from_shape_fn((w, h).f(), |_| rng.f32());
    let array = CudaArray::from_ndarray_order(&ctx, &m, Order::F, ArrayFlags::NONE).unwrap();
    assert_eq!(array.query_descriptor().unwrap(), (w, h, 0, 1));
    assert_eq!(array.to_ndarray::<f32>(Order::F).unwrap(), m.clone().into_dyn());
    let tex = Texture::from_array(&array, &TextureDesc::default()).unwrap();
    let mut out = ctx.alloc_zeros::<f32>(w * h).unwrap();
    fetch::read2d_f32::prepare(&ctx)
        .unwrap()
        .prepared_call(
            ((w as u32).div_ceil(32), h as u32),
            32,
            tex.object(),
            &mut out,
            w as i32,
            h as i32,
        )
        .unwrap();
    let got = out.to_vec().unwrap();
    for x in 0..w {
        for y in 0..h {
            assert_eq!(got[x + y * w], m[[x, y]], "tex2D({x}, {y})");
        }
    }
    // The same matrix read in C order: the last axis is x, and the host reorders it first.
    let c_array = CudaArray::from_ndarray(&ctx, &m, ArrayFlags::NONE).unwrap();
    assert_eq!(c_array.query_descriptor().unwrap(), (h, w, 0, 1));
    assert_eq!(c_array.to_ndarray::<f32>(Order::C).unwrap(), m.clone().into_dyn());
    assert_eq!(
        c_array.to_vec::<f32>().unwrap(),
        m.as_standard_layout().as_slice().unwrap()
    );
    // A 3D volume of doubles in F order, refilled from a C-ordered array of the same shape.
    let (d3, h3, w3) = (5usize, 6usize, 9usize);
    let vol_f = Array3::from_shape_fn((w3, h3, d3).f(), |_| rng.f64());
    let mut a3 = CudaArray::from_ndarray_order(&ctx, &vol_f, Order::F, ArrayFlags::NONE).unwrap();
    assert_eq!(a3.query_descriptor().unwrap(), (w3, h3, d3, 2));
    assert_eq!(a3.to_ndarray::<f64>(Order::F).unwrap(), vol_f.clone().into_dyn());
    let vol_c = Array3::from_shape_fn((w3, h3, d3), |_| rng.f64());
    a3.copy_from_ndarray(&vol_c, Order::F).unwrap();
    assert_eq!(a3.to_ndarray::<f64>(Order::F).unwrap(), vol_c.clone().into_dyn());
    let e = a3.copy_from_ndarray(&vol_c, Order::C).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::NdarrayExtent {
                order: Order::C,
                host_extent,
                array_extent,
                ..
            }) if host_extent == (d3, h3, w3) && array_extent == (w3, h3, d3)
        ),
        "{e}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn f64_and_complex_textures_fetch_through_the_header() {
    let ctx = ctx();
    let mut rng = Rng::new(503);
    let (w, h) = (45usize, 31usize);
    let grid = ((w as u32).div_ceil(32), h as u32);
    let doubles = Array2::from_shape_fn((h, w), |_| rng.f64() * 1e300);
    let array = CudaArray::from_ndarray(&ctx, &doubles, ArrayFlags::NONE).unwrap();
    let tex = Texture::from_array(&array, &TextureDesc::default()).unwrap();
    let mut out = ctx.alloc_zeros::<f64>(w * h).unwrap();
    fetch::read2d_f64::prepare(&ctx)
        .unwrap()
        .prepared_call(grid, 32, tex.object(), &mut out, w as i32, h as i32)
        .unwrap();
    assert_eq!(
        out.to_vec().unwrap(),
        doubles.as_slice().unwrap(),
        "every bit of every double"
    );

    let (d3, h3, w3) = (4usize, 5usize, 33usize);
    let vol = Array3::from_shape_fn((d3, h3, w3), |_| rng.f64());
    let a3 = CudaArray::from_ndarray(&ctx, &vol, ArrayFlags::NONE).unwrap();
    let t3 = Texture::from_array(&a3, &TextureDesc::default()).unwrap();
    let mut out3 = ctx.alloc_zeros::<f64>(w3 * h3 * d3).unwrap();
    fetch::read3d_f64::prepare(&ctx)
        .unwrap()
        .prepared_call(
            (2, h3 as u32, d3 as u32),
            32,
            t3.object(),
            &mut out3,
            w3 as i32,
            h3 as i32,
            d3 as i32,
        )
        .unwrap();
    assert_eq!(out3.to_vec().unwrap(), vol.as_slice().unwrap());

    let c128 = Array2::from_shape_vec((h, w), c64s(&mut rng, w * h)).unwrap();
    let a128 = CudaArray::from_ndarray(&ctx, &c128, ArrayFlags::NONE).unwrap();
    assert_eq!(a128.query_descriptor().unwrap(), (w, h, 0, 4));
    let t128 = Texture::from_array(&a128, &TextureDesc::default()).unwrap();
    let mut z = ctx.alloc_zeros::<Complex64>(w * h).unwrap();
    fetch::read2d_c128::prepare(&ctx)
        .unwrap()
        .prepared_call(grid, 32, t128.object(), &mut z, w as i32, h as i32)
        .unwrap();
    assert_eq!(z.to_vec().unwrap(), c128.as_slice().unwrap());

    let c64 = Array2::from_shape_vec((h, w), c32s(&mut rng, w * h)).unwrap();
    let a64 = CudaArray::from_ndarray(&ctx, &c64, ArrayFlags::NONE).unwrap();
    let t64 = Texture::from_array(&a64, &TextureDesc::default()).unwrap();
    let mut z64 = ctx.alloc_zeros::<Complex32>(w * h).unwrap();
    fetch::read2d_c64::prepare(&ctx)
        .unwrap()
        .prepared_call(grid, 32, t64.object(), &mut z64, w as i32, h as i32)
        .unwrap();
    assert_eq!(z64.to_vec().unwrap(), c64.as_slice().unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn surfaces_write_and_read_doubles_and_complex_numbers() {
    let ctx = ctx();
    let mut rng = Rng::new(504);
    let (w, h) = (50usize, 21usize);
    let grid = ((w as u32).div_ceil(32), h as u32);
    let src: Vec<f64> = (0..w * h).map(|_| rng.f64()).collect();
    let src_dev = ctx.to_device(&src).unwrap();
    let desc = ArrayDescriptor::new_2d::<f64>(w, h).with_flags(ArrayFlags::SURFACE_LDST);
    let mut array = CudaArray::new(&ctx, desc).unwrap();
    let surface = Surface::new(&mut array).unwrap();
    fetch::surf_write_f64::prepare(&ctx)
        .unwrap()
        .prepared_call(grid, 32, surface.object(), &src_dev, w as i32, h as i32)
        .unwrap();
    drop(surface);
    // The kernel's `3 * v - 1` is one fused multiply-add (NVRTC fuses by default).
    let want: Vec<f64> = src.iter().map(|v| 3.0f64.mul_add(*v, -1.0)).collect();
    assert_eq!(array.to_vec::<f64>().unwrap(), want);

    let z = Array2::from_shape_vec((h, w), c64s(&mut rng, w * h)).unwrap();
    let mut zarr = CudaArray::from_ndarray(&ctx, &z, ArrayFlags::SURFACE_LDST).unwrap();
    let zsurf = Surface::new(&mut zarr).unwrap();
    let mut back = ctx.alloc_zeros::<Complex64>(w * h).unwrap();
    fetch::surf_read_c128::prepare(&ctx)
        .unwrap()
        .prepared_call(grid, 32, zsurf.object(), &mut back, w as i32, h as i32)
        .unwrap();
    assert_eq!(back.to_vec().unwrap(), z.as_slice().unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_kernels_match_num_complex() {
    let ctx = ctx();
    let mut rng = Rng::new(505);
    let n = 10_000;
    let a = Complex64::new(rng.f64(), rng.f64());
    let x = c64s(&mut rng, n);
    let mut y = c64s(&mut rng, n);
    let want: Vec<Complex64> = x.iter().zip(&y).map(|(x, y)| a * x + y).collect();
    zaxpy(&ctx, (n as u32).div_ceil(256), 256, a, &x, &mut y, n as i32).unwrap();
    for (i, (g, w)) in y.iter().zip(&want).enumerate() {
        assert!((g - w).norm() <= 1e-14 * (1.0 + w.norm()), "{i}: {g} vs {w}");
    }

    // The template on f64, Complex32 and Complex64, from device buffers and host arrays.
    let mix_ref = |x: Complex64, y: Complex64| (x / y) * 2.0 - x;
    let xs = c64s(&mut rng, n);
    let ys = c64s(&mut rng, n);
    let mut out = vec![Complex64::default(); n];
    mix::<Complex64>(&ctx, (n as u32).div_ceil(256), 256, &xs, &ys, &mut out, n as i32).unwrap();
    for i in 0..n {
        let w = mix_ref(xs[i], ys[i]);
        assert!(
            (out[i] - w).norm() <= 1e-12 * (1.0 + w.norm()),
            "{i}: {} vs {w}",
            out[i]
        );
    }
    let xs32 = ctx.to_device(&c32s(&mut rng, n)).unwrap();
    let ys32 = ctx.to_device(&c32s(&mut rng, n)).unwrap();
    let mut out32 = ctx.alloc_zeros::<Complex32>(n).unwrap();
    mix::prepare::<Complex32>(&ctx)
        .unwrap()
        .prepared_call((n as u32).div_ceil(256), 256, &xs32, &ys32, &mut out32, n as i32)
        .unwrap();
    let (hx, hy, got) = (
        xs32.to_vec().unwrap(),
        ys32.to_vec().unwrap(),
        out32.to_vec().unwrap(),
    );
    for i in 0..n {
        let w = (hx[i] / hy[i]) * 2.0 - hx[i];
        assert!(
            (got[i] - w).norm() <= 1e-4 * (1.0 + w.norm()),
            "{i}: {} vs {w}",
            got[i]
        );
    }
    let xr: Vec<f64> = (0..n).map(|_| rng.f64()).collect();
    let yr: Vec<f64> = (0..n).map(|_| rng.f64() + 2.0).collect();
    let mut outr = vec![0f64; n];
    mix::<f64>(&ctx, (n as u32).div_ceil(256), 256, &xr, &yr, &mut outr, n as i32).unwrap();
    for i in 0..n {
        let w = (xr[i] / yr[i]) * 2.0 - xr[i];
        assert!((outr[i] - w).abs() <= 1e-14 * (1.0 + w.abs()), "{i}");
    }

    // conj(z) z, sqrt, (|z|, arg z), exp(log z), against num_complex.
    let z = c64s(&mut rng, n);
    let mut f = vec![Complex64::default(); 4 * n];
    cfuncs::<Complex64>(&ctx, (n as u32).div_ceil(256), 256, &z, &mut f, n as i32).unwrap();
    for i in 0..n {
        let v = z[i];
        let want = [
            v.conj() * v,
            v.sqrt(),
            Complex64::new(v.norm(), v.arg()),
            v.ln().exp(),
        ];
        for (k, w) in want.iter().enumerate() {
            let g = f[4 * i + k];
            assert!(
                (g - w).norm() <= 1e-13 * (1.0 + w.norm()),
                "{i}.{k}: {g} vs {w} for z = {v}"
            );
        }
    }
    let z32 = c32s(&mut rng, n);
    let mut sq = vec![Complex32::default(); n];
    cstd_square(&ctx, (n as u32).div_ceil(256), 256, &z32, &mut sq, n as i32).unwrap();
    for i in 0..n {
        let w = z32[i] * z32[i];
        assert!(
            (sq[i] - w).norm() <= 1e-5 * (1.0 + w.norm()),
            "{i}: {} vs {w}",
            sq[i]
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn linear_textures_bind_views_at_any_offset() {
    let ctx = ctx();
    let mut rng = Rng::new(506);
    let align = ctx.device().attribute(DeviceAttribute::TextureAlignment).unwrap() as u64;
    let n = 4000;
    let host = rng.vec_f32(n + 300);
    let buf = ctx.to_device(&host).unwrap();
    println!("TextureAlignment {align}, buffer at {:#x}", buf.device_ptr());
    let k = fetch::fetch_f32::prepare(&ctx).unwrap();
    for start in [0usize, 1, 3, 17, 128, 129, 257] {
        let view = buf.slice(start..start + n).unwrap();
        let (tex, offset) = Texture::from_linear_offset(&view, &TextureDesc::default()).unwrap();
        let expected_offset = (view.device_ptr() % align) as usize / 4;
        assert_eq!(offset, expected_offset, "view at element {start}");
        if offset != 0 {
            let e = Texture::from_linear(&view, &TextureDesc::default()).unwrap_err();
            assert!(
                matches!(e, Error::Texture(TextureError::LinearMisaligned { address, .. }) if address == view.device_ptr()),
                "{e}"
            );
            // The message names the way out (a message test).
            assert!(e.to_string().contains("from_linear_offset"), "{e}");
        }
        let mut out = ctx.alloc_zeros::<f32>(n).unwrap();
        k.prepared_call(
            (n as u32).div_ceil(256),
            256,
            tex.object(),
            offset as i32,
            &mut out,
            n as i32,
        )
        .unwrap();
        assert_eq!(
            out.to_vec().unwrap(),
            &host[start..start + n],
            "view at element {start}"
        );
    }
    // Complex doubles at an odd element: 16-byte elements, the double hack through int4.
    let z = c64s(&mut rng, 1000);
    let zbuf = ctx.to_device(&z).unwrap();
    let view = zbuf.slice(5..1000).unwrap();
    let (tex, offset) = Texture::from_linear_offset(&view, &TextureDesc::default()).unwrap();
    let mut zout = ctx.alloc_zeros::<Complex64>(995).unwrap();
    fetch::fetch_c128::prepare(&ctx)
        .unwrap()
        .prepared_call(4, 256, tex.object(), offset as i32, &mut zout, 995)
        .unwrap();
    assert_eq!(zout.to_vec().unwrap(), &z[5..]);
    // Filtering would mix the halves of the doubles: refused.
    let filtered = TextureDesc {
        filter_mode: FilterMode::Linear,
        ..TextureDesc::default()
    };
    let e = Texture::from_linear_offset(&view, &filtered).unwrap_err();
    assert!(
        matches!(e, Error::Texture(TextureError::BitCastSampling { rust_type, .. }) if rust_type.ends_with("Complex<f64>")),
        "{e}"
    );
}
