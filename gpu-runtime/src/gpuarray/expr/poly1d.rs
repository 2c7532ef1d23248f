//! [`Poly1d`]: NumPy's (and CuPy's) `poly1d`, a polynomial held as its device array of
//! coefficients, highest power first, without leading zeros; its arithmetic, evaluation and
//! roots are the routines of `polynomial`.

use std::ops::{Add, Mul, Neg, Sub};

use ndarray::{Dimension, Ix1};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::promotion::TrueDivide;
use crate::gpuarray::expr::polynomial::{poly, polyadd, polymul, polysub, polyval, roots};
use crate::types::Complex64;

/// A polynomial of one variable (NumPy's and CuPy's `poly1d`): its coefficients on the
/// device, highest power first, leading zeros dropped (only zeros: `[0]`), and the name of
/// its variable (which, as NumPy's, the results of arithmetic do not keep: theirs is `x`).
/// Each operation queues its kernels on the legacy default stream; the stream
/// forms are those of the routines on [`coeffs`](Self::coeffs)
/// (`gpuarray::on(&stream).polyval(p.coeffs(), &x)`).
///
/// ```no_run
/// use gpu_runtime::gpuarray::{DeviceArray, Poly1d};
/// use gpu_runtime::ndarray::arr1;
/// let ctx = gpu_runtime::Context::default()?;
/// let p = Poly1d::new(&DeviceArray::from_ndarray(&ctx, &arr1(&[0.0f64, 1.0, -3.0, 2.0]))?)?;
/// assert_eq!(p.order(), 2); // x^2 - 3x + 2
/// let q = (&p * &p)?;
/// assert_eq!(q.coeffs().to_vec()?, [1.0, -6.0, 13.0, -12.0, 4.0]);
/// let x = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0f64, 3.0]))?;
/// assert_eq!(p.eval(&x)?.to_vec()?, [2.0, 2.0]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
#[derive(Debug)]
pub struct Poly1d<T: Element> {
    coeffs: DeviceArray<T, Ix1>,
    variable: String,
}

impl<T: Element> Poly1d<T> {
    /// The polynomial of coefficients `c`, highest power first (NumPy's `poly1d(c)`), copied
    /// without its leading zeros; no coefficients or only zeros are the polynomial `[0]`.
    /// Its variable is `x`. Waits for the index of the first nonzero coefficient
    /// ([`trim_zeros`](DeviceArrayBase::trim_zeros)).
    pub fn new<S: Storage<Elem = T>>(c: &DeviceArrayBase<S, Ix1>) -> Result<Self> {
        let trimmed = c.trim_zeros(true, false)?;
        let coeffs = if trimmed.is_empty() {
            DeviceArray::zeros(c.context(), 1)?
        } else {
            trimmed.to_contiguous()?
        };
        Ok(Poly1d {
            coeffs,
            variable: "x".to_owned(),
        })
    }

    /// The same polynomial with its variable named `name` (NumPy's `variable=`; it names
    /// the variable in NumPy's printed form only).
    pub fn with_variable(mut self, name: &str) -> Self {
        name.clone_into(&mut self.variable);
        self
    }

    /// The name of the variable (`x` unless [`with_variable`](Self::with_variable) named
    /// another).
    pub fn variable(&self) -> &str {
        &self.variable
    }

    /// The coefficients, highest power first (NumPy's `coeffs`, `c`, `coef`).
    pub fn coeffs(&self) -> &DeviceArray<T, Ix1> {
        &self.coeffs
    }

    /// The coefficients, giving up the polynomial.
    pub fn into_coeffs(self) -> DeviceArray<T, Ix1> {
        self.coeffs
    }

    /// The degree (NumPy's `order`, `o`): one less than the count of coefficients.
    pub fn order(&self) -> usize {
        self.coeffs.len() - 1
    }

    /// The values at each element of `x` (NumPy's `p(x)`): [`polyval`].
    pub fn eval<S: Storage<Elem = T>, D: Dimension>(
        &self,
        x: &DeviceArrayBase<S, D>,
    ) -> Result<DeviceArray<T, D>> {
        polyval(&self.coeffs, x)
    }

    /// The roots (NumPy's `roots`, `r`): [`roots`](crate::gpuarray::roots).
    pub fn roots(&self) -> Result<DeviceArray<Complex64, Ix1>> {
        roots(&self.coeffs)
    }

    /// The coefficient of `x^power` (NumPy's `p[power]`): zero above the order. Waits for it.
    pub fn coefficient(&self, power: usize) -> Result<T> {
        match self.order().checked_sub(power) {
            Some(at) => Ok(self.coeffs.view().slice_move(ndarray::s![at..=at])?.to_vec()?[0]),
            None => Ok(T::zero()),
        }
    }

    /// Sets the coefficient of `x^power` (NumPy's `p[power] = value`): above the order, the
    /// coefficients grow by leading zeros up to it first. As NumPy, a leading coefficient set
    /// to zero stays (the order does not drop).
    pub fn set_coefficient(&mut self, power: usize, value: T) -> Result<()> {
        let order = self.order();
        if power > order {
            let len = power.checked_add(1).ok_or(ArrayShapeError::ElementsOverflow {
                operation: "Poly1d::set_coefficient",
                shape: vec![power],
            })?;
            let ctx = self.coeffs.context().clone();
            let mut grown = DeviceArray::<T, Ix1>::zeros(&ctx, len)?;
            grown
                .view_mut()
                .slice_move(ndarray::s![power - order..])?
                .assign(&self.coeffs)?;
            self.coeffs = grown;
        }
        let at = self.order() - power;
        self.coeffs
            .view_mut()
            .slice_move(ndarray::s![at..=at])?
            .fill(value)
    }

    /// The polynomial to the power `n` (NumPy's `p ** n`): `n` products, `[1]` for 0.
    pub fn pow(&self, n: u32) -> Result<Self> {
        let one = DeviceArray::<T, Ix1>::ones(self.coeffs.context(), 1)?;
        let mut result = Poly1d {
            coeffs: one,
            variable: "x".to_owned(),
        };
        for _ in 0..n {
            result = (&result * self)?;
        }
        Ok(result)
    }

    /// Whether two polynomials have the same coefficients (NumPy's `p == q`). Waits for them.
    pub fn equals(&self, other: &Poly1d<T>) -> Result<bool> {
        if self.coeffs.len() != other.coeffs.len() {
            return Ok(false);
        }
        Ok(self.coeffs.to_vec()? == other.coeffs.to_vec()?)
    }
}

impl<Q: Element> Poly1d<Q> {
    /// The polynomial whose roots are the elements of `r`, leading coefficient 1 (NumPy's
    /// `poly1d(r, r=True)`), of NumPy's type for it (`f64` for integers):
    /// [`poly`](crate::gpuarray::poly).
    pub fn from_roots<T, S>(r: &DeviceArrayBase<S, Ix1>) -> Result<Self>
    where
        T: TrueDivide<Quotient = Q>,
        S: Storage<Elem = T>,
    {
        Poly1d::new(&poly(r)?)
    }
}

/// The operators of two polynomials: `Trait method function;`, the function of the two
/// coefficient arrays as a new [`Poly1d`].
macro_rules! poly_ops {
    ($($(#[$doc:meta])* $tr:ident $m:ident $f:ident;)*) => {$(
        $(#[$doc])*
        impl<T: Element> $tr for &Poly1d<T> {
            type Output = Result<Poly1d<T>>;

            fn $m(self, rhs: &Poly1d<T>) -> Result<Poly1d<T>> {
                Poly1d::new(&$f(&self.coeffs, &rhs.coeffs)?)
            }
        }
    )*};
}

poly_ops! {
    /// `&p + &q`: the sum (NumPy's `p + q`), leading zeros dropped.
    Add add polyadd;
    /// `&p - &q`: the difference (NumPy's `p - q`), leading zeros dropped; `bool` coefficients
    /// are refused, as [`polysub`] refuses them.
    Sub sub polysub;
    /// `&p * &q`: the product (NumPy's `p * q`).
    Mul mul polymul;
}

/// `-&p`: the negated polynomial (NumPy's `-p`); `bool` coefficients are refused.
impl<T: Element> Neg for &Poly1d<T> {
    type Output = Result<Poly1d<T>>;

    fn neg(self) -> Result<Poly1d<T>> {
        let zero = DeviceArray::<T, Ix1>::zeros(self.coeffs.context(), 1)?;
        Poly1d::new(&polysub(&zero, &self.coeffs)?)
    }
}
