//! NumPy's `einsum(subscripts, *operands)`: Einstein summation over labelled axes, as one
//! generated kernel. The subscripts become a plan on the host: each label's length, and for
//! each operand the step (in elements, of its C-order copy) that one more of each label moves
//! it, the sum of the steps of its axes of that label (so a label repeated in one operand walks
//! its diagonal, and a length-1 axis broadcasts with step 0). Each thread then writes one
//! element of the result: its output labels from the element's index, and the sum over every
//! combination of the summed labels of the operands' product, in the element type (`f16` and
//! `bf16` in `float`, rounded once; `bool` as NumPy's: or of ands; integers wrap).
//!
//! The kernel is general, not tuned: a contraction as large as a matrix product reads each
//! operand once per output element; `matmul` is the fast path for those.

use ndarray::{Dimension, IxDyn};

use crate::driver::context::core::Context;
use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::layout::checked_size;
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::cast::headers_for;
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::codegen::Arith;
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::launch::Arg;

/// The most operands of one `einsum` (each a kernel parameter, with a step per label).
pub const MAX_EINSUM_OPERANDS: usize = 8;

/// The most distinct labels of one `einsum`, `...`'s axes included (NumPy's 52 letters).
const MAX_LABELS: usize = 52;

/// NumPy's `einsum(subscripts, *operands)` of arrays of one element type, into a new array:
/// `"ij,jk->ik"` (a matrix product), `"ii"` (the trace), `"ii->i"` (the diagonal), `"ij->ji"`,
/// `"i,j->ij"` (the outer product), `"...ij,...jk->...ik"` (batched, `...` broadcast from the
/// right), and without `->` NumPy's implicit output (the labels used once, in alphabetical
/// order, after `...`'s axes). A label of length 1 broadcasts against a longer one. Operands of
/// different dimension types go in as views: `&[&a.view().into_dyn(), &b.view().into_dyn()]`.
/// Subscripts that do not fit the operands (a term per operand, a label per axis, letters only,
/// output labels once and from the inputs, one length per label) are
/// [`ArrayShapeError::Einsum`], naming what; more than [`MAX_EINSUM_OPERANDS`] operands too.
///
/// ```no_run
/// use gpu_runtime::gpuarray::{self, DeviceArray};
/// use gpu_runtime::ndarray::arr2;
/// let ctx = gpu_runtime::Context::default()?;
/// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[1.0f64, 2.0], [3.0, 4.0]]))?;
/// assert_eq!(gpuarray::einsum("ij,jk->ik", &[&a, &a])?.to_vec()?, [7.0, 10.0, 15.0, 22.0]);
/// assert_eq!(gpuarray::einsum("ii", &[&a])?.to_vec()?, [5.0]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn einsum<S: Storage<Elem: Element>, D: Dimension>(
    subscripts: &str,
    operands: &[&DeviceArrayBase<S, D>],
) -> Result<DeviceArray<S::Elem, IxDyn>> {
    match operands.first() {
        Some(a) => OnStream::legacy(a.context()).einsum(subscripts, operands),
        None => Err(einsum_error(subscripts, "no operands".into())),
    }
}

impl OnStream<'_, &Context> {
    /// [`einsum`] on this stream.
    pub fn einsum<S: Storage<Elem: Element>, D: Dimension>(
        &self,
        subscripts: &str,
        operands: &[&DeviceArrayBase<S, D>],
    ) -> Result<DeviceArray<S::Elem, IxDyn>> {
        let shapes: Vec<&[usize]> = operands.iter().map(|a| a.shape()).collect();
        let plan = Plan::new(subscripts, &shapes)?;
        checked_size("einsum", &plan.out_shape)?;
        let mut out = DeviceArray::<S::Elem, IxDyn>::empty(self.target, IxDyn(&plan.out_shape))?;
        let nout = out.len() as u64;
        if nout == 0 {
            return Ok(out);
        }
        let copies = operands
            .iter()
            .map(|a| OnStream::new(*a, self.stream).c_order())
            .collect::<Result<Vec<_>>>()?;
        let views: Vec<_> = copies.iter().map(|c| c.view()).collect();
        let key = Key {
            t: S::Elem::DTYPE,
            operands: operands.len(),
            out_labels: plan.out_labels,
            sum_labels: plan.sizes.len() - plan.out_labels,
        };
        let f = KERNELS.prepared(self.target, key, NAME, || source(key))?;
        let nsum = checked_size("einsum", &plan.sizes[plan.out_labels..])? as u64;
        let mut args = vec![Arg::U64(nout), Arg::U64(nsum)];
        args.extend(views.iter().map(Arg::input::<S::Elem, _>));
        args.push(Arg::output(&mut out));
        args.extend(plan.sizes.iter().map(|&d| Arg::I64(d as i64)));
        for steps in &plan.steps {
            args.extend(steps.iter().map(|&s| Arg::I64(s)));
        }
        registry::launch(
            &f,
            registry::grid_for(self.target, nout)?,
            BLOCK,
            self.stream,
            &args,
        )?;
        Ok(out)
    }
}

fn einsum_error(subscripts: &str, problem: String) -> crate::error::Error {
    ArrayShapeError::Einsum {
        subscripts: subscripts.into(),
        problem,
    }
    .into()
}

/// A label: a letter, or the `k`-th axis of `...` (counted from the first of the broadcast
/// `...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Label {
    Ellipsis(usize),
    Letter(char),
}

/// The subscripts of one operand or of the output: letters, with `...` at most once.
struct Term {
    before: Vec<char>,
    /// The letters after `...`, when there is one.
    after: Option<Vec<char>>,
}

impl Term {
    fn parse(subscripts: &str, text: &str, what: &str) -> Result<Term> {
        let (before, after) = match text.split_once("...") {
            Some((b, a)) => (b, Some(a)),
            None => (text, None),
        };
        let letters = |s: &str| -> Result<Vec<char>> {
            s.chars()
                .filter(|c| !c.is_whitespace())
                .map(|c| {
                    if c.is_ascii_alphabetic() {
                        Ok(c)
                    } else {
                        Err(einsum_error(
                            subscripts,
                            format!("{what} has {c:?}, not a letter"),
                        ))
                    }
                })
                .collect()
        };
        Ok(Term {
            before: letters(before)?,
            after: after.map(letters).transpose()?,
        })
    }

    fn letters(&self) -> impl Iterator<Item = char> + '_ {
        self.before.iter().chain(self.after.iter().flatten()).copied()
    }

    /// The labels of an operand of `ndim` axes, its `...` the last of `ellipsis` broadcast
    /// axes; `None` when the letters alone are more than its axes (or fewer, without `...`).
    fn labels(&self, ndim: usize, ellipsis: usize) -> Option<Vec<Label>> {
        let fixed = self.before.len() + self.after.as_ref().map_or(0, Vec::len);
        let mut labels: Vec<Label> = self.before.iter().map(|&c| Label::Letter(c)).collect();
        match &self.after {
            None if fixed == ndim => {}
            None => return None,
            Some(after) => {
                let own = ndim.checked_sub(fixed)?;
                labels.extend((ellipsis - own..ellipsis).map(Label::Ellipsis));
                labels.extend(after.iter().map(|&c| Label::Letter(c)));
            }
        }
        Some(labels)
    }
}

/// How the kernel walks the operands: the labels' lengths (the output's first, in its
/// order), and each operand's step per label.
#[derive(Debug, PartialEq)]
struct Plan {
    out_shape: Vec<usize>,
    out_labels: usize,
    sizes: Vec<usize>,
    steps: Vec<Vec<i64>>,
}

impl Plan {
    fn new(subscripts: &str, shapes: &[&[usize]]) -> Result<Plan> {
        let err = |problem: String| einsum_error(subscripts, problem);
        if shapes.len() > MAX_EINSUM_OPERANDS {
            return Err(err(format!(
                "{} operands, at most {MAX_EINSUM_OPERANDS}",
                shapes.len()
            )));
        }
        let (inputs, output) = match subscripts.split_once("->") {
            Some((i, o)) => (i, Some(o)),
            None => (subscripts, None),
        };
        let terms = inputs
            .split(',')
            .enumerate()
            .map(|(k, t)| Term::parse(subscripts, t, &format!("operand {k}'s term")))
            .collect::<Result<Vec<_>>>()?;
        if terms.len() != shapes.len() {
            return Err(err(format!(
                "{} terms for {} operands",
                terms.len(),
                shapes.len()
            )));
        }
        // `...` stands for the most axes any operand leaves to it; the others broadcast.
        let mut ellipsis = 0;
        for (k, (t, shape)) in terms.iter().zip(shapes).enumerate() {
            let fixed = t.letters().count();
            if t.after.is_some() {
                ellipsis = ellipsis.max(shape.len().saturating_sub(fixed));
            }
            if fixed > shape.len() || (t.after.is_none() && fixed != shape.len()) {
                return Err(err(format!(
                    "operand {k} has {} axes and its term {fixed} letters",
                    shape.len()
                )));
            }
        }
        let labels: Vec<Vec<Label>> = terms
            .iter()
            .zip(shapes)
            .map(|(t, shape)| t.labels(shape.len(), ellipsis).unwrap_or_default())
            .collect();
        // Each label's length: one, or 1 where it broadcasts (not within one operand, whose
        // repeated label walks a diagonal: NumPy's lengths must be equal there).
        let mut length: Vec<(Label, usize)> = Vec::new();
        for (k, (ls, shape)) in labels.iter().zip(shapes).enumerate() {
            for (i, (&l, &n)) in ls.iter().zip(shape.iter()).enumerate() {
                if let Some(m) = ls[..i]
                    .iter()
                    .zip(shape.iter())
                    .find(|(m, _)| **m == l)
                    .map(|(_, &m)| m)
                {
                    if m != n {
                        return Err(err(format!(
                            "operand {k} repeats {l:?} over axes of {m} and {n} elements"
                        )));
                    }
                }
                match length.iter_mut().find(|(m, _)| *m == l) {
                    None => length.push((l, n)),
                    Some((_, m)) if *m == n || n == 1 => {}
                    Some((_, m)) if *m == 1 => *m = n,
                    Some((_, m)) => {
                        return Err(err(format!(
                            "operand {k}'s axis of {l:?} has {n} elements where another has {m}"
                        )))
                    }
                }
            }
        }
        let out: Vec<Label> = match output {
            Some(o) => {
                let t = Term::parse(subscripts, o, "the output")?;
                if t.after.is_none() && ellipsis > 0 {
                    return Err(err(format!(
                        "the operands' `...` has {ellipsis} axes and the output no `...`"
                    )));
                }
                t.labels(t.letters().count() + ellipsis, ellipsis)
                    .unwrap_or_default()
            }
            None => {
                // NumPy's implicit output: `...`, then the letters used once, sorted.
                let mut once: Vec<char> = terms.iter().flat_map(Term::letters).collect();
                once.sort_unstable();
                let all = once.clone();
                once.retain(|c| all.iter().filter(|d| *d == c).count() == 1);
                (0..ellipsis)
                    .map(Label::Ellipsis)
                    .chain(once.into_iter().map(Label::Letter))
                    .collect()
            }
        };
        for (i, l) in out.iter().enumerate() {
            if out[..i].contains(l) {
                return Err(err(format!("the output has {l:?} twice")));
            }
            if !length.iter().any(|(m, _)| m == l) {
                return Err(err(format!("the output's {l:?} is in no operand")));
            }
        }
        // The output's labels first, then the summed ones.
        let mut order = out.clone();
        order.extend(length.iter().map(|(l, _)| *l).filter(|l| !out.contains(l)));
        if order.len() > MAX_LABELS {
            return Err(err(format!("{} labels, at most {MAX_LABELS}", order.len())));
        }
        let size_of = |l: &Label| length.iter().find(|(m, _)| m == l).map_or(1, |&(_, n)| n);
        let sizes: Vec<usize> = order.iter().map(size_of).collect();
        let steps = labels
            .iter()
            .zip(shapes)
            .map(|(ls, shape)| {
                // C-order strides of the operand's copy.
                let mut stride = vec![0i64; shape.len()];
                let mut s = 1i64;
                for ax in (0..shape.len()).rev() {
                    stride[ax] = s;
                    s *= shape[ax].max(1) as i64;
                }
                order
                    .iter()
                    .map(|l| {
                        ls.iter()
                            .zip(shape.iter())
                            .zip(&stride)
                            .filter(|((m, &n), _)| *m == l && n != 1)
                            .map(|(_, &st)| st)
                            .sum()
                    })
                    .collect()
            })
            .collect();
        Ok(Plan {
            out_shape: out.iter().map(size_of).collect(),
            out_labels: out.len(),
            sizes,
            steps,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    t: DType,
    operands: usize,
    out_labels: usize,
    sum_labels: usize,
}

const NAME: &str = "gpu_einsum";

static KERNELS: SourceKernels<Key> = SourceKernels::new();

/// The kernel of `key`: parameters `nout, nsum, x0.., out, d0.. (each label's length),
/// s{k}_{l} (operand k's step of label l)`.
fn source(key: Key) -> String {
    use std::fmt::Write;
    let t = key.t;
    let tc = t.c_name();
    // Integers in 64-bit unsigned arithmetic (`Arith`), `f16` and `bf16` in `float`.
    let arith = Arith::of(t);
    let ac = arith.c();
    let labels = key.out_labels + key.sum_labels;
    let mut params = String::from("unsigned long long nout, unsigned long long nsum");
    for k in 0..key.operands {
        let _ = write!(params, ", const {tc} *__restrict__ x{k}");
    }
    let _ = write!(params, ", {tc} *__restrict__ out");
    for l in 0..labels {
        let _ = write!(params, ", long long d{l}");
    }
    for k in 0..key.operands {
        for l in 0..labels {
            let _ = write!(params, ", long long s{k}_{l}");
        }
    }
    // Moves the offsets `{o}{k}` by the coordinate of label `l` taken off `{r}`.
    let take = |l: usize, r: &str, o: &str| {
        let mut s = format!("{{ const long long c = (long long)({r} % (unsigned long long)d{l}); {r} /= (unsigned long long)d{l};");
        for k in 0..key.operands {
            let _ = write!(s, " {o}{k} += c * s{k}_{l};");
        }
        s.push_str(" }\n");
        s
    };
    let mut body = String::from("unsigned long long r = i;\n");
    for k in 0..key.operands {
        let _ = writeln!(body, "long long b{k} = 0;");
    }
    for l in (0..key.out_labels).rev() {
        body.push_str(&take(l, "r", "b"));
    }
    let zero = if t == DType::Bool {
        "false".to_string()
    } else {
        arith.literal(0)
    };
    let _ = writeln!(body, "{ac} a = {zero};");
    body.push_str("for (unsigned long long j = 0; j < nsum; ++j) {\nunsigned long long q = j;\n");
    for k in 0..key.operands {
        let _ = writeln!(body, "long long o{k} = b{k};");
    }
    for l in (key.out_labels..labels).rev() {
        body.push_str(&take(l, "q", "o"));
    }
    let factors: Vec<String> = (0..key.operands)
        .map(|k| arith.read(&format!("x{k}[o{k}]")))
        .collect();
    if t == DType::Bool {
        let _ = writeln!(body, "a = a || ({});", factors.join(" && "));
    } else {
        let _ = writeln!(body, "a = a + {};", factors.join(" * "));
    }
    body.push_str("}\n");
    let result = arith.store("a");
    let _ = writeln!(body, "out[i] = {result};");
    format!(
        "{headers}extern \"C\" __global__ void {NAME}({params}) {{\n\
         for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < nout;\n\
              i += (unsigned long long)gridDim.x * blockDim.x) {{\n{body}}}\n}}\n",
        headers = headers_for([t]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(s: &str, shapes: &[&[usize]]) -> Result<Plan> {
        Plan::new(s, shapes)
    }

    #[test]
    fn plans_are_numpys() {
        // A matrix product: i, k out; j summed.
        let p = plan("ij,jk->ik", &[&[2, 3], &[3, 4]]).unwrap();
        assert_eq!(p.out_shape, [2, 4]);
        assert_eq!(p.sizes, [2, 4, 3]);
        assert_eq!(p.steps, [vec![3, 0, 1], vec![0, 1, 4]]);
        // The implicit output of the same, and of a trace.
        assert_eq!(plan("ij,jk", &[&[2, 3], &[3, 4]]).unwrap(), p);
        let t = plan("ii", &[&[3, 3]]).unwrap();
        assert_eq!(
            (t.out_shape.len(), t.sizes.clone(), t.steps.clone()),
            (0, vec![3], vec![vec![4]])
        );
        // A diagonal, a transpose, uppercase letters sorted first.
        assert_eq!(plan("ii->i", &[&[3, 3]]).unwrap().steps, [vec![4]]);
        assert_eq!(plan("ba", &[&[2, 3]]).unwrap().out_shape, [3, 2]);
        assert_eq!(plan("Ab,bC", &[&[2, 3], &[3, 4]]).unwrap().out_shape, [2, 4]);
        // `...` broadcast from the right, and a label of length 1.
        let e = plan("...,...", &[&[2, 1], &[3]]).unwrap();
        assert_eq!(
            (e.out_shape.clone(), e.steps.clone()),
            (vec![2, 3], vec![vec![1, 0], vec![0, 1]])
        );
        let b = plan("ij,ij->", &[&[2, 1], &[2, 3]]).unwrap();
        assert_eq!(
            (b.sizes.clone(), b.steps.clone()),
            (vec![2, 3], vec![vec![1, 0], vec![3, 1]])
        );
        assert_eq!(plan("...ij->...ji", &[&[4, 2, 3]]).unwrap().out_shape, [4, 3, 2]);
        assert_eq!(plan("i...->...", &[&[4, 2, 3]]).unwrap().out_shape, [2, 3]);
        assert_eq!(plan("...i->i", &[&[3]]).unwrap().out_shape, [3]);
        assert_eq!(plan("i,j", &[&[2], &[3]]).unwrap().out_shape, [2, 3]);
        assert_eq!(plan(",", &[&[], &[]]).unwrap().out_shape, Vec::<usize>::new());
    }

    #[test]
    fn subscripts_that_do_not_fit_are_refused() {
        for (s, shapes) in [
            ("ij->ii", vec![vec![2, 3]]),
            ("...i->i", vec![vec![2, 3]]),
            ("ij,jk", vec![vec![2, 3], vec![4, 5]]),
            ("ij", vec![vec![2]]),
            ("i", vec![vec![2, 3]]),
            ("i,i", vec![vec![2]]),
            ("i->j", vec![vec![2]]),
            ("i2", vec![vec![2, 2]]),
            ("ii", vec![vec![1, 3]]),
        ] {
            let shapes: Vec<&[usize]> = shapes.iter().map(Vec::as_slice).collect();
            match plan(s, &shapes) {
                Err(crate::error::Error::Shape(ArrayShapeError::Einsum { .. })) => {}
                other => panic!("{s}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_kernels_compile_for_every_element_type() {
        for t in DType::ALL {
            let key = Key {
                t,
                operands: 2,
                out_labels: 2,
                sum_labels: 1,
            };
            let s = source(key);
            assert_eq!(
                gpu_cuda_source::find_kernel(&s, NAME).unwrap().params.len(),
                2 + 2 + 1 + 3 + 6
            );
            if let Err(e) = registry::compile_check(&s, "sm_90") {
                panic!("{t:?}: {e}\n{s}");
            }
        }
        let s = source(Key {
            t: DType::F32,
            operands: 1,
            out_labels: 0,
            sum_labels: 0,
        });
        registry::compile_check(&s, "sm_90").unwrap();
    }
}
