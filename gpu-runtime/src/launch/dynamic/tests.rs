//! Argument checks of run-time typed launches, without a GPU.

use super::arg::*;
use crate::error::{ArgHint, ArgumentError};
#[allow(unused_imports)]
use crate::error::{CopyError, Error};

#[test]
fn host_arrays_fit_the_pointers_their_direction_allows() {
    let (a, mut b, mut c) = (vec![1f32; 4], vec![0f32; 4], vec![0f32; 4]);
    let input = Arg::host_in(&a);
    let output = Arg::host_out(&mut b);
    let both = Arg::host_in_out(&mut c);
    // In reads only: fits `const T *` and `T *`; Out and InOut need a writable `T *`.
    assert!(input.fits(ArgType::ConstPtr) && input.fits(ArgType::MutPtr));
    assert!(!output.fits(ArgType::ConstPtr) && output.fits(ArgType::MutPtr));
    assert!(!both.fits(ArgType::ConstPtr) && both.fits(ArgType::MutPtr));
    assert!(!input.fits(ArgType::F32));
    assert_eq!(input.elem_size(), Some(4));
    assert!(output.describe().contains("host_out"));
    let Arg::Host(h) = &both else { panic!("{both:?}") };
    assert_eq!((h.bytes, h.direction), (16, Direction::InOut));
}

#[cfg(feature = "gpuarray")]
#[test]
fn a_non_contiguous_array_is_refused_when_copied() {
    let m = ndarray::Array2::<f64>::zeros((3, 5));
    // Every other column: contiguous in no order.
    let strided = m.slice(ndarray::s![.., ..;2]);
    let Arg::Host(h) = Arg::host_in(&strided) else {
        panic!()
    };
    assert!(matches!(
        h.checked_ptr(),
        Err(Error::Copy(CopyError::HostArrayLayout { operation: "Arg::host_in", ref strides, .. })) if strides == &[5, 2]
    ));
    // A reversed axis: `ndarray` counts it contiguous, but its memory holds the rows
    // backwards and its first element is not its lowest address.
    let mut back = m.clone();
    back.invert_axis(ndarray::Axis(0));
    let Arg::Host(h) = Arg::host_in_out(&mut back) else {
        panic!()
    };
    assert!(matches!(
        h.checked_ptr(),
        Err(Error::Copy(CopyError::HostArrayLayout { operation: "Arg::host_in_out", ref strides, .. })) if strides == &[-5, 1]
    ));
    let Arg::Host(h) = Arg::host_in(&m) else { panic!() };
    assert_eq!((h.checked_ptr().is_ok(), h.bytes, h.elem_size), (true, 120, 8));
}

use std::mem::offset_of;

use super::declared::{complex_rust_type as complex_rust_type_of, resolve, Signature, StructLayouts};
use super::value::{StructType, VectorType};
use crate::types::vector::{Float2, Float4, Int4};

fn format_error(format: &str) -> (usize, Option<char>, String) {
    match ArgType::parse_format(format) {
        Err(Error::ArgumentFormat {
            format: f,
            position,
            character,
            detail,
        }) => {
            assert_eq!(f, format);
            (position, character, detail)
        }
        other => panic!("{format:?}: {other:?}"),
    }
}

#[test]
fn format_strings_read_as_pycuda_reads_them() {
    use ArgType::*;
    let t = ArgType::parse_format("PPfi").unwrap();
    assert_eq!(t, [Ptr, Ptr, F32, I32]);
    let every = ArgType::parse_format("bBc?hHiIlLqQnNefdP").unwrap();
    assert_eq!(
        every,
        [I8, U8, I8, Bool, I16, U16, I32, U32, I64, U64, I64, U64, I64, U64, F16, F32, F64, Ptr]
    );
    // Complex numbers are CUDA's float2 and double2 (cuFloatComplex, cuDoubleComplex).
    assert_eq!(
        ArgType::parse_format("FD").unwrap(),
        [
            Vector(VectorType::of::<Float2>()),
            Vector(VectorType::from_c_name("cuDoubleComplex").unwrap())
        ]
    );
    // Standard sizes: `l` is 4 bytes there, as in Python's struct module.
    assert_eq!(ArgType::parse_format("=lL").unwrap(), [I32, U32]);
    assert_eq!(ArgType::parse_format("<l").unwrap(), [I32]);
    assert_eq!(ArgType::parse_format("@l").unwrap(), [I64]);
    // A count repeats, except for `s`, where it is the size of one value.
    assert_eq!(
        ArgType::parse_format(" 3f 16s s\tP ").unwrap(),
        [
            F32,
            F32,
            F32,
            Struct(StructType::bytes(16)),
            Struct(StructType::bytes(1)),
            Ptr
        ]
    );
    assert_eq!(ArgType::parse_format("0f").unwrap(), []);
    assert_eq!(ArgType::parse_format("").unwrap(), []);
    assert_eq!(ArgType::parse_format("64B").unwrap().len(), MAX_ARGS);
}

#[test]
fn a_bad_format_character_is_an_error_naming_it() {
    for (format, position, character, says) in [
        ("PPz", 2, Some('z'), "`z` is not a format character"),
        ("ix", 1, Some('x'), "pad byte"),
        ("p", 0, Some('p'), "Pascal string"),
        ("fg", 1, Some('g'), "long double"),
        (">i", 0, Some('>'), "big-endian"),
        ("!i", 0, Some('!'), "big-endian"),
        ("i<", 1, Some('<'), "may only come first"),
        ("<P", 1, Some('P'), "only in native mode"),
        ("=n", 1, Some('n'), "only in native mode"),
        ("P4", 2, None, "ends after the count 4"),
        ("0s", 1, Some('s'), "no bytes"),
        ("60f5i", 4, Some('i'), "describes more than 64 parameters"),
        ("99999999999999999999999f", 19, Some('9'), "too large"),
        ("2 f", 1, Some(' '), "not a format character"),
    ] {
        let (p, c, detail) = format_error(format);
        assert_eq!((p, c), (position, character), "{format:?}: {detail}");
        // a message test: the detail says what is wrong with the character and what to write.
        assert!(detail.contains(says), "{format:?}: {detail}");
        if let Some(c) = c.filter(|c| (c.is_ascii_alphabetic() && !"is".contains(*c)) || "<>!".contains(*c)) {
            assert!(
                detail.contains(&format!("`{c}`")),
                "{format:?} names {c:?}: {detail}"
            );
        }
    }
    let e = ArgType::parse_format("PPz").unwrap_err().to_string();
    // a message test: the sentence quotes the format and names the byte and the character.
    assert!(
        e.contains("\"PPz\"") && e.contains("byte 2") && e.contains("`z`"),
        "{e}"
    );
}

#[test]
fn vectors_are_copied_into_the_argument() {
    let v = Float4::new(1.0, -2.0, 3.5, 4.25);
    let a = Arg::from(v);
    let Arg::Vector(va) = &a else { panic!("{a:?}") };
    assert_eq!(va.vector_type(), VectorType::of::<Float4>());
    assert_eq!(va.get::<Float4>(), Some(v));
    assert_eq!(va.get::<Int4>(), None);
    // The parameter's bytes are the value's, at the vector's alignment.
    let p = a.param();
    assert_eq!(p as usize % 16, 0);
    // SAFETY: a Float4 argument's param points to 16 bytes copied from a Float4.
    assert_eq!(unsafe { *(p as *const [f32; 4]) }, [1.0, -2.0, 3.5, 4.25]);
    assert!(a.fits(ArgType::Vector(VectorType::of::<Float4>())));
    assert!(!a.fits(ArgType::Vector(VectorType::of::<Int4>())));
    assert!(!a.fits(ArgType::Struct(StructType::bytes(16))));
    assert!(a.describe().contains("float4"));
}

/// A complex number's parts as a vector fit a declared complex parameter of that width (what
/// generated kernels pass), and no other struct.
#[test]
fn complex_parameters_take_the_vector_of_their_parts() {
    use crate::types::{Complex32, Complex64, Double2};
    let f2 = Arg::from(Float2::new(1.0, 2.0));
    let d2 = Arg::from(Double2::new(1.0, 2.0));
    assert!(f2.fits(ArgType::Struct(StructType::of::<Complex32>())));
    assert!(d2.fits(ArgType::Struct(StructType::of::<Complex64>())));
    assert!(!d2.fits(ArgType::Struct(StructType::of::<Complex32>())));
    assert!(!f2.fits(ArgType::Struct(StructType::bytes(8))));
    assert_eq!(
        complex_rust_type_of("gpu_runtime::complex<double>"),
        StructType::of::<Complex64>().rust
    );
    assert_eq!(complex_rust_type_of("my_pair"), None);
}

#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Params {
    scale: f32,
    n: i32,
    shift: Float2,
}
// SAFETY: repr(C) plain data, the layout of `struct Params` in SOURCE (checked below).
unsafe impl crate::types::repr::DeviceRepr for Params {}

/// Same size and alignment as `Params`, fields in another order.
#[derive(Clone, Copy)]
#[repr(C)]
struct Swapped {
    n: i32,
    scale: f32,
    shift: Float2,
}
// SAFETY: repr(C) plain data.
unsafe impl crate::types::repr::DeviceRepr for Swapped {}

#[derive(Clone, Copy)]
#[repr(C)]
struct Small {
    scale: f32,
    n: i32,
    pad: f32,
}
// SAFETY: repr(C) plain data.
unsafe impl crate::types::repr::DeviceRepr for Small {}

const SOURCE: &str = r#"
struct Params { float scale; int n; float2 shift; };
__global__ void mix(float *out, const float *x, float4 w, Params p, cudaTextureObject_t tex,
                    cudaSurfaceObject_t surf, const int4 *idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = w.x * x[i] + p.scale * tex1Dfetch<float>(tex, idx[i].x) + p.shift.y;
}
__global__ void take(float4 w, Params p, float *y) { y[threadIdx.x] = w.x * p.scale; }
template <typename T> __global__ void templ(T v, T *y) { y[threadIdx.x] = v; }
"#;

const PARAMS_FIELDS: &[(&str, usize)] = &[
    ("scale", offset_of!(Params, scale)),
    ("n", offset_of!(Params, n)),
    ("shift", offset_of!(Params, shift)),
];
const SWAPPED_FIELDS: &[(&str, usize)] = &[
    ("scale", offset_of!(Swapped, scale)),
    ("n", offset_of!(Swapped, n)),
];

/// Resolves `given` for `kernel` of SOURCE as a context without parameter sizes from the
/// driver would: struct layouts come from NVRTC.
fn resolve_in(kernel: &str, given: Option<&[ArgType]>) -> std::result::Result<Signature, ArgumentError> {
    resolve_from(SOURCE, kernel, given)
}

fn resolve_from(
    source: &str,
    kernel: &str,
    given: Option<&[ArgType]>,
) -> std::result::Result<Signature, ArgumentError> {
    let decl = gpu_cuda_source::find_kernel(source, kernel).unwrap();
    let no_driver = |_| None;
    resolve(
        kernel,
        &decl,
        given,
        &StructLayouts {
            source,
            param_size: &no_driver,
        },
    )
}

fn float4() -> ArgType {
    ArgType::Vector(VectorType::of::<Float4>())
}

#[test]
fn declared_types_cover_vectors_structs_and_objects() {
    use ArgType::*;
    let sig = resolve_in("mix", None).unwrap();
    assert_eq!(
        sig.types,
        [
            MutPtr,
            ConstPtr,
            float4(),
            // From NVRTC: sizeof(Params) and alignof(Params).
            Struct(StructType {
                align: Some(8),
                ..StructType::bytes(16)
            }),
            Texture,
            Surface,
            ConstPtr,
            I32
        ]
    );
    // A pointer to a vector type checks the buffer's element size as one to a scalar does.
    assert_eq!(
        sig.elem_sizes,
        [Some(4), Some(4), None, None, None, None, Some(16), None]
    );
    assert_eq!(&*sig.texts[3], "Params p");
}

#[test]
fn given_types_are_checked_against_the_declaration() {
    use ArgType::*;
    let params = Struct(StructType::of::<Params>().with_fields(PARAMS_FIELDS));
    let good = [Ptr, Ptr, float4(), params, Texture, Surface, ConstPtr, I32];
    let sig = resolve_in("mix", Some(&good)).unwrap();
    assert_eq!(
        sig.types[..2],
        [MutPtr, ConstPtr],
        "P takes the declared constness"
    );
    assert_eq!(sig.types[3], params, "the Rust type is kept for the launch check");
    // A format string: PyCUDA's `16s` for a record the size of a float4, `Q` for handles.
    let f = ArgType::parse_format("PP16s16sQQPi").unwrap();
    let sig = resolve_in("mix", Some(&f)).unwrap();
    assert_eq!(
        sig.types[2..6],
        [float4(), Struct(StructType::bytes(16)), Texture, Surface]
    );

    let int4 = Vector(VectorType::of::<Int4>());
    let with = |i: usize, t: ArgType| {
        let mut g = good.to_vec();
        g[i] = t;
        g
    };
    type Case = (Vec<ArgType>, fn(&ArgumentError) -> bool);
    let cases: Vec<Case> = vec![
        (with(2, int4), |e| {
            matches!(e, ArgumentError::TypeDiffers { index: 2, parameter, declared, given, vector_rust_type: None, .. }
                if &**parameter == "float4 w" && declared == "`float4` (Vector)" && given == "`int4` (Vector)")
        }),
        (with(2, Struct(StructType::of::<Float4>())), |e| {
            matches!(
                e,
                ArgumentError::TypeDiffers {
                    index: 2,
                    vector_rust_type: Some("Float4"),
                    ..
                }
            )
        }),
        (
            with(2, F32),
            |e| matches!(e, ArgumentError::TypeDiffers { index: 2, given, .. } if given == "f32"),
        ),
        (
            with(3, Struct(StructType::of::<Small>())),
            |e| matches!(e, ArgumentError::StructSize { index: 3, c_struct, c_bytes: 16, rust_type: Some(_), rust_bytes: 12, .. } if &**c_struct == "Params"),
        ),
        (with(3, Struct(StructType::bytes(12))), |e| {
            matches!(
                e,
                ArgumentError::StructSize {
                    index: 3,
                    c_bytes: 16,
                    rust_type: None,
                    rust_bytes: 12,
                    ..
                }
            )
        }),
        (
            with(3, Struct(StructType::of::<Swapped>().with_fields(SWAPPED_FIELDS))),
            |e| {
                matches!(
                    e,
                    ArgumentError::FieldOffset {
                        index: 3,
                        field: "scale",
                        c_offset: 0,
                        rust_offset: 4,
                        ..
                    }
                )
            },
        ),
        (
            with(3, float4()),
            |e| matches!(e, ArgumentError::StructExpected { index: 3, c_struct, .. } if &**c_struct == "Params"),
        ),
        (with(4, Surface), |e| {
            matches!(e, ArgumentError::TypeDiffers { index: 4, parameter, declared, .. }
                if &**parameter == "cudaTextureObject_t tex" && declared == "`cudaTextureObject_t` (Texture)")
        }),
        (with(5, Texture), |e| {
            matches!(e, ArgumentError::TypeDiffers { index: 5, .. })
        }),
        (with(4, I64), |e| {
            matches!(e, ArgumentError::TypeDiffers { index: 4, .. })
        }),
        (
            with(6, MutPtr),
            |e| matches!(e, ArgumentError::TypeDiffers { index: 6, parameter, .. } if &**parameter == "const int4 *idx"),
        ),
        (
            with(7, Ptr),
            |e| matches!(e, ArgumentError::TypeDiffers { index: 7, declared, given, .. } if declared == "i32" && given == "a pointer (Ptr)"),
        ),
        (
            good[..7].to_vec(),
            |e| matches!(e, ArgumentError::TypeCount { given: 7, expected: 8, parameters, .. } if parameters.len() == 8),
        ),
    ];
    for (given, is_expected) in cases {
        let e = resolve_in("mix", Some(&given)).unwrap_err();
        assert!(is_expected(&e), "{given:?}: {e}");
    }
    // A format string with the wrong character for a parameter.
    let e = resolve_in("mix", Some(&ArgType::parse_format("PP16s16sQQPf").unwrap())).unwrap_err();
    assert!(
        matches!(&e, ArgumentError::TypeDiffers { index: 7, declared, given, .. } if declared == "i32" && given == "f32"),
        "{e}"
    );
    // a message test: the sentence names the parameter as C writes it and both types.
    assert!(
        e.to_string()
            .contains("parameter 7 (`int n`) is i32, but f32 was given"),
        "{e}"
    );
    let e = resolve_in("mix", Some(&ArgType::parse_format("PP16s12sQQPi").unwrap())).unwrap_err();
    assert!(
        matches!(
            &e,
            ArgumentError::StructSize {
                index: 3,
                c_bytes: 16,
                rust_bytes: 12,
                ..
            }
        ),
        "{e}"
    );
    // a message test: a size mismatch reads as C's size against the value's.
    assert!(
        e.to_string()
            .contains("`Params` is 16 bytes, but the value given is 12"),
        "{e}"
    );
}

#[test]
fn struct_sizes_come_from_the_driver_when_it_reports_them() {
    // `Hidden` is defined in a header the source does not have: NVRTC cannot size it...
    const OPAQUE: &str = "__global__ void opaque(Hidden h, float *y) { }";
    let decl = gpu_cuda_source::find_kernel(OPAQUE, "opaque").unwrap();
    let e = resolve_from(OPAQUE, "opaque", None).unwrap_err();
    assert!(
        matches!(&e, ArgumentError::StructLayoutUnknown { index: 0, c_struct, driver_too_old: true, .. } if &**c_struct == "Hidden"),
        "{e}"
    );
    // ...but the loaded kernel's parameter size is enough for the size check.
    let driver = |i| (i == 0).then_some(24);
    let layouts = StructLayouts {
        source: OPAQUE,
        param_size: &driver,
    };
    let sig = resolve("opaque", &decl, None, &layouts).unwrap();
    assert_eq!(sig.types[0], ArgType::Struct(StructType::bytes(24)));
    let e = resolve(
        "opaque",
        &decl,
        Some(&[ArgType::Struct(StructType::bytes(16)), ArgType::Ptr]),
        &layouts,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            ArgumentError::StructSize {
                c_bytes: 24,
                rust_type: None,
                rust_bytes: 16,
                ..
            }
        ),
        "{e}"
    );
    // Template parameters are no structs.
    let e = resolve_in("templ", None).unwrap_err();
    assert!(
        matches!(e, ArgumentError::UnsupportedType { index: 0, .. }),
        "{e}"
    );
}

#[test]
fn arguments_are_checked_against_the_parameters_without_a_gpu() {
    let declared = resolve_in("take", None).unwrap();
    let typed = resolve_in(
        "take",
        Some(&[
            float4(),
            ArgType::Struct(StructType::of::<Params>()),
            ArgType::MutPtr,
        ]),
    )
    .unwrap();
    let p = Params {
        scale: 2.0,
        n: 3,
        shift: Float2::new(0.5, 0.25),
    };
    let swapped = Swapped {
        n: 1,
        scale: 1.0,
        shift: Float2::new(0.0, 0.0),
    };
    let small = Small {
        scale: 1.0,
        n: 1,
        pad: 0.0,
    };
    let mut y = vec![0f32; 32];
    let w = Float4::new(1.0, 2.0, 3.0, 4.0);
    {
        let args = [Arg::from(w), Arg::by_value(&p), Arg::host_out(&mut y)];
        typed.check("take", &args, true).unwrap();
        declared.check("take", &args, true).unwrap();
        // The struct's bytes are passed as they are.
        // SAFETY: a by-value argument's param points to the borrowed Params.
        assert_eq!(unsafe { *(args[1].param() as *const Params) }, p);
        let e = typed.check("take", &args, false).unwrap_err();
        assert!(
            matches!(&e, ArgumentError::HostArgument { index: 2, parameter, .. } if &**parameter == "float *y"),
            "{e}"
        );
    }
    // Any 16-byte value fits the declared struct; only a Params fits the one prepared with it.
    declared
        .check(
            "take",
            &[Arg::from(w), Arg::by_value(&swapped), Arg::host_in(&y)],
            true,
        )
        .unwrap();
    type Case<'a> = (Vec<Arg<'a>>, fn(&ArgumentError) -> bool);
    let cases: Vec<Case<'_>> = vec![
        (
            vec![Arg::from(Int4::splat(1)), Arg::by_value(&p), Arg::host_in(&y)],
            |e| {
                matches!(e, ArgumentError::ArgDiffers { index: 0, parameter, expected, given, hint: ArgHint::None, .. }
                if &**parameter == "float4 w" && expected == "`float4` (Vector)" && given == "an Arg::vector of `int4`")
            },
        ),
        (
            vec![Arg::by_value(&w), Arg::by_value(&p), Arg::host_in(&y)],
            |e| {
                matches!(
                    e,
                    ArgumentError::ArgDiffers {
                        index: 0,
                        hint: ArgHint::VectorAsStruct,
                        ..
                    }
                )
            },
        ),
        (
            vec![Arg::from(w), Arg::by_value(&swapped), Arg::host_in(&y)],
            |e| {
                matches!(
                    e,
                    ArgumentError::ArgDiffers {
                        index: 1,
                        hint: ArgHint::OtherRustType,
                        ..
                    }
                )
            },
        ),
        (vec![Arg::from(w), Arg::by_value(&small), Arg::host_in(&y)], |e| {
            matches!(e, ArgumentError::ArgDiffers { index: 1, given, hint: ArgHint::None, .. }
                if given == "an Arg::by_value of `gpu_runtime::launch::dynamic::tests::Small` (12 bytes)")
        }),
        (vec![Arg::from(w), Arg::F32(1.0), Arg::host_in(&y)], |e| {
            matches!(e, ArgumentError::ArgDiffers { index: 1, parameter, given, expected, .. }
                if &**parameter == "Params p" && given == "an f32" && expected.starts_with("the 16-byte struct"))
        }),
        (vec![Arg::from(w), Arg::by_value(&p)], |e| {
            matches!(
                e,
                ArgumentError::ArgCount {
                    given: 2,
                    prepared: 3,
                    ..
                }
            )
        }),
    ];
    for (args, is_expected) in cases {
        let e = typed.check("take", &args, true).unwrap_err();
        assert!(is_expected(&e), "{e}");
    }
    let e = declared
        .check(
            "take",
            &[Arg::from(w), Arg::by_value(&small), Arg::host_in(&y)],
            true,
        )
        .unwrap_err();
    assert!(
        matches!(&e, ArgumentError::ArgDiffers { index: 1, expected, .. } if expected == "a 16-byte value"),
        "{e}"
    );
}

#[test]
fn a_vector_parameter_type_is_named_by_its_rust_type() {
    assert_eq!(ArgType::vector::<Float4>(), float4());
    assert_eq!(ArgType::vector::<Int4>().to_string(), "`int4` (Vector)");
    // Usable where a constant is needed, as the list of a kernel's parameters often is.
    const TYPES: [ArgType; 2] = [ArgType::MutPtr, ArgType::vector::<Float2>()];
    assert_eq!(
        TYPES[1],
        ArgType::Vector(VectorType::from_c_name("float2").unwrap())
    );
}
