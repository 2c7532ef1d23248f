//! A coverage-free, signature-guided mutation fuzzer for the CUDA C declaration parser.
//!
//! Stable Rust has no libFuzzer, so this is self-written: it seeds itself with every CUDA
//! source in the suite's kernels and ui-tests (the `r#"..."#` strings) plus `corpus/`,
//! mutates them (byte edits, token insertions from a CUDA dictionary, splices, duplications,
//! truncations), and runs every public entry point of `gpu-cuda-source` on each input, checking:
//!
//! - no panic (caught with `catch_unwind`; the input is saved to `crashes/`);
//! - no hang and no super-linear time: a watchdog aborts the process, after saving the input,
//!   when one input takes more than a second;
//! - every rejection is a clear message: non-empty, one line, no Rust `Debug` noise, and a line
//!   number within the source.
//!
//! Without coverage feedback it keeps an input in the corpus when its *outcome signature* is new
//! (which error template, how many kernels and parameters of which type shapes), a cheap proxy
//! that steers mutations towards inputs that reach different parser paths.
//!
//! Usage: `cargo run --release -- [--seconds N] [--seed S] [--save-corpus]`.

use std::collections::HashSet;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const DICT: &[&str] = &[
    "__global__",
    "__device__",
    "__constant__",
    "__shared__",
    "extern",
    "extern \"C\"",
    "extern \"C\" {",
    "template <typename T>",
    "template<",
    "typedef",
    "using",
    "struct",
    "class",
    "namespace n {",
    "const",
    "volatile",
    "unsigned",
    "signed",
    "long",
    "short",
    "char",
    "int",
    "float",
    "double",
    "bool",
    "void",
    "size_t",
    "ptrdiff_t",
    "__restrict__",
    "__half",
    "half",
    "float4",
    "int2",
    "T",
    "*",
    "**",
    "&",
    "&&",
    "(",
    ")",
    "((",
    "))",
    "{",
    "}",
    "[",
    "]",
    "[16]",
    "<",
    ">",
    "<<",
    ">>",
    ",",
    ";",
    ":",
    "::",
    "=",
    "...",
    "#",
    "#define X",
    "\n#include <x>\n",
    "//",
    "/*",
    "*/",
    "\"",
    "'",
    "\\",
    "\\\n",
    "R\"(",
    ")\"",
    "\n",
    " ",
    "\t",
    "0",
    "1u",
    "0x1p3f",
    "__launch_bounds__(256)",
    "__launch_bounds__(",
    "__forceinline__",
    "static",
    "inline",
    "auto",
    "decltype(",
    "operator()",
    "alignas(16)",
    "[[nodiscard]]",
    "é",
    "\u{0}",
    "\u{feff}",
    "ß",
    "🦀",
    "void (*f)(int)",
    // The preprocessor's.
    "\n#define K(t, n) __global__ void n(t *x)\n",
    "\n#define A(x, ...) x(__VA_ARGS__)\n",
    "\n#define P(a, b) a ## b\n",
    "\n#define S(x) #x\n",
    "\n#if ",
    "\n#ifdef ",
    "\n#ifndef ",
    "\n#elif ",
    "\n#else\n",
    "\n#endif\n",
    "\n#undef ",
    "\n#include \"h.h\"\n",
    "\n#include \"self.h\"\n",
    "defined(",
    "__CUDA_ARCH__ >= 800",
    "__VA_ARGS__",
    "__VA_OPT__(",
    "K(float, k)",
    "A(",
    "P(",
    "S(",
    "##",
];

/// Headers for the preprocessor's `#include`s: one of macros, one that includes itself.
fn header(name: &str, _quoted: bool, _from: Option<&str>) -> Option<gpu_cuda_source::Header> {
    let text = match name {
        "h.h" => "#pragma once\n#define K(t, n) extern \"C\" __global__ void n(const t *x, t *y)\n",
        "self.h" => "#include \"self.h\"\n#include \"h.h\"\nK(int, from_header)\n",
        _ => return None,
    };
    Some(gpu_cuda_source::Header {
        id: name.to_owned(),
        text: text.to_owned(),
    })
}

/// xorshift64*: small, seedable, good enough for mutations.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn raw_strings(text: &str, out: &mut Vec<Vec<u8>>) {
    let mut rest = text;
    while let Some(start) = rest.find("r#\"") {
        let body = &rest[start + 3..];
        match body.find("\"#") {
            Some(end) => {
                out.push(body.as_bytes()[..end].to_vec());
                rest = &body[end + 2..];
            }
            None => break,
        }
    }
}

fn seeds(root: &Path, corpus: &Path) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut files = vec![root.join("tests/common/mod.rs"), root.join("examples/saxpy.rs")];
    for dir in ["tests/ui-tests/fail", "tests/ui-tests/pass"] {
        if let Ok(rd) = std::fs::read_dir(root.join(dir)) {
            files.extend(
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "rs")),
            );
        }
    }
    for f in files {
        if let Ok(t) = std::fs::read_to_string(&f) {
            raw_strings(&t, &mut out);
        }
    }
    if let Ok(rd) = std::fs::read_dir(corpus) {
        for e in rd.flatten() {
            if let Ok(b) = std::fs::read(e.path()) {
                out.push(b);
            }
        }
    }
    if out.is_empty() {
        out.push(b"__global__ void k(float *x, int n) {}".to_vec());
    }
    out
}

fn mutate(rng: &mut Rng, input: &[u8], pool: &[Vec<u8>]) -> Vec<u8> {
    let mut v = input.to_vec();
    let rounds = 1 + rng.below(6);
    for _ in 0..rounds {
        let len = v.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                v[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                v[i] = b"(){}[]<>*&,;:\"'/\\#\n \0"[rng.below(21)];
            }
            2 | 3 => {
                let tok = DICT[rng.below(DICT.len())].as_bytes();
                let i = rng.below(len + 1);
                v.splice(i..i, tok.iter().copied());
            }
            4 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(64));
                v.drain(i..i + n);
            }
            5 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(256));
                let chunk = v[i..i + n].to_vec();
                let at = rng.below(len + 1);
                v.splice(at..at, chunk);
            }
            6 => {
                let other = &pool[rng.below(pool.len())];
                if !other.is_empty() {
                    let a = rng.below(other.len());
                    let b = a + rng.below(other.len() - a + 1);
                    let at = rng.below(len + 1);
                    v.splice(at..at, other[a..b].iter().copied());
                }
            }
            7 if len > 0 => v.truncate(rng.below(len)),
            _ => {
                // Swap a word for a dictionary token: replaces types and qualifiers in place.
                if len > 0 {
                    let i = rng.below(len);
                    let mut j = i;
                    while j < len && v[j].is_ascii_alphanumeric() {
                        j += 1;
                    }
                    let tok = DICT[rng.below(DICT.len())].as_bytes();
                    v.splice(i..j, tok.iter().copied());
                }
            }
        }
        if v.len() > 64 * 1024 {
            v.truncate(64 * 1024);
        }
    }
    v
}

/// Digits and backticked names vary without reaching new code; drop them from the signature.
fn template(msg: &str) -> String {
    let mut out = String::new();
    let mut in_tick = false;
    for c in msg.chars() {
        if c == '`' {
            in_tick = !in_tick;
            out.push('`');
        } else if !in_tick && !c.is_ascii_digit() {
            out.push(c);
        }
    }
    out
}

/// Checks every property; returns the outcome signature, or a description of a violated property.
fn exercise(src: &str) -> Result<String, String> {
    let lines = src.split('\n').count();
    let check_err = |e: &gpu_cuda_source::DeclError| -> Result<String, String> {
        let msg = e.to_string();
        if msg.trim().is_empty() || msg.contains('\n') || msg.contains("Some(") || msg.contains("None") {
            return Err(format!("unclear message: {msg:?}"));
        }
        let line = match e {
            gpu_cuda_source::DeclError::Syntax { line, .. }
            | gpu_cuda_source::DeclError::UnsupportedParam { line, .. } => Some(*line),
            _ => None,
        };
        if let Some(l) = line {
            if l == 0 || l > lines {
                return Err(format!("line {l} outside the source's {lines} lines: {msg}"));
            }
        }
        Ok(match e {
            gpu_cuda_source::DeclError::NotFound { available, .. } => format!("N{}", available.len().min(3)),
            gpu_cuda_source::DeclError::Ambiguous { .. } => "A".to_string(),
            gpu_cuda_source::DeclError::UnsupportedParam { reason, .. } => format!("U:{}", template(reason)),
            gpu_cuda_source::DeclError::Syntax { message, .. } => format!("S:{}", template(message)),
        })
    };
    let mut sig = String::new();
    match gpu_cuda_source::find_kernels(src) {
        Ok(ks) => {
            sig.push_str(&format!("ok{}:", ks.len().min(4)));
            for k in &ks {
                if k.line == 0 || k.line > lines {
                    return Err(format!("kernel `{}` at line {} of {lines}", k.name, k.line));
                }
                for p in &k.params {
                    sig.push_str(&format!("{:?}", std::mem::discriminant(&p.ty)));
                }
                sig.push(if k.is_template { 't' } else { '-' });
                sig.push(if k.extern_c { 'c' } else { '-' });
                // Each kernel found must be found again by name (unless overloaded).
                match gpu_cuda_source::find_kernel(src, &k.name) {
                    Ok(again) if again.params != k.params => {
                        return Err(format!("find_kernel(`{}`) disagrees with find_kernels", k.name))
                    }
                    Ok(_) | Err(gpu_cuda_source::DeclError::Ambiguous { .. }) => {}
                    Err(e) => return Err(format!("find_kernels found `{}`, find_kernel says: {e}", k.name)),
                }
            }
        }
        Err(e) => sig.push_str(&check_err(&e)?),
    }
    match gpu_cuda_source::find_kernel(src, "k") {
        Ok(_) => sig.push_str("|k"),
        Err(e) => sig.push_str(&format!("|{}", check_err(&e)?)),
    }
    // Read as the macro reads a file: with headers and options.
    let options = ["-DX=1".to_owned(), "-arch=sm_75".to_owned()];
    let pp = gpu_cuda_source::Preprocess::from_options(&options).headers(&header);
    let read = gpu_cuda_source::Declarations::read(src, &pp);
    match read.find_kernels() {
        Ok(ks) => {
            sig.push_str(&format!("|p{}", ks.len().min(4)));
            for k in &ks {
                if k.line == 0 || k.line > lines {
                    return Err(format!("preprocessed: kernel `{}` at line {} of {lines}", k.name, k.line));
                }
            }
        }
        Err(e) => sig.push_str(&format!("|p{}", check_err(&e)?)),
    }
    if let Err(e) = read.find_kernel("k") {
        sig.push_str(&check_err(&e)?);
    }
    sig.push(if gpu_cuda_source::uses_dynamic_shared_memory(src) {
        's'
    } else {
        '-'
    });
    sig.push_str(&gpu_cuda_source::find_globals(src).len().min(3).to_string());
    // Typed globals, with array bounds evaluated from the source's constants.
    let decls = gpu_cuda_source::find_global_decls(src);
    sig.push(if decls.iter().any(|g| g.unresolved_dim.is_some()) {
        'u'
    } else {
        '-'
    });
    sig.push_str(
        &decls
            .iter()
            .map(|g| g.dims.len())
            .sum::<usize>()
            .min(3)
            .to_string(),
    );
    // The same bytes read as an NVRTC log of a file named `k`: every message is on a line the
    // log names, and each reported line is one a message was read from.
    let diags = gpu_cuda_source::nvrtc_log::parse(src, "k");
    let reported = gpu_cuda_source::nvrtc_log::reported_lines(src, "k");
    if diags.iter().any(|d| !reported.contains(&d.line)) {
        return Err(format!("nvrtc_log: messages {diags:?} on lines not reported: {reported:?}"));
    }
    sig.push_str(&diags.len().min(3).to_string());
    // And as an elementwise operation: tokens are non-empty slices of the source, in order.
    match gpu_cuda_source::tokens::tokenize(src) {
        Ok(toks) => {
            if toks.iter().any(|t| t.text.is_empty() || t.line == 0 || t.line > lines) {
                return Err(format!("tokens: an empty token or one outside the source: {toks:?}"));
            }
            sig.push('t');
        }
        Err(e) => sig.push_str(&format!("T{}", e.to_string().len() % 7)),
    }
    // And as the operation of a generated elementwise kernel: pasted whole into each of its
    // three loops (the vector chunk, the scalar tail, the strided one); no panic on any text.
    {
        use gpu_cuda_source::elementwise::{Elementwise, Param, Role, Variant};
        let params = [Param::new("x", "float", Role::Input), Param::new("z", "float", Role::Output)];
        let k = Elementwise { name: "k", params: &params, operation: src, ..Elementwise::default() };
        let cuda = k.source(&[Variant::Contiguous, Variant::Strided(2)]);
        if cuda.matches(&format!("#line 1 \"operation\"\n{src}\n;")).count() < 3 {
            return Err("elementwise: the operation is not in each loop".to_owned());
        }
        sig.push(if gpu_cuda_source::elementwise::mentions(src, "i") { 'i' } else { 'e' });
    }
    Ok(sig)
}

fn save(dir: &Path, data: &[u8]) -> PathBuf {
    let _ = std::fs::create_dir_all(dir);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in data {
        h = (h ^ *b as u64).wrapping_mul(0x100_0000_01b3);
    }
    let p = dir.join(format!("{h:016x}"));
    let _ = std::fs::write(&p, data);
    p
}

fn main() {
    let mut seconds = 60u64;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ std::process::id() as u64;
    let mut save_corpus = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seconds" => seconds = args.next().and_then(|s| s.parse().ok()).expect("--seconds N"),
            "--seed" => seed = args.next().and_then(|s| s.parse().ok()).expect("--seed S"),
            "--save-corpus" => save_corpus = true,
            _ => panic!("unknown argument {a}"),
        }
    }
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = here.parent().unwrap().to_path_buf();
    let corpus_dir = here.join("corpus");
    let crash_dir = here.join("crashes");
    let mut pool = seeds(&root, &corpus_dir);
    let n_seeds = pool.len();
    let mut seen: HashSet<String> = HashSet::new();
    let mut kept: Vec<Vec<u8>> = Vec::new();

    let current: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
    let started_at = Arc::new(AtomicU64::new(0));
    let t0 = Instant::now();
    {
        // Watchdog: one input taking over a second is a hang (the parser promises linear time).
        let current = current.clone();
        let started_at = started_at.clone();
        let crash_dir = crash_dir.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(250));
            let s = started_at.load(Ordering::Relaxed);
            if s != 0 && t0.elapsed().as_millis() as u64 > s + 1000 {
                let data = current.lock().map(|d| d.clone()).unwrap_or_default();
                let p = save(&crash_dir, &data);
                eprintln!("HANG: an input took over 1 s; saved to {}", p.display());
                std::process::exit(3);
            }
        });
    }
    panic::set_hook(Box::new(|_| {}));
    let mut rng = Rng(seed | 1);
    let mut execs = 0u64;
    let mut findings = 0u64;
    let deadline = Duration::from_secs(seconds);
    let mut slowest = Duration::ZERO;
    while t0.elapsed() < deadline {
        let base = if rng.below(4) == 0 || kept.is_empty() {
            &pool[rng.below(pool.len())]
        } else {
            &kept[rng.below(kept.len())]
        };
        let data = mutate(&mut rng, base, &pool);
        let src = String::from_utf8_lossy(&data).into_owned();
        if let Ok(mut c) = current.lock() {
            c.clear();
            c.extend_from_slice(src.as_bytes());
        }
        started_at.store(t0.elapsed().as_millis() as u64 + 1, Ordering::Relaxed);
        let t = Instant::now();
        let r = panic::catch_unwind(AssertUnwindSafe(|| exercise(&src)));
        slowest = slowest.max(t.elapsed());
        started_at.store(0, Ordering::Relaxed);
        execs += 1;
        match r {
            Ok(Ok(sig)) => {
                if seen.insert(sig) {
                    kept.push(src.into_bytes());
                }
            }
            Ok(Err(why)) => {
                findings += 1;
                let p = save(&crash_dir, src.as_bytes());
                eprintln!("FINDING: {why}; input saved to {}", p.display());
            }
            Err(payload) => {
                findings += 1;
                let msg = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                let p = save(&crash_dir, src.as_bytes());
                eprintln!("PANIC: {msg}; input saved to {}", p.display());
            }
        }
        if kept.len() > 4000 {
            // Keep the newest and the smallest: bounded memory, short inputs mutate faster.
            kept.sort_by_key(|k| k.len());
            kept.truncate(2000);
        }
        if execs.is_multiple_of(200_000) {
            eprintln!(
                "{:>5}s {execs} execs, {} signatures, {findings} findings",
                t0.elapsed().as_secs(),
                seen.len()
            );
        }
        if pool.len() < n_seeds + 64 && execs.is_multiple_of(50_000) && !kept.is_empty() {
            pool.push(kept[rng.below(kept.len())].clone());
        }
    }
    if save_corpus {
        // The corpus kept in the repository: at most 300 inputs of at most 1 KiB, spread evenly
        // over the kept inputs sorted by length (short and long ones both), merged with what
        // the corpus already held.
        let _ = std::fs::create_dir_all(&corpus_dir);
        kept.retain(|k| k.len() <= 1024);
        kept.sort_by_key(|k| k.len());
        let step = (kept.len() / 300).max(1);
        for k in kept.iter().step_by(step).take(300) {
            save(&corpus_dir, k);
        }
    }
    println!(
        "fuzzed for {:.0} s: {execs} executions ({:.0}/s), {} outcome signatures, {findings} findings, slowest input {:?}",
        t0.elapsed().as_secs_f64(),
        execs as f64 / t0.elapsed().as_secs_f64(),
        seen.len(),
        slowest
    );
    if findings > 0 {
        std::process::exit(1);
    }
}
