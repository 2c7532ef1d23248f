//! The CUDA C of an elementwise kernel (PyCUDA's and CuPy's `ElementwiseKernel`): one
//! operation on elements, pasted into a loop over arrays of any layout. The run time compiles
//! this text for `gpu_runtime::gpuarray::ElementwiseKernel` (and so for every
//! `#[elementwise]` fn), and the macro's build-time check compiles the same text, so the
//! kernel checked is the kernel that runs.
//!
//! Two forms of operation are accepted, told apart by [`is_indexed`]:
//! - element-bound (CuPy's): arrays are named in the operation as their elements: with `float
//!   *z, const float *x`, the operation `z = 2 * x` writes each element of `z`;
//! - indexed (PyCUDA's): an array argument's name followed by `[` (`z[i] = 2 * x[i]`) makes
//!   every array a plain pointer to its first element, indexed by the operation itself; only
//!   [`Variant::Indexed`] is generated, for arrays contiguous in C order.
//!
//! In both, `i` is the element's flat index in C order and `n` the number of elements;
//! `loop_prep` runs in each thread before its loop and `after_loop` after it (PyCUDA's). The
//! operation is preceded by `#line 1 "operation"`, so that the compiler's messages give its own
//! lines and columns.
//!
//! ```
//! use gpu_cuda_source::elementwise::{Elementwise, Param, Role, Variant};
//!
//! let params = [
//!     Param::new("a", "float", Role::Scalar),
//!     Param::new("x", "float", Role::Input),
//!     Param::new("z", "float", Role::Output),
//! ];
//! let k = Elementwise { name: "axpy", params: &params, operation: "z = a * x", ..Elementwise::default() };
//! let cuda = k.source(&[Variant::Contiguous]);
//! assert!(cuda.contains("extern \"C\" __global__ void axpy_contig(long long n, int gpu_vec, float a, \
//!                        const float *__restrict__ x__p, long long x__o, float *__restrict__ z__p, long long z__o)"));
//! assert!(cuda.contains("#line 1 \"operation\"\nz = a * x\n;"));
//! ```

mod includes;
mod operation;
mod param;
mod pieces;

use std::fmt::Write as _;

pub use includes::scalar_includes;
pub use operation::{indexes, is_ident, may_read, mentions};
pub use param::{Param, Role};
pub use pieces::{bind_refs, params_c, strided_index, strides_c, vec4_align, VEC4};

/// The file name the compiler's messages give the operation (set by `#line`).
pub const OPERATION_FILE: &str = "operation";

/// The most axes an array passed to a generated kernel may have: the strided variants go up
/// to this many (one shape and one stride argument per axis).
pub const MAX_DIMS: usize = 8;

/// One kernel generated from an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Every array contiguous in one order (C, or Fortran when the operation does not use `i`):
    /// a grid-stride loop over four elements at a time with aligned vector loads and stores
    /// (`gpu_vec4`, when its `int gpu_vec` argument is nonzero), and a scalar tail.
    Contiguous,
    /// Any other layout, over this many axes: each array's storage index is computed from the
    /// shape and its strides, passed as arguments after the user's (broadcast axes have
    /// stride 0). Its `long long gpu_chunk` argument (after `n`) picks the loop: 0, one flat
    /// grid-stride loop over elements; otherwise (two axes or more) rows of the last axis in
    /// tiles of `gpu_chunk` elements, one tile per block at a time, so that the index
    /// arithmetic of the other axes is done once per tile, not once per element.
    /// Its `int gpu_vec` argument (after `gpu_chunk`), when nonzero, has a tile's elements
    /// moved four at a time as aligned vectors, an array broadcast along the last axis
    /// (stride 0: a column such as `(n, 1)`) read once per four elements: the launch sets it
    /// when every array's last stride is 0 or 1 and the rows are aligned (broadcasts of a row
    /// `(m,)` or a column `(n, 1)` against C-ordered arrays).
    Strided(usize),
    /// PyCUDA's indexed form: every array is a pointer to its first element and the operation
    /// indexes it (`z[i] = a * x[i]`), in one grid-stride loop over `i` in `0..n`.
    Indexed,
}

impl Variant {
    /// Every element-bound variant a kernel may be compiled as: the contiguous one, and the
    /// strided ones over 1 to [`MAX_DIMS`] axes ([`Elementwise::variants`] gives those of one
    /// kernel, which for an indexed operation is [`Variant::Indexed`] alone).
    pub fn all() -> impl Iterator<Item = Variant> {
        std::iter::once(Variant::Contiguous).chain((1..=MAX_DIMS).map(Variant::Strided))
    }
}

/// An elementwise kernel: its name, arguments, operation, preamble, and the code before and
/// after each thread's loop.
#[derive(Debug, Clone, Copy, Default)]
pub struct Elementwise<'a> {
    /// The kernel's name, a C identifier; each variant's C name is made from it
    /// ([`kernel_name`](Self::kernel_name)).
    pub name: &'a str,
    /// The arguments, in the order a launch passes them.
    pub params: &'a [Param<'a>],
    /// The operation on one element, C statements (a final `;` may be left out).
    pub operation: &'a str,
    /// C code placed before the kernels: helper functions, `#include`s.
    pub preamble: &'a str,
    /// C statements each thread runs before its loop (PyCUDA's `loop_prep`): locals declared
    /// here are in scope in the operation.
    pub loop_prep: &'a str,
    /// C statements each thread runs after its loop (PyCUDA's `after_loop`).
    pub after_loop: &'a str,
}

/// The loop's first index and its stride: a grid-stride loop.
const HEAD: &str = "long long gpu_t = blockIdx.x * (long long)blockDim.x + threadIdx.x; \
                    long long gpu_nt = (long long)gridDim.x * blockDim.x;\n";

impl Elementwise<'_> {
    /// The C name of the kernel of `variant` (`NAME_contig`, `NAME_stridedD`).
    pub fn kernel_name(&self, variant: Variant) -> String {
        match variant {
            Variant::Contiguous => format!("{}_contig", self.name),
            Variant::Strided(d) => format!("{}_strided{d}", self.name),
            Variant::Indexed => format!("{}_indexed", self.name),
        }
    }

    /// True when the operation is in PyCUDA's indexed form ([`is_indexed`]).
    pub fn is_indexed(&self) -> bool {
        is_indexed(self.params, self.operation)
    }

    /// Every variant the run time may compile for this kernel: [`Variant::Indexed`] for an
    /// indexed operation, else [`Variant::all`].
    pub fn variants(&self) -> Vec<Variant> {
        if self.is_indexed() {
            vec![Variant::Indexed]
        } else {
            Variant::all().collect()
        }
    }

    /// The source of one module holding the kernels of `variants` (each `extern "C"`), after
    /// the vector type and the preamble: what is compiled, with no `extern "C"` added around it.
    pub fn source(&self, variants: &[Variant]) -> String {
        let mut s = String::from(VEC4);
        s.push_str(self.preamble);
        s.push('\n');
        for &v in variants {
            match v {
                Variant::Contiguous => self.contiguous(&mut s),
                Variant::Strided(d) => self.strided(&mut s, d),
                Variant::Indexed => self.indexed(&mut s),
            }
        }
        s
    }

    /// `loop_prep` on a line of its own, or nothing.
    fn prep_line(&self) -> String {
        own_line(self.loop_prep)
    }

    /// `after_loop` on a line of its own, or nothing.
    fn after_line(&self) -> String {
        own_line(self.after_loop)
    }

    /// The operation in a block of its own, numbered from its own first line.
    fn operation_block(&self) -> String {
        // The `;` on a line of its own ends the last statement even after a `//` comment.
        format!("{{\n#line 1 \"{OPERATION_FILE}\"\n{}\n;}}", self.operation)
    }

    fn contiguous(&self, s: &mut String) {
        let params = params_c(self.params);
        let op = self.operation_block();
        let _ = writeln!(
            s,
            "extern \"C\" __global__ void {}(long long n, int gpu_vec{params}) {{\n{HEAD}",
            self.kernel_name(Variant::Contiguous)
        );
        s.push_str(&self.prep_line());
        let _ = writeln!(
            s,
            "long long gpu_done = 0;\nif (gpu_vec) {{\nlong long gpu_nv = n / 4;"
        );
        let _ = writeln!(
            s,
            "for (long long gpu_j = gpu_t; gpu_j < gpu_nv; gpu_j += gpu_nt) {{"
        );
        for p in self.params.iter().filter(|p| p.is_array()) {
            let (t, n) = (p.c_type, p.name);
            // An output the operation may read (or may leave unwritten) is loaded: the whole
            // chunk is stored back.
            if p.role == Role::Input || may_read(self.operation, n) {
                let _ = writeln!(
                    s,
                    "gpu_vec4<{t}> {n}__v = ((const gpu_vec4<{t}> *)({n}__p + {n}__o))[gpu_j];"
                );
            } else {
                let _ = writeln!(s, "gpu_vec4<{t}> {n}__v;");
            }
        }
        let refs = bind_refs(self.params, |p| format!("{}__v.v[gpu_k]", p.name));
        // `i` is there for the operation, which may not use it: `unused` keeps NVRTC from
        // warning about it (`(void)i` does not), so that every message is the operation's.
        let _ = writeln!(s, "#pragma unroll\nfor (int gpu_k = 0; gpu_k < 4; ++gpu_k) {{ long long i __attribute__((unused)) = 4 * gpu_j + gpu_k; {refs}\n{op}\n}}");
        for p in self.params.iter().filter(|p| p.role == Role::Output) {
            let (t, n) = (p.c_type, p.name);
            let _ = writeln!(s, "((gpu_vec4<{t}> *)({n}__p + {n}__o))[gpu_j] = {n}__v;");
        }
        s.push_str("}\ngpu_done = 4 * gpu_nv;\n}\n");
        let refs = bind_refs(self.params, |p| format!("{n}__p[{n}__o + i]", n = p.name));
        let _ = writeln!(
            s,
            "for (long long i = gpu_done + gpu_t; i < n; i += gpu_nt) {{ {refs}\n{op}\n}}\n{}}}",
            self.after_line()
        );
    }

    fn strided(&self, s: &mut String, ndim: usize) {
        let params = params_c(self.params);
        let strides = strides_c(self.params, ndim);
        let op = self.operation_block();
        let _ = writeln!(
            s,
            "extern \"C\" __global__ void {}(long long n, long long gpu_chunk, int gpu_vec{params}{strides}) {{\n{HEAD}{}",
            self.kernel_name(Variant::Strided(ndim)),
            self.prep_line()
        );
        let index = strided_index(self.params, ndim, "i");
        let refs = bind_refs(self.params, |p| format!("{n}__p[{n}__i]", n = p.name));
        let flat = format!("for (long long i = gpu_t; i < n; i += gpu_nt) {{\n{index}{refs}\n{op}\n}}\n");
        if ndim < 2 {
            // One axis: the flat loop has no division to save.
            let _ = writeln!(s, "{flat}{}}}", self.after_line());
            return;
        }
        let last = ndim - 1;
        // The row's first element of each array, from the axes before the last (the flat
        // index of a row counts rows in C order).
        let row_index = strided_index(self.params, last, "gpu_row");
        let row_refs = bind_refs(self.params, |p| {
            format!("{n}__p[{n}__i + gpu_c * {n}__s{last}]", n = p.name)
        });
        let vector_row = self.vector_row(last, &op);
        let _ = writeln!(
            s,
            "if (gpu_chunk == 0) {{\n{flat}}} else {{\n\
             long long gpu_chunks = (gpu_d{last} + gpu_chunk - 1) / gpu_chunk;\n\
             long long gpu_tiles = (n / gpu_d{last}) * gpu_chunks;\n\
             for (long long gpu_tile = blockIdx.x; gpu_tile < gpu_tiles; gpu_tile += gridDim.x) {{\n\
             long long gpu_row = gpu_tile / gpu_chunks;\n\
             long long gpu_c0 = (gpu_tile - gpu_row * gpu_chunks) * gpu_chunk;\n\
             long long gpu_c1 = min(gpu_c0 + gpu_chunk, gpu_d{last});\n\
             {row_index}\
             if (gpu_vec) {{\n{vector_row}}} else {{\n\
             #pragma unroll 4\n\
             for (long long gpu_c = gpu_c0 + threadIdx.x; gpu_c < gpu_c1; gpu_c += blockDim.x) {{\n\
             long long i __attribute__((unused)) = gpu_row * gpu_d{last} + gpu_c; {row_refs}\n{op}\n}}\n}}\n}}\n}}\n{}}}",
            self.after_line()
        );
    }

    /// The tile loop of the strided variant when its `gpu_vec` argument is nonzero: four
    /// elements of a row at a time, each array read and written as one aligned `gpu_vec4`
    /// (stride 1 on the last axis), or, for an array broadcast along it (stride 0), its one
    /// element of the row read once and repeated. The launch sets `gpu_vec` only when every
    /// array's last stride is 0 or 1, the row's length and `gpu_chunk` are multiples of four,
    /// and each row of a stride-1 array starts aligned for `gpu_vec4`.
    fn vector_row(&self, last: usize, op: &str) -> String {
        let mut s = String::from(
            "#pragma unroll 2\n\
             for (long long gpu_c = gpu_c0 + 4 * threadIdx.x; gpu_c < gpu_c1; gpu_c += 4 * blockDim.x) {\n",
        );
        for p in self.params.iter().filter(|p| p.is_array()) {
            let (t, n) = (p.c_type, p.name);
            let _ = writeln!(s, "gpu_vec4<{t}> {n}__v;");
            // An output the operation may read (or may leave unwritten) is loaded: the whole
            // chunk is stored back.
            if p.role == Role::Input || may_read(self.operation, n) {
                let _ = writeln!(
                    s,
                    "if ({n}__s{last} == 0) {{ for (int gpu_k = 0; gpu_k < 4; ++gpu_k) {n}__v.v[gpu_k] = {n}__p[{n}__i]; }} \
                     else {n}__v = *(const gpu_vec4<{t}> *)({n}__p + {n}__i + gpu_c);"
                );
            }
        }
        let refs = bind_refs(self.params, |p| format!("{}__v.v[gpu_k]", p.name));
        let _ = writeln!(
            s,
            "#pragma unroll\nfor (int gpu_k = 0; gpu_k < 4; ++gpu_k) {{ long long i __attribute__((unused)) = gpu_row * gpu_d{last} + gpu_c + gpu_k; {refs}\n{op}\n}}"
        );
        for p in self.params.iter().filter(|p| p.role == Role::Output) {
            let (t, n) = (p.c_type, p.name);
            let _ = writeln!(s, "*(gpu_vec4<{t}> *)({n}__p + {n}__i + gpu_c) = {n}__v;");
        }
        s.push_str("}\n");
        s
    }

    /// PyCUDA's kernel: each array a pointer to its first element, `i` declared before the
    /// loop (so that `after_loop` sees where it ended, as PyCUDA's does).
    fn indexed(&self, s: &mut String) {
        let params = params_c(self.params);
        let _ = writeln!(
            s,
            "extern \"C\" __global__ void {}(long long n{params}) {{",
            self.kernel_name(Variant::Indexed)
        );
        for p in self.params.iter().filter(|p| p.is_array()) {
            let konst = if p.role == Role::Output { "" } else { "const " };
            let _ = writeln!(
                s,
                "{konst}{t} *__restrict__ {n} __attribute__((unused)) = {n}__p + {n}__o;",
                t = p.c_type,
                n = p.name
            );
        }
        let _ = writeln!(
            s,
            "{HEAD}{}long long i;\nfor (i = gpu_t; i < n; i += gpu_nt) {}\n{}}}",
            self.prep_line(),
            self.operation_block(),
            self.after_line()
        );
    }
}

/// `code` on a line of its own, or nothing when it is empty.
fn own_line(code: &str) -> String {
    if code.is_empty() {
        String::new()
    } else {
        format!("{code}\n")
    }
}

/// True when `operation` is in PyCUDA's indexed form: some array argument's name is followed
/// by `[` (`x[i]`), as an element-bound operation never writes it (an element is not an
/// array). Then every array is a pointer in the operation, not an element.
pub fn is_indexed(params: &[Param<'_>], operation: &str) -> bool {
    params
        .iter()
        .filter(|p| p.is_array())
        .any(|p| indexes(operation, p.name))
}

#[cfg(test)]
mod tests;
