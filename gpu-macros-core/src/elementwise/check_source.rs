//! The CUDA C the build-time check compiles: the run time's own kernels for this fn.

use gpu_cuda_source::elementwise::{self as generator, Elementwise};

use crate::elementwise::params::{Param, ReadElement};

/// The module the build-time check compiles: every variant the run time may compile for
/// this fn (`Elementwise::variants`: the indexed kernel alone for PyCUDA's indexed form),
/// written by the generator the run time uses (`gpu_cuda_source::elementwise`), from the same name,
/// argument list, operation and preamble (`<gpu_runtime/complex.h>` for complex arguments, then
/// CUDA's headers of the 16-bit float types the arguments name, as `ElementwiseKernel::with_name`
/// makes it), so that the check compiles the text that runs.
pub(super) fn check_source(name: &str, params: &[Param], op: &str) -> String {
    with_generator_params(params, None, |c_params, preamble| {
        let kernel = Elementwise {
            name,
            params: c_params,
            operation: op,
            preamble,
            ..Elementwise::default()
        };
        kernel.source(&kernel.variants())
    })
}

/// Calls `f` with the generator's parameters of `params` and the preamble the run time writes
/// before the kernels, shared by `#[elementwise]` and `#[reduction]` (whose `result` type counts
/// too): the complex header first when a type is complex, then the 16-bit floats' (the run
/// time's `cast::headers_for`).
pub(crate) fn with_generator_params<R>(
    params: &[Param],
    result: Option<&ReadElement>,
    f: impl FnOnce(&[generator::Param<'_>], &str) -> R,
) -> R {
    let complex = if params.iter().any(|p| p.complex) || result.is_some_and(|r| r.complex) {
        "#include <gpu_runtime/complex.h>\n"
    } else {
        ""
    };
    let scalars = params.iter().map(|p| p.scalar).chain(result.map(|r| r.scalar));
    let preamble = complex.to_owned() + &generator::scalar_includes(scalars);
    let names: Vec<String> = params.iter().map(Param::c_name).collect();
    let c_params: Vec<generator::Param<'_>> = params
        .iter()
        .zip(&names)
        .map(|(p, n)| generator::Param::new(n, p.c_type, p.role))
        .collect();
    f(&c_params, &preamble)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_cuda_source::elementwise::{Role, Variant, OPERATION_FILE};
    use gpu_cuda_source::Scalar;

    use crate::elementwise::params::c_arguments;
    use crate::elementwise::test_support::{params, AXPY};

    /// The run time's reading of the C argument list the macro emits
    /// (`gpu_runtime::gpuarray::kernels::args::parse_params`, through gpu-cuda-source): names,
    /// element scalars and roles.
    fn as_the_run_time_reads(arguments: &str) -> Vec<(String, Scalar, Role)> {
        let decl = gpu_cuda_source::find_kernel(
            &format!("__global__ void gpu_params({arguments}) {{}}"),
            "gpu_params",
        )
        .expect("the arguments read");
        decl.params
            .into_iter()
            .map(|p| {
                let name = p.name.expect("a name");
                match p.ty {
                    gpu_cuda_source::CType::Scalar(s) => (name, s, Role::Scalar),
                    gpu_cuda_source::CType::Pointer {
                        pointee,
                        pointee_const,
                    } => match *pointee {
                        gpu_cuda_source::CType::Scalar(s) if pointee_const => (name, s, Role::Input),
                        gpu_cuda_source::CType::Scalar(s) => (name, s, Role::Output),
                        other => panic!("an array of {other:?}"),
                    },
                    other => panic!("an argument of type {other:?}"),
                }
            })
            .collect()
    }

    #[test]
    fn the_check_compiles_what_the_run_time_generates() {
        let items = [
            AXPY,
            "fn f(k: u64, b: &mut PooledArray<i8>, c: &DeviceArray<u16>, r#type: i64);",
            "fn f(h: half::f16, x: &DeviceArray<half::bf16>, m: &DeviceArray<Bool>, z: &mut DeviceArray<f16>);",
            "fn f(s: gpu_runtime::gpuarray::Bool, z: &mut DeviceArray<gpu_runtime::half::bf16>);",
        ];
        for item in items {
            let ps = params(item);
            let op = "b = k; z = a * x + y // either";
            let check = check_source("f", &ps, op);
            // The run time builds its kernel from the C arguments the macro emits.
            let read = as_the_run_time_reads(&c_arguments(&ps));
            let run_time_params: Vec<generator::Param<'_>> = read
                .iter()
                .map(|(n, s, r)| generator::Param::new(n, s.c_name(), *r))
                .collect();
            // `ElementwiseKernel::with_name`'s preamble: the headers of the arguments' types.
            let preamble = generator::scalar_includes(read.iter().map(|(_, s, _)| *s));
            let run_time = Elementwise {
                name: "f",
                params: &run_time_params,
                operation: op,
                preamble: &preamble,
                ..Elementwise::default()
            };
            // Every variant the run time may compile is in the check's module, as it is
            // generated at run time.
            let prefix = run_time.source(&[]);
            assert!(check.starts_with(&prefix));
            let mut kernels = String::new();
            for v in Variant::all() {
                let one = run_time.source(&[v]);
                kernels.push_str(one.strip_prefix(&prefix).expect("the shared prefix"));
            }
            assert_eq!(check, prefix + &kernels, "{item}");
        }
        let src = check_source("axpy", &params(AXPY), "z = a * x + y");
        assert!(src.contains(
            "extern \"C\" __global__ void axpy_contig(long long n, int gpu_vec, float a, const float *__restrict__ x__p, long long x__o"
        ));
        assert!(src.contains("void axpy_strided8("));
        // The vector chunk and the tail; the flat loop of each strided kernel, and the rows
        // of those over two axes or more (as vectors and not).
        assert_eq!(
            src.matches("{\n#line 1 \"operation\"\nz = a * x + y\n;}").count(),
            2 + 8 + 2 * 7
        );
        // PyCUDA's indexed form: the indexed kernel alone, as the run time compiles it.
        let indexed = check_source("axpy", &params(AXPY), "z[i] = a * x[i] + y[i]");
        assert!(indexed.contains("void axpy_indexed("));
        assert!(!indexed.contains("_contig(") && !indexed.contains("_strided"));
        // The 16-bit floats need CUDA's headers, before the kernels; `bool` needs none.
        let halves = check_source(
            "h",
            &params("fn h(x: &DeviceArray<half::f16>, y: &DeviceArray<bf16>, z: &mut DeviceArray<Bool>);"),
            "z = x > y",
        );
        assert!(halves.contains("#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"));
        // The complex header first, as the run time's `cast::headers_for` writes it.
        let complex = check_source(
            "c",
            &params("fn c(x: &DeviceArray<Complex32>, y: &DeviceArray<half::f16>, z: &mut DeviceArray<Complex32>);"),
            "z = x",
        );
        assert!(complex.contains("#include <gpu_runtime/complex.h>\n#include <cuda_fp16.h>\n"));
        assert_eq!(complex.matches("#include <gpu_runtime/complex.h>").count(), 1);
        assert!(
            halves.contains("const __half *__restrict__ x__p") && halves.contains("bool *__restrict__ z__p")
        );
        let flags = check_source(
            "b",
            &params("fn b(x: &DeviceArray<Bool>, z: &mut DeviceArray<Bool>);"),
            "z = !x",
        );
        assert!(!flags.contains("#include"));
    }

    /// The check's module for valid operations compiles with NVRTC (as the build-time check
    /// runs it) without a message: the generated code around the operation is clean, so every
    /// message the check reports is about the operation.
    #[test]
    fn the_check_module_compiles_without_messages() {
        let lib = crate::nvrtc::get()
            .unwrap_or_else(|e| panic!("NVRTC must be loadable (source scripts/nvrtc-env.sh): {e}"));
        let arch = lib.archs().last().copied().expect("an architecture");
        let cases = [
            (AXPY, "z = a * x + y"),
            (AXPY, "z += i * a + x - y; // uses the index"),
            (AXPY, "z[i] = a * x[i] + y[n - 1 - i]; // PyCUDA's indexed form"),
            (
                "fn f(k: u64, b: &mut PooledArray<i8>, c: &DeviceArray<u16>);",
                "b = c > k ? 1 : 0",
            ),
            // The 16-bit floats, with CUDA's operators on them, and C's `bool`.
            (
                "fn f(a: half::f16, x: &DeviceArray<half::f16>, y: &DeviceArray<f16>, z: &mut DeviceArray<half::f16>);",
                "z = a * x + y",
            ),
            (
                "fn f(a: half::bf16, x: &DeviceArray<half::bf16>, z: &mut DeviceArray<bf16>);",
                "z = a * x + __float2bfloat16(1.0f)",
            ),
            (
                "fn f(x: &DeviceArray<f32>, m: &DeviceArray<Bool>, z: &mut DeviceArray<Bool>);",
                "z = m && x > 0.5f",
            ),
            (
                "fn f(x: &DeviceArray<half::f16>, y: &DeviceArray<half::bf16>, m: &mut DeviceArray<Bool>, s: &mut DeviceArray<f32>);",
                "s = __half2float(x) + __bfloat162float(y); m = s > 0.0f",
            ),
            (
                "fn f(a: half::f16, x: &DeviceArray<half::f16>, z: &mut DeviceArray<half::f16>);",
                "z[i] = a * x[n - 1 - i]; // PyCUDA's indexed form",
            ),
            // Complex numbers (`<gpu_runtime/complex.h>`), with real arrays beside them.
            (
                "fn f(a: Complex32, x: &DeviceArray<Complex32>, z: &mut DeviceArray<types::Complex32>);",
                "z = a * x + gpu_runtime::conj(x)",
            ),
            (
                "fn f(x: &DeviceArray<Complex64>, s: f64, r: &mut DeviceArray<f64>);",
                "r = s * gpu_runtime::abs(x) + x.real()",
            ),
        ];
        for (item, op) in cases {
            let src = check_source("f", &params(item), op);
            let r = lib
                .compile(
                    &src,
                    OPERATION_FILE,
                    &[],
                    &[format!("--gpu-architecture=compute_{arch}")],
                    crate::nvrtc::Want::Check,
                    true,
                    &[],
                )
                .expect("NVRTC runs");
            assert!(r.ok && r.log.trim().is_empty(), "{op}:\n{}\n{src}", r.log);
        }
    }
}
