use super::*;

const AXPY: [Param<'static>; 4] = [
    Param::new("a", "float", Role::Scalar),
    Param::new("x", "float", Role::Input),
    Param::new("y", "double", Role::Input),
    Param::new("z", "float", Role::Output),
];

fn axpy(operation: &str) -> Elementwise<'_> {
    Elementwise {
        name: "axpy",
        params: &AXPY,
        operation,
        preamble: "#define TWO 2",
        ..Elementwise::default()
    }
}

#[test]
fn the_contiguous_kernel_is_a_vectorized_loop_and_a_scalar_tail() {
    let src = axpy("z = a * x + y").source(&[Variant::Contiguous]);
    let expected = [
        VEC4,
        "#define TWO 2\n",
        "extern \"C\" __global__ void axpy_contig(long long n, int gpu_vec, float a, \
         const float *__restrict__ x__p, long long x__o, const double *__restrict__ y__p, long long y__o, \
         float *__restrict__ z__p, long long z__o) {\n",
        HEAD,
        "\nlong long gpu_done = 0;\nif (gpu_vec) {\nlong long gpu_nv = n / 4;\n",
        "for (long long gpu_j = gpu_t; gpu_j < gpu_nv; gpu_j += gpu_nt) {\n",
        "gpu_vec4<float> x__v = ((const gpu_vec4<float> *)(x__p + x__o))[gpu_j];\n",
        "gpu_vec4<double> y__v = ((const gpu_vec4<double> *)(y__p + y__o))[gpu_j];\n",
        // Written before it is read: not loaded.
        "gpu_vec4<float> z__v;\n",
        "#pragma unroll\nfor (int gpu_k = 0; gpu_k < 4; ++gpu_k) { long long i __attribute__((unused)) = 4 * gpu_j + gpu_k; \
         const float &x = x__v.v[gpu_k];const double &y = y__v.v[gpu_k];float &z = z__v.v[gpu_k];\n\
         {\n#line 1 \"operation\"\nz = a * x + y\n;}\n}\n",
        "((gpu_vec4<float> *)(z__p + z__o))[gpu_j] = z__v;\n",
        "}\ngpu_done = 4 * gpu_nv;\n}\n",
        "for (long long i = gpu_done + gpu_t; i < n; i += gpu_nt) { \
         const float &x = x__p[x__o + i];const double &y = y__p[y__o + i];float &z = z__p[z__o + i];\n\
         {\n#line 1 \"operation\"\nz = a * x + y\n;}\n}\n}\n",
    ]
    .concat();
    assert_eq!(src, expected);
}

#[test]
fn an_output_the_operation_reads_is_loaded() {
    let src = axpy("z += a * x").source(&[Variant::Contiguous]);
    assert!(src.contains("gpu_vec4<float> z__v = ((const gpu_vec4<float> *)(z__p + z__o))[gpu_j];\n"));
    assert!(!src.contains("gpu_vec4<float> z__v;"));
}

#[test]
fn the_strided_kernel_indexes_every_array_through_its_strides() {
    let params = [
        Param::new("x", "int", Role::Input),
        Param::new("k", "long long", Role::Scalar),
        Param::new("z", "int", Role::Output),
    ];
    let k = Elementwise {
        name: "f",
        params: &params,
        operation: "z = x + k // a comment",
        ..Elementwise::default()
    };
    let src = k.source(&[Variant::Strided(3)]);
    let op = "const int &x = x__p[x__i];int &z = z__p[z__i];\n{\n#line 1 \"operation\"\nz = x + k // a comment\n;}\n";
    let expected = [
        VEC4,
        "\n",
        "extern \"C\" __global__ void f_strided3(long long n, long long gpu_chunk, int gpu_vec, const int *__restrict__ x__p, long long x__o, \
         long long k, int *__restrict__ z__p, long long z__o, long long gpu_d0, long long gpu_d1, long long gpu_d2, \
         long long x__s0, long long x__s1, long long x__s2, long long z__s0, long long z__s1, long long z__s2) {\n",
        HEAD,
        "\nif (gpu_chunk == 0) {\n",
        "for (long long i = gpu_t; i < n; i += gpu_nt) {\n",
        "long long gpu_r = i; long long x__i = x__o; long long z__i = z__o; \
         { long long gpu_c = gpu_r % gpu_d2; gpu_r /= gpu_d2; x__i += gpu_c * x__s2; z__i += gpu_c * z__s2; } \
         { long long gpu_c = gpu_r % gpu_d1; gpu_r /= gpu_d1; x__i += gpu_c * x__s1; z__i += gpu_c * z__s1; } \
         { long long gpu_c = gpu_r; x__i += gpu_c * x__s0; z__i += gpu_c * z__s0; }\n",
        // The `;` after the comment's line ends the statement.
        op,
        "}\n} else {\n",
        // Rows of the last axis in tiles: the other axes' index once per tile.
        "long long gpu_chunks = (gpu_d2 + gpu_chunk - 1) / gpu_chunk;\n\
         long long gpu_tiles = (n / gpu_d2) * gpu_chunks;\n\
         for (long long gpu_tile = blockIdx.x; gpu_tile < gpu_tiles; gpu_tile += gridDim.x) {\n\
         long long gpu_row = gpu_tile / gpu_chunks;\n\
         long long gpu_c0 = (gpu_tile - gpu_row * gpu_chunks) * gpu_chunk;\n\
         long long gpu_c1 = min(gpu_c0 + gpu_chunk, gpu_d2);\n",
        "long long gpu_r = gpu_row; long long x__i = x__o; long long z__i = z__o; \
         { long long gpu_c = gpu_r % gpu_d1; gpu_r /= gpu_d1; x__i += gpu_c * x__s1; z__i += gpu_c * z__s1; } \
         { long long gpu_c = gpu_r; x__i += gpu_c * x__s0; z__i += gpu_c * z__s0; }\n",
        // Four elements at a time, as vectors, when the launch says the rows allow it; a
        // broadcast array's element read once.
        "if (gpu_vec) {\n#pragma unroll 2\n\
         for (long long gpu_c = gpu_c0 + 4 * threadIdx.x; gpu_c < gpu_c1; gpu_c += 4 * blockDim.x) {\n\
         gpu_vec4<int> x__v;\n\
         if (x__s2 == 0) { for (int gpu_k = 0; gpu_k < 4; ++gpu_k) x__v.v[gpu_k] = x__p[x__i]; } \
         else x__v = *(const gpu_vec4<int> *)(x__p + x__i + gpu_c);\n\
         gpu_vec4<int> z__v;\n\
         #pragma unroll\nfor (int gpu_k = 0; gpu_k < 4; ++gpu_k) { long long i __attribute__((unused)) = gpu_row * gpu_d2 + gpu_c + gpu_k; \
         const int &x = x__v.v[gpu_k];int &z = z__v.v[gpu_k];\n\
         {\n#line 1 \"operation\"\nz = x + k // a comment\n;}\n}\n\
         *(gpu_vec4<int> *)(z__p + z__i + gpu_c) = z__v;\n}\n} else {\n",
        "#pragma unroll 4\nfor (long long gpu_c = gpu_c0 + threadIdx.x; gpu_c < gpu_c1; gpu_c += blockDim.x) {\n\
         long long i __attribute__((unused)) = gpu_row * gpu_d2 + gpu_c; \
         const int &x = x__p[x__i + gpu_c * x__s2];int &z = z__p[z__i + gpu_c * z__s2];\n\
         {\n#line 1 \"operation\"\nz = x + k // a comment\n;}\n}\n}\n}\n}\n}\n",
    ]
    .concat();
    assert_eq!(src, expected);
}

#[test]
fn the_indexed_kernel_is_pycuda_s_loop_over_pointers() {
    let k = Elementwise {
        name: "lin",
        params: &AXPY,
        operation: "z[i] = a * x[i] + y[i]",
        loop_prep: "float two = 2;",
        after_loop: "(void)two;",
        ..Elementwise::default()
    };
    assert!(k.is_indexed());
    assert_eq!(k.variants(), vec![Variant::Indexed]);
    assert!(!axpy("z = a * x").is_indexed());
    assert_eq!(axpy("z = x").variants().len(), 1 + MAX_DIMS);
    let src = k.source(&[Variant::Indexed]);
    let expected = [
        VEC4,
        "\n",
        "extern \"C\" __global__ void lin_indexed(long long n, float a, \
         const float *__restrict__ x__p, long long x__o, const double *__restrict__ y__p, long long y__o, \
         float *__restrict__ z__p, long long z__o) {\n",
        "const float *__restrict__ x __attribute__((unused)) = x__p + x__o;\n",
        "const double *__restrict__ y __attribute__((unused)) = y__p + y__o;\n",
        "float *__restrict__ z __attribute__((unused)) = z__p + z__o;\n",
        HEAD,
        "float two = 2;\nlong long i;\nfor (i = gpu_t; i < n; i += gpu_nt) {\n#line 1 \"operation\"\nz[i] = a * x[i] + y[i]\n;}\n(void)two;\n}\n",
    ]
    .concat();
    assert_eq!(src, expected);
}

#[test]
fn one_module_holds_several_variants_after_one_vector_type() {
    let k = axpy("z = x");
    let all = k.source(&[Variant::Contiguous, Variant::Strided(1), Variant::Strided(2)]);
    assert_eq!(all.matches("struct alignas").count(), 1);
    assert_eq!(all.matches("#define TWO 2").count(), 1);
    for v in [Variant::Contiguous, Variant::Strided(1), Variant::Strided(2)] {
        let one = k.source(&[v]);
        let kernel = one
            .strip_prefix(&format!("{VEC4}#define TWO 2\n"))
            .expect("the prefix");
        assert!(all.contains(kernel), "{v:?}");
        assert!(kernel.contains(&format!("void {}(", k.kernel_name(v))));
    }
    assert_eq!(k.kernel_name(Variant::Strided(2)), "axpy_strided2");
    // Each binding of the operation: the vector chunk, the scalar tail, the strided index
    // (over one axis: the flat loop; over two: the flat loop, and the rows, as vectors or not).
    assert_eq!(all.matches("#line 1 \"operation\"\nz = x\n;").count(), 6);
}

#[test]
fn every_variant_is_listed_once() {
    let all: Vec<Variant> = Variant::all().collect();
    assert_eq!(all.len(), 1 + MAX_DIMS);
    assert_eq!(all[0], Variant::Contiguous);
    assert_eq!(all[MAX_DIMS], Variant::Strided(MAX_DIMS));
}
