//! The kernels of expressions, scans and random fills, compiled with NVRTC for sm_90 on the
//! host (no GPU), for every element type they apply to.

use gpu_cuda_source::Scalar;

use super::compiles;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::{kernel, BinOp, Node, Store};
use crate::gpuarray::kernels::elementwise::Variant;
use crate::gpuarray::random::philox::{philox4x32_10, random_source, Distribution};
use crate::gpuarray::scan::ops::test_sources;

fn bin(op: BinOp, l: Node, r: Node) -> Node {
    Node::Bin(op, Box::new(l), Box::new(r))
}

/// `-(x0 + x1 * s0) / x2 - s1`, and the single operations.
fn shapes() -> Vec<Node> {
    let mut v: Vec<Node> = [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div]
        .into_iter()
        .flat_map(|op| {
            [
                bin(op, Node::Array, Node::Array),
                bin(op, Node::Scalar, Node::Array),
            ]
        })
        .collect();
    v.push(Node::Neg(Box::new(Node::Array)));
    let inner = bin(
        BinOp::Add,
        Node::Array,
        bin(BinOp::Mul, Node::Array, Node::Scalar),
    );
    let neg = Node::Neg(Box::new(inner));
    v.push(bin(BinOp::Sub, bin(BinOp::Div, neg, Node::Array), Node::Scalar));
    v
}

fn expr_kernels<T: Element>() {
    let name = std::any::type_name::<T>();
    for node in shapes() {
        for store in [
            Store::Assign,
            Store::Compound(BinOp::Add),
            Store::Compound(BinOp::Div),
        ] {
            let k = kernel::<T>(&node, store).unwrap();
            compiles(
                &format!("{name} {node:?} {store:?}"),
                &k.source(Variant::Contiguous),
            );
        }
    }
    // A scalar only, stored into an array.
    let k = kernel::<T>(&Node::Scalar, Store::Compound(BinOp::Mul)).unwrap();
    compiles(name, &k.source(Variant::Contiguous));
    let k = kernel::<T>(&shapes()[9], Store::Assign).unwrap();
    compiles(name, &k.source(Variant::Strided(3)));
}

#[test]
fn expression_kernels_compile() {
    expr_kernels::<i8>();
    expr_kernels::<u8>();
    expr_kernels::<i16>();
    expr_kernels::<u16>();
    expr_kernels::<i32>();
    expr_kernels::<u32>();
    expr_kernels::<i64>();
    expr_kernels::<u64>();
    expr_kernels::<f32>();
    expr_kernels::<f64>();
}

#[test]
fn expressions_share_kernels_by_structure() {
    let node = bin(BinOp::Mul, Node::Array, Node::Scalar);
    let a = kernel::<f32>(&node, Store::Assign).unwrap();
    let b = kernel::<f32>(&node.clone(), Store::Assign).unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    let c = kernel::<f64>(&node, Store::Assign).unwrap();
    assert!(!std::sync::Arc::ptr_eq(&a, &c));
    let src = a.source(Variant::Contiguous);
    assert!(src.contains("out = ((float)(x0 * s0))"), "{src}");
}

#[test]
fn scan_kernels_compile() {
    fn of<T: Element>() {
        for s in test_sources::<T>() {
            compiles(std::any::type_name::<T>(), &s);
        }
    }
    for_each_number!(of);
    of::<half::f16>();
    of::<half::bf16>();
    of::<crate::types::Complex32>();
    of::<crate::types::Complex64>();
}

#[test]
fn random_kernels_compile() {
    compiles("u32", &random_source::<u32>(Distribution::Uniform).unwrap());
    for d in [Distribution::Uniform, Distribution::Normal] {
        compiles("f32", &random_source::<f32>(d).unwrap());
        compiles("f64", &random_source::<f64>(d).unwrap());
    }
    assert!(random_source::<u32>(Distribution::Normal).is_err());
    assert!(random_source::<i8>(Distribution::Uniform).is_err());
    let _ = Scalar::F32;
}

/// The known-answer vectors of Random123 (`kat_vectors`, philox4x32 with 10 rounds).
#[test]
fn philox_matches_random123() {
    assert_eq!(
        philox4x32_10([0; 4], [0; 2]),
        [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    );
    assert_eq!(
        philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
        [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
    );
    assert_eq!(
        philox4x32_10(
            [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
            [0xa4093822, 0x299f31d0]
        ),
        [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
    );
}

/// The launch prepares each kernel from its C declaration: every one must be readable.
#[test]
fn declarations_are_readable() {
    let sources = test_sources::<u16>();
    gpu_cuda_source::find_kernel(&sources[0], "gpu_scan_lookback").unwrap();
    gpu_cuda_source::find_kernel(&sources[1], "gpu_scan_lanes").unwrap();
    gpu_cuda_source::find_kernel(&sources[2], "gpu_scan_lanes").unwrap();
    for (src, name) in [
        (
            random_source::<u32>(Distribution::Uniform).unwrap(),
            "gpu_philox_uniform_u32",
        ),
        (
            random_source::<f64>(Distribution::Normal).unwrap(),
            "gpu_philox_normal_f64",
        ),
    ] {
        gpu_cuda_source::find_kernel(&src, name).unwrap_or_else(|e| panic!("{e}\n{src}"));
    }
    let k = kernel::<f32>(&shapes()[9], Store::Compound(BinOp::Sub)).unwrap();
    gpu_cuda_source::find_kernel(&k.source(Variant::Contiguous), "gpu_expr_contig").unwrap();
}
