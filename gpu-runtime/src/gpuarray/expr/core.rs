//! [`Expr`]: arithmetic on arrays, built lazily by the `std::ops` operators and evaluated as
//! one generated kernel (`(&a + &b * 3.0).eval()?` runs `out = x0 + x1 * s0` once over the
//! elements, with no temporary arrays).
//!
//! Operators cannot return a `Result`, and a launch can fail (shapes that differ, memory, a
//! context lost), so the operators only build an expression; [`Expr::eval`] and the methods of
//! `ops.rs` run it and return the error. The kernel's text depends on the expression's
//! structure and element type only: scalars are kernel arguments, not literals, so `&a * 2.0`
//! and `&a * 3.0` share one kernel. Each structure's [`ElementwiseKernel`] is defined once per
//! process here, and compiled once per context and layout variant by the elementwise cache.

use std::fmt::Write as _;
use std::marker::PhantomData;
use std::sync::Arc;

use gpu_cuda_source::Scalar;
use ndarray::{Dimension, IxDyn, ShapeBuilder};

use crate::driver::stream::Stream;
use crate::error::{ArgumentError, ArrayShapeError, Error, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::array::layout;
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::cast::{self, sixteen_bit, widen};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::func::{self, Func, HELPERS};
use crate::gpuarray::kernels::args::{ArgKind, ArrayArg, KernelArg};
use crate::gpuarray::kernels::elementwise::ElementwiseKernel;
use crate::gpuarray::kernels::registry::Definitions;
use crate::types::{Complex32, Complex64};

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
    /// `/`: for floats IEEE division; for integers C's truncated division, except NumPy's
    /// rules where C has none: a zero divisor gives 0, and `MIN / -1` wraps to `MIN`.
    Div,
    /// `%`, NumPy's `remainder` (Python's `%`): the result has the sign of the divisor. For
    /// integers a zero divisor gives 0; for floats NaN.
    Rem,
    /// NumPy's `floor_divide` (Python's `//`): the quotient rounded toward minus infinity;
    /// for integers a zero divisor gives 0 and `MIN // -1` wraps.
    FloorDiv,
}

impl BinOp {
    /// The C operator, for the operators C has with NumPy's meaning.
    fn c(self) -> Option<&'static str> {
        match self {
            BinOp::Add => Some("+"),
            BinOp::Sub => Some("-"),
            BinOp::Mul => Some("*"),
            BinOp::Div => Some("/"),
            BinOp::Rem | BinOp::FloorDiv => None,
        }
    }

    /// `l op r` on elements of `t`, converted back to `t` (C promotes narrow integers to
    /// `int`; the result wraps as Rust's wrapping operations do). NumPy's integer division
    /// rules, `%` and `//` call the templates of [`HELPERS`]: floats take their overloads,
    /// integers the template at their own type.
    fn render(self, t: DType, l: &str, r: &str) -> String {
        if let Some(narrow) = sixteen_bit(t) {
            // NumPy computes the 16-bit floats in `float` and rounds the result once: the
            // same here (CUDA's `__half` operators are not defined for `%`, and `gpu_div`'s
            // integer template would take them).
            let f = self.render(DType::F32, &widen(narrow, l), &widen(narrow, r));
            return cast::cast_c(Scalar::F32, narrow, &f);
        }
        let t_c = t.c_name();
        // C's `/` is NumPy's for floats and complex numbers (the header's Smith division).
        let float = matches!(t, DType::F32 | DType::F64) || t.is_complex();
        let helper = |h: &str| {
            if float {
                format!("{h}(({t_c})({l}), ({t_c})({r}))")
            } else {
                format!("{h}<{t_c}>({l}, {r})")
            }
        };
        let infix = |op: &str| format!("(({t_c})({l} {op} {r}))");
        match self {
            BinOp::Add => infix("+"),
            BinOp::Sub => infix("-"),
            BinOp::Mul => infix("*"),
            BinOp::Div if float => infix("/"),
            BinOp::Div => helper("gpu_div"),
            BinOp::Rem => helper("gpu_rem"),
            BinOp::FloorDiv => helper("gpu_floordiv"),
        }
    }

    /// The operator's name and `t` where it is not defined on elements of `t`: `%` and `//`
    /// on complex numbers.
    fn undefined_on(self, t: DType) -> Option<(String, DType)> {
        (matches!(self, BinOp::Rem | BinOp::FloorDiv) && t.is_complex()).then(|| (format!("{self:?}"), t))
    }

    /// Whether `self` on elements of `t` calls a template of [`HELPERS`].
    fn needs_helpers(self, t: DType) -> bool {
        let t = if sixteen_bit(t).is_some() { DType::F32 } else { t };
        match self {
            BinOp::Div => !(matches!(t, DType::F32 | DType::F64) || t.is_complex()),
            BinOp::Rem | BinOp::FloorDiv => true,
            _ => false,
        }
    }
}

/// The shape of an expression; leaves are numbered by their order, left to right. The leaves
/// of an expression of one element type are `Array` and `Scalar` (the kernel's type, so that
/// such expressions keep their one text and key); under a function call, whose result may be
/// of another type, every leaf names its type (`ArrayOf`, `ScalarOf`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Node {
    /// An array of the kernel's element type.
    Array,
    /// A scalar of the kernel's element type.
    Scalar,
    /// An array of the given element type.
    ArrayOf(DType),
    /// A scalar of the given type.
    ScalarOf(DType),
    Neg(Box<Node>),
    Bin(BinOp, Box<Node>, Box<Node>),
    /// A function of the children, in order.
    Call(Func, Vec<Node>),
}

impl Node {
    /// The node with its leaves of the kernel's element type given as `default`: to move it
    /// under a function whose result may be of another type.
    fn resolved(self, default: DType) -> Node {
        match self {
            Node::Array => Node::ArrayOf(default),
            Node::Scalar => Node::ScalarOf(default),
            Node::ArrayOf(_) | Node::ScalarOf(_) | Node::Call(..) => self,
            Node::Neg(x) => Node::Neg(Box::new(x.resolved(default))),
            Node::Bin(op, l, r) => {
                Node::Bin(op, Box::new(l.resolved(default)), Box::new(r.resolved(default)))
            }
        }
    }

    /// The element type of the node's value in a kernel whose element type is `default`.
    pub(crate) fn ty(&self, default: DType) -> DType {
        match self {
            Node::Array | Node::Scalar => default,
            Node::ArrayOf(s) | Node::ScalarOf(s) => *s,
            Node::Neg(x) => x.ty(default),
            Node::Bin(_, l, _) => l.ty(default),
            Node::Call(f, args) => {
                let types: Vec<DType> = args.iter().map(|a| a.ty(default)).collect();
                func::result_type(*f, &types).unwrap_or(default)
            }
        }
    }

    /// The first function (or operator) of the tree not defined on its operands' types, with
    /// the type of its first operand: `%` and `//` on complex numbers, and the functions
    /// without a result type (see [`func::result_type`]).
    fn undefined_call(&self, default: DType) -> Option<(String, DType)> {
        match self {
            Node::Array | Node::Scalar | Node::ArrayOf(_) | Node::ScalarOf(_) => None,
            Node::Neg(x) => x.undefined_call(default),
            Node::Bin(op, l, r) => op
                .undefined_on(l.ty(default))
                .or_else(|| l.undefined_call(default))
                .or_else(|| r.undefined_call(default)),
            Node::Call(f, args) => {
                let types: Vec<DType> = args.iter().map(|a| a.ty(default)).collect();
                match func::result_type(*f, &types) {
                    None => Some((format!("{f:?}"), types.first().copied().unwrap_or(default))),
                    Some(_) => args.iter().find_map(|a| a.undefined_call(default)),
                }
            }
        }
    }

    /// Whether the rendered expression calls a template of [`HELPERS`].
    fn needs_helpers(&self, default: DType) -> bool {
        match self {
            Node::Array | Node::Scalar | Node::ArrayOf(_) | Node::ScalarOf(_) => false,
            Node::Neg(x) => x.needs_helpers(default),
            Node::Bin(op, l, r) => {
                op.needs_helpers(l.ty(default)) || l.needs_helpers(default) || r.needs_helpers(default)
            }
            Node::Call(f, args) => func::needs_helpers(*f) || args.iter().any(|a| a.needs_helpers(default)),
        }
    }

    /// The C expression, leaves named `x0, x1, ...` (arrays) and `s0, s1, ...` (scalars),
    /// every operation converted back to its type.
    fn render(&self, default: DType, out: &mut String, counts: &mut (usize, usize)) {
        match self {
            Node::Array | Node::ArrayOf(_) => {
                let _ = write!(out, "x{}", counts.0);
                counts.0 += 1;
            }
            Node::Scalar | Node::ScalarOf(_) => {
                let _ = write!(out, "s{}", counts.1);
                counts.1 += 1;
            }
            Node::Neg(x) => {
                let t = x.ty(default);
                let mut xs = String::new();
                x.render(default, &mut xs, counts);
                match sixteen_bit(t) {
                    // Exact in `float`; the 16-bit types' own operators are not all there is
                    // to pick from on every architecture.
                    Some(narrow) => out.push_str(&cast::cast_c(
                        Scalar::F32,
                        narrow,
                        &format!("(-{})", widen(narrow, &xs)),
                    )),
                    None => {
                        let _ = write!(out, "(({})-{xs})", t.c_name());
                    }
                }
            }
            Node::Bin(op, l, r) => {
                let (mut ls, mut rs) = (String::new(), String::new());
                l.render(default, &mut ls, counts);
                r.render(default, &mut rs, counts);
                out.push_str(&op.render(l.ty(default), &ls, &rs));
            }
            Node::Call(f, args) => {
                let types: Vec<DType> = args.iter().map(|a| a.ty(default)).collect();
                let rendered: Vec<String> = args
                    .iter()
                    .map(|a| {
                        let mut s = String::new();
                        a.render(default, &mut s, counts);
                        s
                    })
                    .collect();
                out.push_str(&func::render(*f, self.ty(default), &types, &rendered));
            }
        }
    }

    /// The types of the array leaves and of the scalar leaves, in order.
    fn leaf_types(&self, default: DType, arrays: &mut Vec<DType>, scalars: &mut Vec<DType>) {
        match self {
            Node::Array => arrays.push(default),
            Node::ArrayOf(s) => arrays.push(*s),
            Node::Scalar => scalars.push(default),
            Node::ScalarOf(s) => scalars.push(*s),
            Node::Neg(x) => x.leaf_types(default, arrays, scalars),
            Node::Bin(_, l, r) => {
                l.leaf_types(default, arrays, scalars);
                r.leaf_types(default, arrays, scalars);
            }
            Node::Call(_, args) => {
                for a in args {
                    a.leaf_types(default, arrays, scalars);
                }
            }
        }
    }

    fn leaves(&self) -> (usize, usize) {
        let (mut a, mut s) = (Vec::new(), Vec::new());
        self.leaf_types(DType::F32, &mut a, &mut s);
        (a.len(), s.len())
    }
}

/// An expression giving elements of `T`, not yet computed: what the operators `+ - * / %`
/// and unary `-` on `&DeviceArrayBase`, [`Expr`] and scalars return, and what the math
/// functions, comparisons and logic of [`math`](crate::gpuarray::math) build on (their
/// operands may be of other element types: a comparison of `f32` arrays is an `Expr<Bool>`).
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
/// The arrays broadcast together by NumPy's rules (`eval` makes an array of their shape;
/// `eval_into` takes one they broadcast to); an empty shape launches nothing. Evaluating borrows nothing beyond what the expression already borrows, and the
/// launch orders each array's use on the stream like any launch of this crate.
#[derive(Debug)]
#[must_use = "an expression computes nothing until it is evaluated"]
pub struct Expr<'a, T: Element> {
    pub(crate) node: Node,
    pub(crate) arrays: Vec<KernelArg<'a>>,
    /// The scalar leaves' values, in order, each of its own type (a comparison's operands need
    /// not be of the result's type).
    pub(crate) scalars: Vec<KernelArg<'a>>,
    pub(crate) elem: PhantomData<T>,
}

/// What an operator of [`Expr`] takes: an array (`&DeviceArrayBase` of `T`), an [`Expr`] of
/// `T`, or a scalar of type `T`.
pub trait Operand<'a, T: Element> {
    /// The dimension type of a function's result of this operand alone: an array's own (so
    /// that `a = sin(&a)?` type-checks for a 1-d `a`), `IxDyn` for an expression or a scalar.
    type Dim: Dimension;

    /// The operand as an expression.
    fn into_expr(self) -> Expr<'a, T>;
}

impl<'a, T: Element> Operand<'a, T> for Expr<'a, T> {
    type Dim = IxDyn;
    fn into_expr(self) -> Expr<'a, T> {
        self
    }
}

impl<'a, S: Storage<Elem: Element>, D: Dimension> Operand<'a, S::Elem> for &'a DeviceArrayBase<S, D> {
    type Dim = D;
    fn into_expr(self) -> Expr<'a, S::Elem> {
        Expr::new(Node::Array, vec![KernelArg::input(self)], Vec::new())
    }
}

macro_rules! scalar_operand {
    ($($t:ty),*) => {$(
        impl<'a> Operand<'a, $t> for $t {
            type Dim = IxDyn;
            fn into_expr(self) -> Expr<'a, $t> {
                Expr::scalar(self)
            }
        }
    )*};
}
scalar_operand!(
    i8,
    u8,
    i16,
    u16,
    i32,
    u32,
    i64,
    u64,
    half::f16,
    half::bf16,
    f32,
    f64,
    Bool,
    Complex32,
    Complex64
);

impl<'a> Operand<'a, Bool> for bool {
    type Dim = IxDyn;
    fn into_expr(self) -> Expr<'a, Bool> {
        Expr::scalar(Bool::from(self))
    }
}

/// Steps of an expression that are one [`Func`] of `self` and the operands, in order:
/// `name(operand: its element type, ...) -> result type = function;`, each with its own docs
/// (the bounds of the `impl` they are written in make the function defined).
macro_rules! call_steps {
    ($($(#[$doc:meta])* $name:ident $(<$g:ident: $gb:path>)? ($($arg:ident: $t:ty),*) -> $out:ty = $f:expr;)*) => {$(
        $(#[$doc])*
        pub fn $name $(<$g: $gb>)? (self $(, $arg: impl Operand<'a, $t>)*) -> Expr<'a, $out> {
            Expr::call($f, vec![self.untyped() $(, $arg.into_expr().untyped())*])
        }
    )*};
}
pub(crate) use call_steps;

/// Free functions over operands (each an array, an [`Expr`] or a scalar: an [`Operand`] of the
/// element type written after its name), each with its own docs: `name[generics](x: T, ...)
/// -> R = body;` returns the body's new array of `R` (`Result<DeviceArray<R, IxDyn>>`), and
/// `name[generics](x: T, ...; out: R) = body;` stores into `out`, any array of `R`.
macro_rules! operand_fns {
    () => {};
    (
        $(#[$doc:meta])* $name:ident[$($g:tt)*]($($x:ident: $t:ty),*) -> $out:ty = $body:expr;
        $($rest:tt)*
    ) => {
        $(#[$doc])*
        pub fn $name<'a, $($g)*>($($x: impl Operand<'a, $t>),*) -> Result<DeviceArray<$out, IxDyn>> {
            $body
        }
        $crate::gpuarray::expr::core::operand_fns! { $($rest)* }
    };
    (
        $(#[$doc:meta])* $name:ident[$($g:tt)*]($($x:ident: $t:ty),*; $o:ident: $out:ty) = $body:expr;
        $($rest:tt)*
    ) => {
        $(#[$doc])*
        pub fn $name<'a, $($g)*, S: StorageMut<Elem = $out>, D: Dimension>(
            $($x: impl Operand<'a, $t>,)*
            $o: &mut DeviceArrayBase<S, D>,
        ) -> Result<()> {
            $body
        }
        $crate::gpuarray::expr::core::operand_fns! { $($rest)* }
    };
}
pub(crate) use operand_fns;

/// How an expression's result is stored: into a new array (`out = e`), or combined with the
/// array it is stored into (`out = out + e`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Store {
    Assign,
    Compound(BinOp),
    /// `out = (T)((W)out op e)`: an in-place operator computed in the promoted type `W` of the
    /// array's and the operand's (`e` is of `W`).
    CompoundIn(BinOp, DType),
}

impl Store {
    /// The operator a compound store applies, with the type it computes in, for a kernel of
    /// elements `t`.
    fn op(self, t: DType) -> Option<(BinOp, DType)> {
        match self {
            Store::Assign => None,
            Store::Compound(op) => Some((op, t)),
            Store::CompoundIn(op, w) => Some((op, w)),
        }
    }
}

/// The kernel's element type (of `out`, and of the untyped leaves), how it stores, and the
/// expression with the types of its leaves.
type Key = (DType, Store, Node);
static KERNELS: Definitions<Key, Arc<ElementwiseKernel>> = Definitions::new();

/// An expression of any element type, as a node and its leaves' arguments: what functions
/// of operands of different types combine.
#[derive(Debug)]
pub(crate) struct Untyped<'a> {
    node: Node,
    arrays: Vec<KernelArg<'a>>,
    scalars: Vec<KernelArg<'a>>,
}

impl<'a, T: Element> Expr<'a, T> {
    /// The expression of `node` over its leaves' arguments, in order.
    fn new(node: Node, arrays: Vec<KernelArg<'a>>, scalars: Vec<KernelArg<'a>>) -> Expr<'a, T> {
        Expr {
            node,
            arrays,
            scalars,
            elem: PhantomData,
        }
    }

    /// A scalar leaf.
    pub(crate) fn scalar(value: T) -> Expr<'a, T> {
        Expr::new(Node::Scalar, Vec::new(), vec![KernelArg::scalar(value)])
    }

    /// The expression without its element type, to combine with others: its leaves of the
    /// expression's type (`Array`, `Scalar`) now name that type.
    pub(crate) fn untyped(self) -> Untyped<'a> {
        Untyped {
            node: self.node.resolved(T::DTYPE),
            arrays: self.arrays,
            scalars: self.scalars,
        }
    }

    /// The expression converted to `U` (no conversion when it is of `U`), without its type:
    /// an operand of a function computed in `U`.
    pub(crate) fn promoted<U: Element>(self) -> Untyped<'a> {
        if T::DTYPE == U::DTYPE {
            self.untyped()
        } else {
            self.cast::<U>().untyped()
        }
    }

    /// An expression of `T` from one whose every leaf names its type (an [`Untyped`] made
    /// by [`untyped`](Self::untyped) of an expression whose value is of `T`).
    pub(crate) fn from_untyped(u: Untyped<'a>) -> Expr<'a, T> {
        Expr::new(u.node, u.arrays, u.scalars)
    }

    /// `func` of `args`, in order: an expression of `T`, which the caller's types say is the
    /// function's result type.
    pub(crate) fn call(func: Func, args: Vec<Untyped<'a>>) -> Expr<'a, T> {
        let (mut arrays, mut scalars, mut nodes) = (Vec::new(), Vec::new(), Vec::new());
        for a in args {
            arrays.extend(a.arrays);
            scalars.extend(a.scalars);
            nodes.push(a.node);
        }
        Expr::new(Node::Call(func, nodes), arrays, scalars)
    }

    /// `self op rhs`.
    pub(crate) fn bin(self, op: BinOp, rhs: Expr<'a, T>) -> Expr<'a, T> {
        let (mut arrays, mut scalars) = (self.arrays, self.scalars);
        arrays.extend(rhs.arrays);
        scalars.extend(rhs.scalars);
        Expr::new(
            Node::Bin(op, Box::new(self.node), Box::new(rhs.node)),
            arrays,
            scalars,
        )
    }

    /// `-self`.
    pub(crate) fn neg(self) -> Expr<'a, T> {
        Expr {
            node: Node::Neg(Box::new(self.node)),
            ..self
        }
    }

    /// Each element converted to `U` as C converts it (to [`Bool`]: nonzero is true), inside
    /// the expression's one kernel (NumPy's `astype` on an expression).
    pub fn cast<U: Element>(self) -> Expr<'a, U> {
        Expr::call(Func::Cast(U::DTYPE), vec![self.untyped()])
    }

    /// The shape every array of the expression has (the first array's; the launch checks
    /// the others), or `None` when there is no array.
    pub fn shape(&self) -> Option<&[usize]> {
        self.array_leaves().next().map(ArrayArg::shape)
    }

    /// The array leaves' arguments, in order.
    fn array_leaves(&self) -> impl Iterator<Item = &ArrayArg<'a>> {
        self.arrays.iter().filter_map(|a| match &a.0 {
            ArgKind::Array(x) => Some(x),
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

    /// This expression evaluated on `stream`: `expr.on(&stream).eval()` (or
    /// `.eval_into(&mut out)`) returns without waiting. See [`OnStream`].
    pub fn on(self, stream: &Stream) -> OnStream<'_, Self> {
        OnStream::new(self, Some(stream))
    }

    /// [`eval`](Self::eval) on `stream` (`None`: the legacy default stream): how the crate's
    /// operations that take a stream or none evaluate their expressions.
    pub(crate) fn eval_stream(self, stream: Option<&Stream>) -> Result<DeviceArray<T, IxDyn>> {
        let first = self
            .array_leaves()
            .next()
            .map(|x| (x.ctx.clone(), x.shape().to_vec()));
        let Some((ctx, shape)) = first else {
            return Err(ArgumentError::NoArray {
                kernel: "gpu_expr".into(),
                needs: "an expression",
            }
            .into());
        };
        // The arrays broadcast together (NumPy's rules); the result has their shape.
        let shape = crate::gpuarray::kernels::broadcast::shape_of_args(&self.arrays)?.unwrap_or(shape);
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
        self.array_leaves()
            .all(|x| layout::is_f_contiguous(x.shape(), x.strides()))
            && !self
                .array_leaves()
                .all(|x| layout::is_c_contiguous(x.shape(), x.strides()))
    }

    /// Computes the expression into `out` (of the expression's shape, any layout), on the
    /// legacy default stream.
    pub fn eval_into<S: StorageMut<Elem = T>, D: Dimension>(
        self,
        out: &mut DeviceArrayBase<S, D>,
    ) -> Result<()> {
        self.store(None, out, Store::Assign)
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
        args.extend(self.scalars);
        args.push(KernelArg::output(out));
        OnStream::new(&*k, stream).launch(args)
    }
}

impl<'a, T: Element> OnStream<'_, Expr<'a, T>> {
    /// [`eval`](Expr::eval) on this stream; returns without waiting.
    pub fn eval(self) -> Result<DeviceArray<T, IxDyn>> {
        self.target.eval_stream(self.stream)
    }

    /// [`eval_into`](Expr::eval_into) on this stream; returns without waiting.
    pub fn eval_into<S: StorageMut<Elem = T>, D: Dimension>(
        self,
        out: &mut DeviceArrayBase<S, D>,
    ) -> Result<()> {
        self.target.store(self.stream, out, Store::Assign)
    }
}

/// The operation of `node` stored with `store`.
fn operation<T: Element>(node: &Node, store: Store) -> String {
    let mut e = String::new();
    node.render(T::DTYPE, &mut e, &mut (0, 0));
    match store {
        Store::Assign => format!("out = {e}"),
        Store::Compound(op) => match op.c() {
            Some(c) if !op.needs_helpers(T::DTYPE) && sixteen_bit(T::DTYPE).is_none() => {
                format!("out = ({})(out {c} {e})", T::c_name())
            }
            _ => format!("out = {}", op.render(T::DTYPE, "out", &e)),
        },
        Store::CompoundIn(op, w) => {
            let r = op.render(w, &cast::convert_c(T::DTYPE, w, "out"), &e);
            format!("out = {}", cast::convert_c(w, T::DTYPE, &r))
        }
    }
}

/// The kernel of `node` on `T`, stored with `store`: defined once per process.
pub(crate) fn kernel<T: Element>(node: &Node, store: Store) -> Result<Arc<ElementwiseKernel>> {
    let key = (T::DTYPE, store, node.clone());
    KERNELS.get_or_try_insert_with(key, || define::<T>(node, store).map(Arc::new))
}

/// The kernel of `node` on `T`, stored with `store`, written anew.
fn define<T: Element>(node: &Node, store: Store) -> Result<ElementwiseKernel> {
    let stored = store.op(T::DTYPE);
    let undefined = node
        .undefined_call(T::DTYPE)
        .or_else(|| stored.and_then(|(op, w)| op.undefined_on(w)));
    if let Some((func, dtype)) = undefined {
        // The typed constructors of `Expr` build only defined calls on real types; on the
        // complex types, the functions of every element type that need an order are refused
        // here.
        return Err(match dtype.scalar() {
            Some(scalar) => ArgumentError::NotAnElementType {
                kernel: "gpu_expr".into(),
                parameter: func.into(),
                scalar,
            }
            .into(),
            None => undefined_error("gpu_expr", &func, dtype.c_name()),
        });
    }
    let t = T::c_name();
    let (mut arrays, mut scalars) = (Vec::new(), Vec::new());
    node.leaf_types(T::DTYPE, &mut arrays, &mut scalars);
    let mut params = String::new();
    for (i, a) in arrays.iter().enumerate() {
        let _ = write!(params, "const {} *x{i}, ", a.c_name());
    }
    for (i, s) in scalars.iter().enumerate() {
        let _ = write!(params, "{} s{i}, ", s.c_name());
    }
    let _ = write!(params, "{t} *out");
    let mut k = ElementwiseKernel::with_name("gpu_expr", &params, &operation::<T>(node, store))?;
    if node.needs_helpers(T::DTYPE) || stored.is_some_and(|(op, w)| op.needs_helpers(w)) {
        k = k.preamble(HELPERS);
    }
    Ok(k)
}

/// [`ArrayShapeError::EmptyOperand`]: `operation` refuses its empty `operand`.
pub(crate) fn empty_error(operation: &'static str, operand: &'static str) -> Error {
    ArrayShapeError::EmptyOperand { operation, operand }.into()
}

/// [`ArrayShapeError::Dimension`]: an array of `axes` axes where `fixed` are taken.
pub(crate) fn dimension_error(axes: usize, fixed: usize) -> Error {
    ArrayShapeError::Dimension { axes, fixed }.into()
}

/// [`ArgumentError::UndefinedOnElement`]: `function` of `kernel` on elements of the C type
/// `element`.
pub(crate) fn undefined_error(kernel: &str, function: &str, element: &'static str) -> Error {
    ArgumentError::UndefinedOnElement {
        kernel: kernel.into(),
        function: function.into(),
        element,
    }
    .into()
}

/// The source of the kernel of `e` (contiguous variant), for `crate::testing`.
pub(crate) fn test_source<T: Element>(e: &Expr<'_, T>) -> Result<String> {
    Ok(kernel::<T>(&e.node, Store::Assign)?
        .source(crate::gpuarray::kernels::elementwise::Variant::Contiguous))
}
