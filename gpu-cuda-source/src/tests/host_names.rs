//! Names a kernel written for nvcc uses undeclared: glibc's `<sys/types.h>` integers and the
//! vector typedefs of `cuComplex.h`.

use super::*;

#[test]
fn host_integer_names_are_their_scalars() {
    use Scalar::*;
    let cases: &[(&str, Scalar)] = &[
        ("uint n", U32),
        ("ushort n", U16),
        ("ulong n", U64),
        ("u_int n", U32),
        ("u_short n", U16),
        ("u_long n", U64),
        ("u_char n", U8),
        ("u_int8_t n", U8),
        ("u_int16_t n", U16),
        ("u_int32_t n", U32),
        ("u_int64_t n", U64),
        ("quad_t n", I64),
        ("u_quad_t n", U64),
        ("ssize_t n", Isize),
        ("register_t n", I64),
        ("const uint n", U32),
        ("volatile ushort n", U16),
    ];
    for (param, want) in cases {
        assert_eq!(param_ty(param), sc(*want), "{param}");
    }
    assert_eq!(param_ty("const uint *__restrict__ keys"), ptr(sc(U32), true));
    assert_eq!(param_ty("uint *keys"), ptr(sc(U32), false));
    assert_eq!(param_ty("ulong keys[]"), ptr(sc(U64), false));
}

#[test]
fn names_glibc_does_not_declare_stay_named() {
    // `uchar` and `u_int128` are no glibc names: without a typedef in the source they are
    // whatever struct the source declares.
    assert_eq!(param_ty("uchar c"), named("uchar"));
    assert_eq!(param_ty("uint_t c"), named("uint_t"));
    assert_eq!(param_ty("uint4 v"), named("uint4"));
}

#[test]
fn a_source_typedef_of_a_host_name_wins() {
    // The source's own declaration is what NVRTC sees (with the prelude it would be an error
    // for a different type; without it, this is the type).
    let src = "typedef int uint;\n__global__ void k(uint n) {}";
    assert_eq!(find_kernel(src, "k").unwrap().params[0].ty, sc(Scalar::I32));
    // The usual redeclaration of the same type.
    let src =
        "typedef unsigned int uint;\ntypedef unsigned char uchar;\n__global__ void k(uint n, uchar *c) {}";
    let k = find_kernel(src, "k").unwrap();
    assert_eq!(k.params[0].ty, sc(Scalar::U32));
    assert_eq!(k.params[1].ty, ptr(sc(Scalar::U8), false));
}

#[test]
fn host_names_in_aliases_and_globals() {
    let src = "typedef uint key_type;\nusing count = ushort;\n__constant__ uint table[4];\n\
               __global__ void k(key_type *keys, count c) {}";
    let k = find_kernel(src, "k").unwrap();
    assert_eq!(k.params[0].ty, ptr(sc(Scalar::U32), false));
    assert_eq!(k.params[1].ty, sc(Scalar::U16));
    let g = find_global_decls(src);
    assert_eq!(g[0].ty, sc(Scalar::U32));
    assert_eq!(g[0].dims, [4]);
}

#[test]
fn cucomplex_typedefs_are_their_vector_types() {
    assert_eq!(param_ty("cuFloatComplex z"), named("float2"));
    assert_eq!(param_ty("cuComplex z"), named("float2"));
    assert_eq!(param_ty("const cuDoubleComplex *z"), ptr(named("double2"), true));
    // A user's own vector typedef goes through the same alias machinery.
    let src = "typedef float4 vec4;\nusing cplx = cuDoubleComplex;\n\
               __global__ void k(vec4 *v, cplx z) {}";
    let k = find_kernel(src, "k").unwrap();
    assert_eq!(k.params[0].ty, ptr(named("float4"), false));
    assert_eq!(k.params[1].ty, named("double2"));
}
