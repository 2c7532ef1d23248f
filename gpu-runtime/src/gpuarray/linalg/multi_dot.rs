//! NumPy's `linalg.multi_dot`: a chain of matrix products in the order that multiplies the
//! fewest scalars, chosen on the host by NumPy's dynamic programming over the shapes
//! (`_multi_dot_matrix_chain_order`, Cormen's matrix-chain order), each product one `einsum`
//! kernel.

use ndarray::{Dimension, IxDyn};

use crate::driver::context::core::Context;
use crate::error::{ArrayShapeError, LinAlgError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::element::Element;

/// The matrix product of two matrices.
const PRODUCT: &str = "ij,jk->ik";

const OP: &str = "multi_dot";

/// The chain `A_0 ... A_{n-1}` of `multi_dot` read from the operands' shapes: `dims[i]` and
/// `dims[i + 1]` are the rows and columns of `A_i` (a 1-d first operand a row, a 1-d last one a
/// column), and which ends were vectors (dropped from the result's shape).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Chain {
    dims: Vec<usize>,
    first_vector: bool,
    last_vector: bool,
}

impl Chain {
    /// The chain of `shapes`: at least two; each 2-d, the first and the last also 1-d; each
    /// matrix's columns the next one's rows.
    fn of(shapes: &[&[usize]]) -> Result<Chain> {
        let n = shapes.len();
        if n < 2 {
            return Err(ArrayShapeError::TooFewArrays {
                operation: OP,
                given: n,
                least: 2,
            }
            .into());
        }
        let mut rows_cols = Vec::with_capacity(n);
        for (i, shape) in shapes.iter().enumerate() {
            let end = i == 0 || i == n - 1;
            let rc = match shape.len() {
                2 => (shape[0], shape[1]),
                1 if end && i == 0 => (1, shape[0]),
                1 if end => (shape[0], 1),
                axes if axes > 2 => {
                    return Err(ArrayShapeError::TooManyAxes {
                        operation: OP,
                        axes,
                        most: 2,
                    }
                    .into())
                }
                axes => return Err(LinAlgError::TooFewAxes { operation: OP, axes }.into()),
            };
            rows_cols.push(rc);
        }
        for (i, pair) in rows_cols.windows(2).enumerate() {
            if pair[0].1 != pair[1].0 {
                return Err(ArrayShapeError::Einsum {
                    subscripts: format!("multi_dot of {n} arrays"),
                    problem: format!(
                        "array {i} of shape {:?} has {} columns but array {} of shape {:?} has {} rows",
                        shapes[i],
                        pair[0].1,
                        i + 1,
                        shapes[i + 1],
                        pair[1].0
                    ),
                }
                .into());
            }
        }
        let mut dims: Vec<usize> = rows_cols.iter().map(|&(r, _)| r).collect();
        dims.push(rows_cols[n - 1].1);
        Ok(Chain {
            dims,
            first_vector: shapes[0].len() == 1,
            last_vector: shapes[n - 1].len() == 1,
        })
    }

    /// The result's shape, as NumPy's: `(rows, cols)`, without the axis of a vector end.
    fn result_shape(&self) -> Vec<usize> {
        let (rows, cols) = (self.dims[0], self.dims[self.dims.len() - 1]);
        match (self.first_vector, self.last_vector) {
            (false, false) => vec![rows, cols],
            (true, false) => vec![cols],
            (false, true) => vec![rows],
            (true, true) => vec![],
        }
    }
}

/// NumPy's `_multi_dot_matrix_chain_order`: for the chain of matrices `A_i` of `dims[i] x
/// dims[i + 1]`, `split[i][j]` is the `k` at which the cheapest product of `A_i ... A_j` splits
/// into `(A_i ... A_k)(A_{k+1} ... A_j)`, and `cost[i][j]` its count of scalar multiplications,
/// in `f64` as NumPy's (the first of equal costs is kept, as NumPy's strict `<` does). For three
/// matrices it chooses as NumPy's `_multi_dot_three`: `(AB)C` only when strictly cheaper.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChainOrder {
    pub(crate) split: Vec<Vec<usize>>,
    pub(crate) cost: Vec<Vec<f64>>,
}

/// The [`ChainOrder`] of the matrices of `dims` (`dims[i] x dims[i + 1]` the `i`-th).
pub(crate) fn chain_order(dims: &[usize]) -> ChainOrder {
    let n = dims.len().saturating_sub(1);
    let mut cost = vec![vec![0.0f64; n]; n];
    let mut split = vec![vec![0usize; n]; n];
    // `p[i] * p[k + 1] * p[j + 1]`, exact as Python's integers and then one rounding to f64 as
    // NumPy's `double` sum makes it.
    let product = |a: usize, b: usize, c: usize| -> f64 {
        (a as u128)
            .checked_mul(b as u128)
            .and_then(|ab| ab.checked_mul(c as u128))
            .map_or_else(|| a as f64 * b as f64 * c as f64, |abc| abc as f64)
    };
    for l in 1..n {
        for i in 0..n - l {
            let j = i + l;
            cost[i][j] = f64::INFINITY;
            for k in i..j {
                let q = (cost[i][k] + cost[k + 1][j]) + product(dims[i], dims[k + 1], dims[j + 1]);
                if q < cost[i][j] {
                    cost[i][j] = q;
                    split[i][j] = k;
                }
            }
        }
    }
    ChainOrder { split, cost }
}

/// NumPy's `linalg.multi_dot(arrays)` and CuPy's: the product `arrays[0] @ arrays[1] @ ... @
/// arrays[n - 1]` of two or more arrays, multiplied in the order that needs the fewest scalar
/// multiplications, chosen from the shapes by NumPy's dynamic programming
/// (`_multi_dot_matrix_chain_order`; for three arrays NumPy's `_multi_dot_three`, the same
/// choice), each product one [`einsum`](crate::gpuarray::einsum) kernel: any element type, as
/// `einsum`'s (integers wrap, `bool` is an or of ands). Each array is 2-d, except that the
/// first may be 1-d (a row vector) and the last 1-d (a column vector); the result is 2-d, or
/// 1-d when one end is a vector, or 0-d when both are, as NumPy's. Arrays of different
/// dimension types go in as views: `&[&v.view().into_dyn(), &a.view().into_dyn()]`. Errors:
/// fewer than two arrays, [`ArrayShapeError::TooFewArrays`]; an array of the wrong number of
/// axes, [`LinAlgError::TooFewAxes`] (0-d, or 1-d between the ends; NumPy's "Array must be
/// two-dimensional") or [`ArrayShapeError::TooManyAxes`]; a matrix whose columns are not the
/// next one's rows, [`ArrayShapeError::Einsum`] naming both (NumPy's "shapes not aligned"); each
/// before anything is launched. NumPy's two arrays are `dot`'s, which takes other shapes too;
/// here they follow the rule above. Runs on the legacy default stream (on a stream:
/// `gpuarray::on(&stream).multi_dot(..)`).
///
/// ```no_run
/// use gpu_runtime::gpuarray::{self, DeviceArray};
/// use gpu_runtime::ndarray::{arr1, Array2};
/// let ctx = gpu_runtime::Context::default()?;
/// let a = DeviceArray::from_ndarray(&ctx, &Array2::<f64>::ones((10, 100)))?;
/// let b = DeviceArray::from_ndarray(&ctx, &Array2::<f64>::ones((100, 5)))?;
/// let c = DeviceArray::from_ndarray(&ctx, &Array2::<f64>::ones((5, 50)))?;
/// // (a @ b) @ c: 7,500 multiplications where a @ (b @ c) takes 75,000.
/// let abc = gpuarray::multi_dot(&[&a, &b, &c])?;
/// assert_eq!(abc.shape(), [10, 50]);
/// // A 1-d first array is a row vector, so the result is 1-d; arrays of different
/// // dimension types go in as views.
/// let v = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64; 10]))?;
/// let (v, a, b, c) = (v.view().into_dyn(), a.view().into_dyn(), b.view().into_dyn(), c.view().into_dyn());
/// let vabc = gpuarray::multi_dot(&[&v, &a, &b, &c])?;
/// assert_eq!(vabc.to_vec()?, [5000.0; 50]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn multi_dot<S: Storage<Elem: Element>, D: Dimension>(
    arrays: &[&DeviceArrayBase<S, D>],
) -> Result<DeviceArray<S::Elem, IxDyn>> {
    match arrays.first() {
        Some(a) => OnStream::legacy(a.context()).multi_dot(arrays),
        None => Err(ArrayShapeError::TooFewArrays {
            operation: OP,
            given: 0,
            least: 2,
        }
        .into()),
    }
}

impl OnStream<'_, &Context> {
    /// [`multi_dot`] on this stream.
    pub fn multi_dot<S: Storage<Elem: Element>, D: Dimension>(
        &self,
        arrays: &[&DeviceArrayBase<S, D>],
    ) -> Result<DeviceArray<S::Elem, IxDyn>> {
        let shapes: Vec<&[usize]> = arrays.iter().map(|a| a.shape()).collect();
        let chain = Chain::of(&shapes)?;
        let n = arrays.len();
        // The ends as matrices: a 1-d first array a row, a 1-d last one a column.
        let matrices = arrays
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let v = a.view().into_dyn();
                match v.ndim() {
                    1 if i == 0 => v.expand_dims(0),
                    1 => v.expand_dims(1),
                    _ => Ok(v),
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let order = chain_order(&chain.dims);
        let product = self.chain_product(&matrices, &order.split, 0, n - 1)?;
        // Two or more arrays: the chain is a product, not one of the arrays.
        let product = match product {
            Some(p) => p,
            None => OnStream::new(&matrices[0], self.stream).to_contiguous()?,
        };
        product.reshape(IxDyn(&chain.result_shape()))
    }

    /// The product of `matrices[i..=j]` in the order of `split` (NumPy's `_multi_dot`), or
    /// `None` for `i == j` (the matrix itself).
    fn chain_product<T: Element>(
        &self,
        matrices: &[DeviceArrayView<'_, T, IxDyn>],
        split: &[Vec<usize>],
        i: usize,
        j: usize,
    ) -> Result<Option<DeviceArray<T, IxDyn>>> {
        if i == j {
            return Ok(None);
        }
        let k = split[i][j];
        let left = self.chain_product(matrices, split, i, k)?;
        let right = self.chain_product(matrices, split, k + 1, j)?;
        let l = left.as_ref().map_or_else(|| matrices[i].view(), |p| p.view());
        let r = right
            .as_ref()
            .map_or_else(|| matrices[k + 1].view(), |p| p.view());
        self.einsum(PRODUCT, &[&l, &r]).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    /// The parenthesization of `A_i ... A_j` that `split` chooses, as Cormen prints it.
    fn parens(split: &[Vec<usize>], i: usize, j: usize) -> String {
        if i == j {
            return format!("A{}", i + 1);
        }
        let k = split[i][j];
        format!("({}{})", parens(split, i, k), parens(split, k + 1, j))
    }

    #[test]
    fn the_chain_order_is_numpys() {
        // NumPy's test_dynamic_programming_logic (Cormen's example, page 376): the costs and
        // splits that NumPy 2.4's `_multi_dot_matrix_chain_order` gives.
        let o = chain_order(&[30, 35, 15, 5, 10, 20, 25]);
        let cost = [
            [0.0, 15750.0, 7875.0, 9375.0, 11875.0, 15125.0],
            [0.0, 0.0, 2625.0, 4375.0, 7125.0, 10500.0],
            [0.0, 0.0, 0.0, 750.0, 2500.0, 5375.0],
            [0.0, 0.0, 0.0, 0.0, 1000.0, 3500.0],
            [0.0, 0.0, 0.0, 0.0, 0.0, 5000.0],
            [0.0; 6],
        ];
        let split = [
            [0, 0, 0, 2, 2, 2],
            [0, 0, 1, 2, 2, 2],
            [0, 0, 0, 2, 2, 2],
            [0, 0, 0, 0, 3, 4],
            [0, 0, 0, 0, 0, 4],
            [0; 6],
        ];
        for i in 0..6 {
            for j in i + 1..6 {
                assert_eq!(o.cost[i][j], cost[i][j], "cost[{i}][{j}]");
                assert_eq!(o.split[i][j], split[i][j], "split[{i}][{j}]");
            }
        }
        assert_eq!(parens(&o.split, 0, 5), "((A1(A2A3))((A4A5)A6))");
        // NumPy's docstring: A 10x100, B 100x5, C 5x50: (AB)C, 7,500 against 75,000.
        let o = chain_order(&[10, 100, 5, 50]);
        assert_eq!(parens(&o.split, 0, 2), "((A1A2)A3)");
        assert_eq!(o.cost[0][2], 7500.0);
        // The same with a row vector first and a column vector last (NumPy: splits 1, 1, 1).
        let o = chain_order(&[1, 100, 5, 50, 1]);
        assert_eq!((o.split[0][3], o.split[0][2], o.split[1][3]), (1, 1, 1));
        assert_eq!(o.cost[0][3], 755.0);
        assert_eq!(parens(&o.split, 0, 3), "((A1A2)(A3A4))");
    }

    #[test]
    fn three_matrices_split_as_numpys_multi_dot_three() {
        // `_multi_dot_three`: (AB)C when a0*b1c0*(a1b0 + c1) < a1b0*c1*(a0 + b1c0), else
        // A(BC), ties included.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 12) as usize + 1
        };
        for _ in 0..2000 {
            let (a0, a1b0, b1c0, c1) = (next(), next(), next(), next());
            let cost1 = a0 * b1c0 * (a1b0 + c1);
            let cost2 = a1b0 * c1 * (a0 + b1c0);
            let want = if cost1 < cost2 { 1 } else { 0 };
            assert_eq!(chain_order(&[a0, a1b0, b1c0, c1]).split[0][2], want);
        }
    }

    #[test]
    fn the_chain_is_read_from_the_shapes() {
        let c = Chain::of(&[&[4, 3], &[3, 5], &[5, 2]]).unwrap();
        assert_eq!((c.dims.clone(), c.result_shape()), (vec![4, 3, 5, 2], vec![4, 2]));
        let c = Chain::of(&[&[3], &[3, 5], &[5, 2]]).unwrap();
        assert_eq!((c.dims.clone(), c.result_shape()), (vec![1, 3, 5, 2], vec![2]));
        let c = Chain::of(&[&[4, 3], &[3, 5], &[5]]).unwrap();
        assert_eq!((c.dims.clone(), c.result_shape()), (vec![4, 3, 5, 1], vec![4]));
        let c = Chain::of(&[&[3], &[3, 5], &[5]]).unwrap();
        assert_eq!((c.dims.clone(), c.result_shape()), (vec![1, 3, 5, 1], vec![]));
        // Two vectors: their inner product, 0-d.
        let c = Chain::of(&[&[3], &[3]]).unwrap();
        assert_eq!((c.dims.clone(), c.result_shape()), (vec![1, 3, 1], vec![]));
    }

    #[test]
    fn chains_that_do_not_fit_are_refused() {
        let shape = |e: Error| match e {
            Error::Shape(e) => e,
            other => panic!("expected a shape error, got {other:?}"),
        };
        assert_eq!(
            shape(Chain::of(&[&[3, 3]]).unwrap_err()),
            ArrayShapeError::TooFewArrays {
                operation: "multi_dot",
                given: 1,
                least: 2
            }
        );
        assert!(matches!(
            Chain::of(&[]).unwrap_err(),
            Error::Shape(ArrayShapeError::TooFewArrays { given: 0, .. })
        ));
        // A vector between the ends, and a 0-d array anywhere.
        let cases: [&[&[usize]]; 3] = [&[&[2, 3], &[3], &[3, 2]], &[&[], &[3, 2]], &[&[2, 3], &[]]];
        for shapes in cases {
            match Chain::of(shapes).unwrap_err() {
                Error::LinAlg(LinAlgError::TooFewAxes {
                    operation: "multi_dot",
                    ..
                }) => {}
                other => panic!("{shapes:?}: {other:?}"),
            }
        }
        assert!(matches!(
            Chain::of(&[&[2, 3], &[3, 2, 2]]).unwrap_err(),
            Error::Shape(ArrayShapeError::TooManyAxes { axes: 3, most: 2, .. })
        ));
        // Columns against the next rows.
        match shape(Chain::of(&[&[2, 3], &[3, 4], &[5, 2]]).unwrap_err()) {
            ArrayShapeError::Einsum { problem, .. } => {
                assert!(
                    problem.contains("array 1 of shape [3, 4] has 4 columns"),
                    "{problem}"
                );
                assert!(
                    problem.contains("array 2 of shape [5, 2] has 5 rows"),
                    "{problem}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(Chain::of(&[&[4], &[3, 2]]).is_err());
        assert!(Chain::of(&[&[2, 3], &[4]]).is_err());
    }
}
