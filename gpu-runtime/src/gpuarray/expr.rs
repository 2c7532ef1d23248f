//! [`Expr`]: arithmetic on arrays, built lazily by the `std::ops` operators and evaluated as
//! one generated kernel (`(&a + &b * 3.0).eval()?` runs `out = x0 + x1 * s0` once over the
//! elements, with no temporary arrays).
//!
//! Operators cannot return a `Result`, and a launch can fail (shapes that differ, memory, a
//! context lost), so the operators only build an expression; [`Expr::eval`] and the methods of
//! `expr_ops.rs` run it and return the error. The kernel's text depends on the expression's
//! structure and element type only: scalars are kernel arguments, not literals, so `&a * 2.0`
//! and `&a * 3.0` share one kernel. Each structure's [`ElementwiseKernel`] is defined once per
//! process here, and compiled once per context and layout variant by the elementwise cache.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use gpu_cdecl::Scalar;
use ndarray::{Dimension, IxDyn, ShapeBuilder};

use crate::driver::stream::Stream;
use crate::error::{ArgumentError, Result};
use crate::gpuarray::array::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::element::Element;
use crate::gpuarray::elementwise::ElementwiseKernel;
use crate::gpuarray::kernel_args::{ArgKind, KernelArg};
use crate::gpuarray::layout;

/// The most arrays, and the most scalars, one expression may read (each is a kernel
/// parameter; larger expressions are refused with an error when evaluated).
pub const MAX_OPERANDS: usize = 32;

/// A binary operator of an [`Expr`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (for integers, C's division: truncated; a division by zero gives an unspecified
    /// value, it does not trap).
    Div,
}

impl BinOp {
    fn c(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
        }
    }
}

/// The shape of an expression; leaves are numbered by their order, left to right.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Node {
    Array,
    Scalar,
    Neg(Box<Node>),
    Bin(BinOp, Box<Node>, Box<Node>),
}

impl Node {
    /// The C expression, leaves named `x0, x1, ...` (arrays) and `s0, s1, ...` (scalars),
    /// every operation converted back to `t` (C promotes narrow integers to `int`; the result
    /// wraps as Rust's wrapping operations do).
    fn render(&self, t: &str, out: &mut String, counts: &mut (usize, usize)) {
        match self {
            Node::Array => {
                let _ = write!(out, "x{}", counts.0);
                counts.0 += 1;
            }
            Node::Scalar => {
                let _ = write!(out, "s{}", counts.1);
                counts.1 += 1;
            }
            Node::Neg(x) => {
                let _ = write!(out, "(({t})-");
                x.render(t, out, counts);
                out.push(')');
            }
            Node::Bin(op, l, r) => {
                let _ = write!(out, "(({t})(");
                l.render(t, out, counts);
                let _ = write!(out, " {} ", op.c());
                r.render(t, out, counts);
                out.push_str("))");
            }
        }
    }

    fn leaves(&self) -> (usize, usize) {
        match self {
            Node::Array => (1, 0),
            Node::Scalar => (0, 1),
            Node::Neg(x) => x.leaves(),
            Node::Bin(_, l, r) => {
                let (a, b) = (l.leaves(), r.leaves());
                (a.0 + b.0, a.1 + b.1)
            }
        }
    }
}

/// An arithmetic expression on arrays of `T` (and scalars of `T`), not yet computed: what the
/// operators `+ - * /` and unary `-` on `&DeviceArrayBase`, [`Expr`] and scalars return.
/// [`eval`](Self::eval) runs the whole expression as one kernel.
///
/// ```no_run
/// use gpu_runtime::gpuarray::DeviceArray;
/// use gpu_runtime::{ndarray::Array2, Context};
/// let ctx = Context::default()?;
/// let a = DeviceArray::from_ndarray(&ctx, &Array2::<f32>::ones((3, 4)))?;
/// let b = DeviceArray::from_ndarray(&ctx, &Array2::<f32>::ones((4, 3)))?;
/// // One kernel: out = x0 + x1 * s0, with `b.t()` read through its strides.
/// let c = (&a + &b.t() * 3.0).eval()?;
/// assert_eq!(c.to_ndarray()?[[2, 1]], 4.0);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
///
/// Every array must have the shape of the first (no broadcasting); an empty shape launches
/// nothing. Evaluating borrows nothing beyond what the expression already borrows, and the
/// launch orders each array's use on the stream like any launch of this crate.
#[derive(Debug)]
#[must_use = "an expression computes nothing until it is evaluated"]
pub struct Expr<'a, T: Element> {
    pub(crate) node: Node,
    pub(crate) arrays: Vec<KernelArg<'a>>,
    pub(crate) scalars: Vec<T>,
}

/// What an operator of [`Expr`] takes: an array (`&DeviceArrayBase` of `T`), an [`Expr`] of
/// `T`, or a scalar of type `T`.
pub trait Operand<'a, T: Element> {
    /// The operand as an expression.
    fn into_expr(self) -> Expr<'a, T>;
}

impl<'a, T: Element> Operand<'a, T> for Expr<'a, T> {
    fn into_expr(self) -> Expr<'a, T> {
        self
    }
}

impl<'a, S: Storage, D: Dimension> Operand<'a, S::Elem> for &'a DeviceArrayBase<S, D> {
    fn into_expr(self) -> Expr<'a, S::Elem> {
        Expr {
            node: Node::Array,
            arrays: vec![KernelArg::input(self)],
            scalars: Vec::new(),
        }
    }
}

macro_rules! scalar_operand {
    ($($t:ty),*) => {$(
        impl<'a> Operand<'a, $t> for $t {
            fn into_expr(self) -> Expr<'a, $t> {
                Expr { node: Node::Scalar, arrays: Vec::new(), scalars: vec![self] }
            }
        }
    )*};
}
scalar_operand!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);

/// How an expression's result is stored: into a new array (`out = e`), or combined with the
/// array it is stored into (`out = out + e`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Store {
    Assign,
    Compound(BinOp),
}

type Key = (Scalar, Store, Node);
static KERNELS: Mutex<Option<HashMap<Key, Arc<ElementwiseKernel>>>> = Mutex::new(None);

impl<'a, T: Element> Expr<'a, T> {
    /// `self op rhs`.
    pub(crate) fn bin(self, op: BinOp, rhs: Expr<'a, T>) -> Expr<'a, T> {
        let (mut arrays, mut scalars) = (self.arrays, self.scalars);
        arrays.extend(rhs.arrays);
        scalars.extend(rhs.scalars);
        Expr {
            node: Node::Bin(op, Box::new(self.node), Box::new(rhs.node)),
            arrays,
            scalars,
        }
    }

    /// `-self`.
    pub(crate) fn neg(self) -> Expr<'a, T> {
        Expr {
            node: Node::Neg(Box::new(self.node)),
            ..self
        }
    }

    /// The shape every array of the expression has (the first array's; the launch checks
    /// the others), or `None` when there is no array.
    pub fn shape(&self) -> Option<&[usize]> {
        self.arrays.iter().find_map(|a| match &a.0 {
            ArgKind::Array(x) => Some(x.shape()),
            ArgKind::Scalar(..) => None,
        })
    }

    /// The C operation of the kernel, as [`ElementwiseKernel`] takes it (`out` the result,
    /// `x0, x1, ...` the arrays, `s0, s1, ...` the scalars).
    pub fn operation(&self) -> String {
        operation::<T>(&self.node, Store::Assign)
    }

    /// Computes the expression into a new array of its shape (in Fortran order when every
    /// array is Fortran-contiguous and not all are C-contiguous, else in C order), on the
    /// legacy default stream.
    pub fn eval(self) -> Result<DeviceArray<T, IxDyn>> {
        self.eval_stream(None)
    }

    /// [`eval`](Self::eval) on `stream`; returns without waiting.
    pub fn eval_on(self, stream: &Stream) -> Result<DeviceArray<T, IxDyn>> {
        self.eval_stream(Some(stream))
    }

    fn eval_stream(self, stream: Option<&Stream>) -> Result<DeviceArray<T, IxDyn>> {
        let first = self.arrays.iter().find_map(|a| match &a.0 {
            ArgKind::Array(x) => Some((x.ctx.clone(), x.shape().to_vec())),
            ArgKind::Scalar(..) => None,
        });
        let Some((ctx, shape)) = first else {
            return Err(ArgumentError::NoArray {
                kernel: "gpu_expr".into(),
                needs: "an expression",
            }
            .into());
        };
        // The arrays broadcast together (NumPy's rules); the result has their shape.
        let shape = crate::gpuarray::broadcast::shape_of_args(&self.arrays)?.unwrap_or(shape);
        let fortran = self.all_fortran();
        let mut out = if fortran {
            DeviceArray::<T, IxDyn>::empty(&ctx, IxDyn(&shape).f())?
        } else {
            DeviceArray::<T, IxDyn>::empty(&ctx, IxDyn(&shape))?
        };
        self.store(stream, &mut out, Store::Assign)?;
        Ok(out)
    }

    fn all_fortran(&self) -> bool {
        let arrays = || {
            self.arrays.iter().filter_map(|a| match &a.0 {
                ArgKind::Array(x) => Some(x),
                ArgKind::Scalar(..) => None,
            })
        };
        arrays().all(|x| layout::is_f_contiguous(x.shape(), x.strides()))
            && !arrays().all(|x| layout::is_c_contiguous(x.shape(), x.strides()))
    }

    /// Computes the expression into `out` (of the expression's shape, any layout), on `stream`
    /// or (`None`) the legacy default stream.
    pub fn eval_into<S: StorageMut<Elem = T>, D: Dimension>(
        self,
        stream: Option<&Stream>,
        out: &mut DeviceArrayBase<S, D>,
    ) -> Result<()> {
        self.store(stream, out, Store::Assign)
    }

    /// Runs the kernel of this expression with `store` into `out`.
    pub(crate) fn store<S: StorageMut<Elem = T>, D: Dimension>(
        self,
        stream: Option<&Stream>,
        out: &mut DeviceArrayBase<S, D>,
        store: Store,
    ) -> Result<()> {
        let (na, ns) = self.node.leaves();
        if na > MAX_OPERANDS || ns > MAX_OPERANDS {
            return Err(ArgumentError::TooManyOperands {
                kernel: "gpu_expr".into(),
                arrays: na,
                scalars: ns,
                limit: MAX_OPERANDS,
            }
            .into());
        }
        let k = kernel::<T>(&self.node, store)?;
        let mut args = self.arrays;
        args.extend(self.scalars.into_iter().map(KernelArg::scalar));
        args.push(KernelArg::output(out));
        match stream {
            Some(s) => k.launch_on(s, args),
            None => k.launch(args),
        }
    }
}

/// The operation of `node` stored with `store`.
fn operation<T: Element>(node: &Node, store: Store) -> String {
    let t = T::c_name();
    let mut e = String::new();
    node.render(t, &mut e, &mut (0, 0));
    match store {
        Store::Assign => format!("out = {e}"),
        Store::Compound(op) => format!("out = ({t})(out {} {e})", op.c()),
    }
}

/// The kernel of `node` on `T`, stored with `store`: defined once per process.
pub(crate) fn kernel<T: Element>(node: &Node, store: Store) -> Result<Arc<ElementwiseKernel>> {
    let key = (T::SCALAR, store, node.clone());
    let mut map = KERNELS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(k) = map.as_ref().and_then(|m| m.get(&key)) {
        return Ok(k.clone());
    }
    let t = T::c_name();
    let (na, ns) = node.leaves();
    let mut params = String::new();
    for i in 0..na {
        let _ = write!(params, "const {t} *x{i}, ");
    }
    for i in 0..ns {
        let _ = write!(params, "{t} s{i}, ");
    }
    let _ = write!(params, "{t} *out");
    let k = Arc::new(ElementwiseKernel::with_name(
        "gpu_expr",
        &params,
        &operation::<T>(node, store),
    )?);
    map.get_or_insert_with(HashMap::new).insert(key, k.clone());
    Ok(k)
}
