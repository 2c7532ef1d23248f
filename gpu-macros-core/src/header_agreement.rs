//! The built-in headers (`gpu_cuda_source::BUILTIN_HEADERS`) agree with libcu++ and the CUDA
//! headers: a source may include a built-in `<stdint.h>` and libcu++'s `<cuda/std/cstdint>`, or
//! `<cuda_fp16.h>` and `<cmath>`, in either order, together, and compile without an error or a
//! warning, as it does under nvcc. Compiled with real NVRTC and the CUDA headers the build check
//! finds (`Nvrtc::cuda_headers`: a toolkit, NVRTC's bundled headers, the `nvidia-cuda-runtime`
//! and `nvidia-cuda-cccl` wheels); CI has them through `scripts/nvrtc-env.sh`. Without them the
//! tests say so and pass: there is nothing to agree with.
//!
//! A header is checked against a group of others at once (before all of them, then after
//! them), and only a failing group is taken apart into pairs, which name the failure: each
//! compile parses the headers again, and the pairs one by one were most of the test
//! command's NVRTC time. A clash between two headers that a third header of the group hides
//! would go unseen; the headers of a group are NVIDIA's, written to be included together.

use crate::nvrtc::{self, Want};

/// The C and C++ standard headers built in, C names and C++ names.
const STANDARD: &[&str] = &[
    "stdint.h",
    "cstdint",
    "limits.h",
    "climits",
    "stddef.h",
    "cstddef",
    "float.h",
    "cfloat",
    "math.h",
    "cmath",
    "stdio.h",
    "cstdio",
    "stdlib.h",
    "cstdlib",
    "assert.h",
    "cassert",
    "string.h",
    "cstring",
    "stdbool.h",
    "cstdbool",
    "time.h",
    "ctime",
];

/// The C++ names only: each includes its C header first, so a pair with it covers the C
/// header's text too.
const STANDARD_CPP: &[&str] = &[
    "cstdint", "climits", "cstddef", "cfloat", "cmath", "cstdio", "cstdlib", "cassert", "cstring",
    "cstdbool", "ctime",
];

/// libcu++ headers that declare what the standard headers declare, and the CUDA headers of
/// their own types; each compiles in a few hundredths of a second.
const LIGHT: &[&str] = &[
    "cuda/std/cstdint",
    "cuda/std/climits",
    "cuda/std/cstddef",
    "cuda/std/cfloat",
    "cuda/std/cassert",
    "cuda/std/cstdlib",
    "cuda/std/cstring",
    "cuda/std/ctime",
    "cuda_fp16.h",
    "cuda_bf16.h",
];

/// libcu++ headers that pull in its type traits and limits: about a second each.
const HEAVY: &[&str] = &[
    "cuda/std/limits",
    "cuda/std/type_traits",
    "cuda/std/cmath",
    "cuda/std/utility",
];

/// More of libcu++ and the CUDA headers, checked against every built-in header at once.
const MORE: &[&str] = &[
    "cuda/std/complex",
    "cuda/std/array",
    "cuda/std/atomic",
    "cuda/std/bit",
    "cuda/std/functional",
    "cuda/std/tuple",
    "cuda/std/span",
    "cuda/std/numeric",
    "cuda/std/algorithm",
    "cuda/std/optional",
    "cuda/std/variant",
    "cuda/std/chrono",
    "cuda/std/string_view",
    "cuda/std/initializer_list",
    "cuda_fp8.h",
    "cooperative_groups.h",
    "cooperative_groups/reduce.h",
];

/// NVRTC and its CUDA headers' `-I` options, or `None` (with the reason printed) when either
/// is missing.
fn setup() -> Option<(&'static nvrtc::Nvrtc, Vec<String>)> {
    let lib = match nvrtc::get() {
        Ok(lib) => lib,
        Err(e) => {
            eprintln!("note: NVRTC not found, built-in headers not checked against libcu++: {e}");
            return None;
        }
    };
    let headers = lib.cuda_headers();
    if headers.options.is_empty() {
        eprintln!("note: no CUDA headers found, built-in headers not checked against libcu++");
        return None;
    }
    // The CUDA headers' `-I` options are added by `compile`, as for every build check.
    Some((lib, vec!["--gpu-architecture=compute_90".to_owned()]))
}

/// Compiles each source (on as many threads as the machine has) and returns the failures: the
/// source and NVRTC's log, for every compile that failed or warned.
fn failures(
    lib: &'static nvrtc::Nvrtc,
    options: &[String],
    sources: Vec<String>,
    prelude: bool,
) -> Vec<String> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(8);
    let sources = std::sync::Mutex::new(sources);
    let failed = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let Some(src) = sources.lock().unwrap().pop() else {
                    return;
                };
                let out = lib
                    .compile(&src, "pair.cu", &[], options, Want::Check, prelude, &[])
                    .unwrap_or_else(|e| panic!("NVRTC failed: {e}"));
                if !out.ok || !out.log.trim().is_empty() {
                    failed.lock().unwrap().push(format!("--- {src}{}", out.log));
                }
            });
        }
    });
    failed.into_inner().unwrap()
}

const KERNEL: &str = "__global__ void k(int *x) { x[0] = 1; }\n";

/// `#include <a>` then `#include <b>`, and the other way round, for every pair.
fn both_orders(a_list: &[&str], b_list: &[&str]) -> Vec<String> {
    let mut sources = Vec::new();
    for a in a_list {
        for b in b_list {
            sources.push(format!("#include <{a}>\n#include <{b}>\n{KERNEL}"));
            sources.push(format!("#include <{b}>\n#include <{a}>\n{KERNEL}"));
        }
    }
    sources
}

/// Each `a` before every header of `b_list` at once, and after them: two compiles an `a`
/// instead of two a pair (the pairs took most of the test command's NVRTC time). Where one of
/// the two fails, every pair of that `a` is compiled as well, in both orders, so that the
/// failure names the pair; the failures are the pairs' (or the grouped source's, when no pair
/// alone fails).
fn grouped_then_pairs(
    lib: &'static nvrtc::Nvrtc,
    options: &[String],
    a_list: &[&str],
    b_list: &[&str],
    prelude: bool,
) -> (usize, Vec<String>) {
    let group: String = b_list.iter().map(|b| format!("#include <{b}>\n")).collect();
    let mut sources = Vec::new();
    for a in a_list {
        sources.push(format!("#include <{a}>\n{group}{KERNEL}"));
        sources.push(format!("{group}#include <{a}>\n{KERNEL}"));
    }
    let n = sources.len();
    // The failed grouped sources by their `a`, each `a`'s pairs compiled once.
    let mut by_a: Vec<(&str, Vec<String>)> = Vec::new();
    for grouped in failures(lib, options, sources, prelude) {
        let a = a_list
            .iter()
            .find(|a| {
                grouped.starts_with(&format!("--- #include <{a}>\n"))
                    || grouped.contains(&format!("\n#include <{a}>\n{KERNEL}"))
            })
            .copied()
            .unwrap_or_default();
        match by_a.iter_mut().find(|(x, _)| *x == a) {
            Some((_, g)) => g.push(grouped),
            None => by_a.push((a, vec![grouped])),
        }
    }
    let mut failed = Vec::new();
    for (a, grouped) in by_a {
        let pairs = if a.is_empty() {
            Vec::new()
        } else {
            failures(lib, options, both_orders(&[a], b_list), prelude)
        };
        if pairs.is_empty() {
            failed.extend(grouped);
        } else {
            failed.extend(pairs);
        }
    }
    (n, failed)
}

#[test]
fn every_standard_header_agrees_with_libcudacxx_and_the_cuda_headers_in_both_orders() {
    let Some((lib, options)) = setup() else {
        return;
    };
    // Without the prelude: the headers alone.
    let (n_light, mut failed) = grouped_then_pairs(lib, &options, STANDARD, LIGHT, false);
    let (n_heavy, heavy) = grouped_then_pairs(lib, &options, STANDARD_CPP, HEAVY, false);
    failed.extend(heavy);
    let n = n_light + n_heavy;
    assert!(
        failed.is_empty(),
        "{} of {n} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn every_built_in_header_agrees_with_every_cuda_header_together() {
    let Some((lib, options)) = setup() else {
        return;
    };
    // Every built-in header (the stand-ins for host headers and gpu-runtime's own too) in one
    // source, before and after the CUDA headers, with the prelude, which every compile has
    // (the pairs above are without it). Each pair of these would take minutes.
    let all: String = gpu_cuda_source::BUILTIN_HEADERS
        .iter()
        .map(|(name, _)| *name)
        .filter(|n| *n != gpu_cuda_source::NVRTC_PRELUDE_NAME && *n != "cuda/std/cmath")
        .map(|n| format!("#include <{n}>\n"))
        .collect();
    let cuda: Vec<&str> = LIGHT.iter().chain(HEAVY).chain(MORE).copied().collect();
    let per_header = |b: &str| {
        vec![
            format!("{all}#include <{b}>\n{KERNEL}"),
            format!("#include <{b}>\n{all}{KERNEL}"),
        ]
    };
    // Every CUDA header at once, after the built-in ones and before them: two compiles
    // instead of two a CUDA header (most of this test's time was parsing the built-in headers
    // again for each). Where one fails, each CUDA header alone as well, to name it.
    let group: String = cuda.iter().map(|b| format!("#include <{b}>\n")).collect();
    let grouped = vec![format!("{all}{group}{KERNEL}"), format!("{group}{all}{KERNEL}")];
    let n = grouped.len();
    let mut failed = failures(lib, &options, grouped, true);
    if !failed.is_empty() {
        let alone = failures(
            lib,
            &options,
            cuda.iter().flat_map(|b| per_header(b)).collect(),
            true,
        );
        if !alone.is_empty() {
            failed = alone;
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {n} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn a_disagreeing_header_is_caught() {
    // The check itself: a header declaring `int64_t` as the built-in one did before (`long`)
    // fails against libcu++'s `long long`, in both orders.
    let Some((lib, options)) = setup() else {
        return;
    };
    let sources = vec![
        format!("typedef long int64_t;\n#include <cuda/std/cstdint>\n{KERNEL}"),
        format!("#include <cuda/std/cstdint>\ntypedef long int64_t;\n{KERNEL}"),
    ];
    let failed = failures(lib, &options, sources, false);
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert!(failed.iter().all(|f| f.contains("int64_t")), "{failed:?}");
}

#[test]
fn a_grouped_failure_is_named_by_its_pairs() {
    // The grouped check falls back to the pairs of the failing header, each in both orders:
    // a header NVRTC cannot open fails every pair it is in, and only those.
    let Some((lib, options)) = setup() else {
        return;
    };
    let (n, failed) = grouped_then_pairs(
        lib,
        &options,
        &["stdint.h", "gpu_no_such_header.h"],
        &LIGHT[..2],
        false,
    );
    assert_eq!(n, 4);
    assert_eq!(failed.len(), 4, "{failed:?}");
    assert!(
        failed
            .iter()
            .all(|f| f.contains("gpu_no_such_header.h") && !f.contains("stdint.h>")),
        "{failed:?}"
    );
}
