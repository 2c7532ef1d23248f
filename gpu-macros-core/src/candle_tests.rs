//! Hugging Face candle's kernel files (`tests/realworld/candle/`, copied unchanged), declared
//! with `file = …` alone: the kernels their macros stamp out (`UNARY_OP(float, uexp_f32, …)`)
//! are found and every parameter checked, as for a kernel written out.

use proc_macro2::TokenStream;
use quote::quote;

use crate::try_kernel;

fn candle(file: &str) -> String {
    format!("{}/../tests/realworld/candle/{file}", env!("CARGO_MANIFEST_DIR"))
}

/// Expands `#[kernel(file = <candle file>, extra…, check = false)]` on `item`.
fn expand_candle(file: &str, extra: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let path = candle(file);
    try_kernel(quote!(file = #path, check = false, #extra), item)
}

fn errors(r: syn::Result<TokenStream>) -> Vec<(String, String)> {
    match r {
        Ok(_) => Vec::new(),
        Err(e) => e
            .into_iter()
            .map(|e| (e.to_string(), e.span().source_text().unwrap_or_default()))
            .collect(),
    }
}

#[test]
fn kernels_stamped_out_by_macros_are_found_and_checked_in_every_file() {
    let cases: Vec<(&str, TokenStream)> = vec![
        (
            "unary.cu",
            quote!(
                mod unary {
                    fn uexp_f32(numel: usize, num_dims: usize, info: &[usize], inp: &[f32], out: &mut [f32]);
                    fn usilu_f64(numel: usize, num_dims: usize, info: &[usize], inp: &[f64], out: &mut [f64]);
                    fn upowf_f32(
                        numel: usize,
                        num_dims: usize,
                        info: &[usize],
                        param: f32,
                        inp: &[f32],
                        out: &mut [f32],
                    );
                    fn ugelu_f16(
                        numel: usize,
                        num_dims: usize,
                        info: &[usize],
                        inp: &[half::f16],
                        out: &mut [half::f16],
                    );
                    fn ucopy_bf16(
                        numel: usize,
                        num_dims: usize,
                        info: &[usize],
                        inp: &[half::bf16],
                        out: &mut [half::bf16],
                    );
                    fn ucopy_u8(numel: usize, num_dims: usize, info: &[usize], inp: &[u8], out: &mut [u8]);
                    fn ucopy_i64(numel: usize, num_dims: usize, info: &[usize], inp: &[i64], out: &mut [i64]);
                }
            ),
        ),
        (
            "binary.cu",
            quote!(
                mod binary {
                    fn badd_f32(
                        numel: usize,
                        num_dims: usize,
                        dims_and_strides: &[usize],
                        lhs: &[f32],
                        rhs: &[f32],
                        out: &mut [f32],
                    );
                    fn lt_f64(
                        numel: usize,
                        num_dims: usize,
                        dims_and_strides: &[usize],
                        lhs: &[f64],
                        rhs: &[f64],
                        out: &mut [u8],
                    );
                    fn bmaximum_u32(
                        numel: usize,
                        num_dims: usize,
                        dims_and_strides: &[usize],
                        lhs: &[u32],
                        rhs: &[u32],
                        out: &mut [u32],
                    );
                }
            ),
        ),
        (
            "cast.cu",
            quote!(
                mod cast {
                    fn cast_f32_f64(
                        numel: usize,
                        num_dims: usize,
                        info: &[usize],
                        inp: &[f32],
                        out: &mut [f64],
                    );
                    fn cast_u8_u32(
                        numel: usize,
                        num_dims: usize,
                        info: &[usize],
                        inp: &[u8],
                        out: &mut [u32],
                    );
                    fn cast_bf16_f32(
                        numel: usize,
                        num_dims: usize,
                        info: &[usize],
                        inp: &[half::bf16],
                        out: &mut [f32],
                    );
                }
            ),
        ),
        (
            "affine.cu",
            quote!(
                mod affine {
                    fn affine_f32(
                        numel: usize,
                        num_dims: usize,
                        info: &[usize],
                        inp: &[f32],
                        out: &mut [f32],
                        mul: f32,
                        add: f32,
                    );
                    fn affine_i64(
                        numel: usize,
                        num_dims: usize,
                        info: &[usize],
                        inp: &[i64],
                        out: &mut [i64],
                        mul: i64,
                        add: i64,
                    );
                }
            ),
        ),
        (
            "fill.cu",
            quote!(
                mod fill {
                    fn fill_f32(buf: &mut [f32], value: f32, numel: usize);
                    fn copy2d_f64(src: &[f64], dst: &mut [f64], d1: u32, d2: u32, src_s: u32, dst_s: u32);
                    fn const_set_u8(numel: usize, num_dims: usize, info: &[usize], inp: u8, out: &mut [u8]);
                }
            ),
        ),
        (
            "indexing.cu",
            quote!(
                mod indexing {
                    fn is_i64_f32(
                        numel: usize,
                        num_dims: usize,
                        info: &[usize],
                        ids: &[i64],
                        inp: &[f32],
                        out: &mut [f32],
                        left_size: usize,
                        src_dim_size: usize,
                        ids_dim_size: usize,
                        right_size: usize,
                    );
                    fn gather_u32_f32(
                        numel: usize,
                        ids: &[u32],
                        inp: &[f32],
                        out: &mut [f32],
                        left_size: usize,
                        src_dim_size: usize,
                        ids_dim_size: usize,
                        right_size: usize,
                    );
                    fn sa_i64_f32(
                        ids: &[i64],
                        inp: &[f32],
                        out: &mut [f32],
                        left_size: usize,
                        src_dim_size: usize,
                        dst_dim_size: usize,
                        right_size: usize,
                    );
                }
            ),
        ),
        (
            "reduce.cu",
            quote!(
                mod reduce {
                    fn sum_f32(
                        numel: usize,
                        num_dims: usize,
                        num_sum_dims: usize,
                        info: &[usize],
                        inp: &[f32],
                        out: &mut [f32],
                    );
                    fn softmax_f32(src: &[f32], dst: &mut [f32], n_cols: i32);
                    fn layernorm_f64(
                        src: &[f64],
                        dst: &mut [f64],
                        alpha: &[f64],
                        beta: &[f64],
                        n_cols: i32,
                        block_size: i32,
                        eps: f32,
                    );
                    fn rope_thd_f32(
                        src: &[f32],
                        cos: &[f32],
                        sin: &[f32],
                        dst: &mut [f32],
                        b: u32,
                        t: u32,
                        h: u32,
                        d: u32,
                        stride_b: u32,
                    );
                    fn fast_argmax_u8(
                        src_numel: usize,
                        el_to_sum_per_block: usize,
                        num_dims: usize,
                        info: &[usize],
                        src: &[u8],
                        dst: &mut [u32],
                    );
                }
            ),
        ),
        (
            "sort.cu",
            quote!(
                mod sort {
                    fn asort_asc_f32(x: &[f32], dst: &mut [u32], ncols: i32, ncols_pad: i32);
                }
            ),
        ),
        (
            "ternary.cu",
            quote!(
                mod ternary {
                    fn where_u8_f32(
                        numel: usize,
                        num_dims: usize,
                        info: &[usize],
                        ids: &[u8],
                        t: &[f32],
                        f: &[f32],
                        out: &mut [f32],
                    );
                }
            ),
        ),
        (
            "conv.cu",
            quote!(
                mod conv {
                    fn conv1d_f32(
                        src_numel: usize,
                        l_out: usize,
                        stride: usize,
                        padding: usize,
                        dilation: usize,
                        info: &[usize],
                        src: &[f32],
                        kernel: &[f32],
                        dst: &mut [f32],
                    );
                    fn im2col_f32(
                        dst_numel: usize,
                        h_out: usize,
                        w_out: usize,
                        h_k: usize,
                        w_k: usize,
                        stride: usize,
                        padding: usize,
                        dilation: usize,
                        info: &[usize],
                        src: &[f32],
                        dst: &mut [f32],
                    );
                    fn max_pool2d_f16(
                        src_numel: usize,
                        w_k: usize,
                        h_k: usize,
                        w_stride: usize,
                        h_stride: usize,
                        info: &[usize],
                        src: &[half::f16],
                        dst: &mut [half::f16],
                    );
                }
            ),
        ),
    ];
    for (file, item) in cases {
        if let Err(e) = expand_candle(file, quote!(), item) {
            panic!("{file}: {e}");
        }
    }
}

#[test]
fn a_mismatch_in_a_macro_kernel_quotes_the_expanded_c_parameter() {
    let all = errors(expand_candle(
        "unary.cu",
        quote!(),
        // Parsed from text, so that the spans have source text to compare.
        "fn uexp_f32(numel: usize, num_dims: u64, info: &[usize], inp: &[f64], out: &mut [f32]);"
            .parse()
            .expect("tokens"),
    ));
    let msgs: Vec<&str> = all.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(
        msgs[0].starts_with("expected `usize` for C `const size_t num_dims`, found `u64`"),
        "{}",
        msgs[0]
    );
    // The macro's parameter `TYPENAME` as the compiler sees it: `float`.
    assert!(
        msgs[1].starts_with("expected `&[f32]` for C `const float *inp`, found `&[f64]`"),
        "{}",
        msgs[1]
    );
    assert_eq!((all[0].1.as_str(), all[1].1.as_str()), ("u64", "f64"));
}

#[test]
fn a_missing_kernel_gets_a_hint_that_fits() {
    // A typo: the close names.
    let all = errors(expand_candle(
        "unary.cu",
        quote!(),
        quote!(
            fn uexp_f3(numel: usize);
        ),
    ));
    let msg = &all[0].0;
    assert!(msg.contains("it declares 123 kernels: `ucopy_bf16`"), "{msg}");
    assert!(msg.contains("did you mean `uexp_f32`?"), "{msg}");
    assert!(
        msg.contains("the macros `UNARY_OP`, `UNARY_OP1` declare kernels, and were read expanded"),
        "{msg}"
    );
    assert!(!msg.contains("name = \\\"c_name\\\""), "{msg}");
    // Compiled for an architecture that leaves it out: where, and why.
    let all = errors(expand_candle(
        "unary.cu",
        quote!(options = ["-arch=sm_75"]),
        quote!(
            fn ucopy_bf16(numel: usize);
        ),
    ));
    let msg = &all[0].0;
    assert!(
        msg.contains(
            "`ucopy_bf16` appears at line 101, in a part of the source the preprocessor leaves out: \
             the conditional at line 100 is false when compiling with `__CUDA_ARCH__` 750"
        ),
        "{msg}"
    );
}

/// The names after `.entry` in PTX: the kernels NVRTC compiled.
fn ptx_entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| l.split(".entry ").nth(1))
        .map(|rest| rest.split(['(', ' ']).next().unwrap_or("").to_owned())
        .collect()
}

/// The ground truth: for every file, the kernels the declaration reader finds (with the file's
/// headers, for `compute_90`) are exactly those NVRTC compiles for `compute_90`, the `.entry`
/// list of its PTX. Needs NVRTC (`scripts/nvrtc-env.sh`), as CI has it.
#[test]
fn the_kernels_read_are_the_ones_nvrtc_compiles() {
    let lib = crate::nvrtc::get().unwrap_or_else(|e| panic!("this test needs NVRTC: {e}"));
    let dir = candle("");
    let options = vec!["--gpu-architecture=compute_90".to_owned(), format!("-I{dir}")];
    let mut compared = 0;
    for file in [
        "unary.cu",
        "binary.cu",
        "cast.cu",
        "affine.cu",
        "fill.cu",
        "indexing.cu",
        "reduce.cu",
        "sort.cu",
        "ternary.cu",
        "conv.cu",
    ] {
        let source = std::fs::read_to_string(candle(file)).expect("a candle file");
        let options_lits: Vec<syn::LitStr> = options
            .iter()
            .map(|o| syn::LitStr::new(o, proc_macro2::Span::call_site()))
            .collect();
        let mut read: Vec<String> = crate::read_declarations(&source, &options_lits, &[])
            .find_kernels()
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .into_iter()
            .map(|k| k.name)
            .collect();
        let out = lib
            .compile(&source, file, &[], &options, crate::nvrtc::Want::Ptx, true, &[])
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(out.ok, "{file}: {}", out.log);
        let mut compiled = ptx_entries(&String::from_utf8_lossy(&out.image));
        read.sort();
        compiled.sort();
        assert!(compiled.len() >= 10, "{file}: {compiled:?}");
        assert_eq!(read, compiled, "{file}");
        compared += 1;
    }
    assert!(compared >= 9, "{compared}");
}
