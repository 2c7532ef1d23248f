//! How [`matmul`](super::matmul) hands arrays to cuBLAS, as pure functions of shapes and
//! strides (unit-tested without a GPU).
//!
//! cuBLAS reads matrices in column-major order; arrays here are indexed row-major. The product
//! `C = A B` of a C-order `C` is, read column-major, `Cᵀ = Bᵀ Aᵀ`: so cuBLAS is called with the
//! operands swapped (`B` first) and `m` and `n` exchanged, and each operand is passed as it lies
//! in memory:
//!
//! | operand `X` (`rows` x `cols`, strides `(sr, sc)`) | what cuBLAS gets | `op` | `ld` |
//! |---|---|---|---|
//! | row-major (`sc == 1`, `sr >= cols`): C order, a row slice | `Xᵀ` as stored | `N` | `sr` |
//! | column-major (`sr == 1`, `sc >= rows`): `.t()` of C order, Fortran order | `X` as stored, transposed by cuBLAS | `T` | `sc` |
//! | anything else (steps on both axes, negative or zero strides) | a C-order copy | `N` | `cols` |
//!
//! An axis of length 1 has no stride that matters, so it fits either layout. A batch axis
//! (3-D operands) must have a stride of at least zero; a 2-D operand (or a batch of one) is
//! used for every batch with stride 0. Vectors follow NumPy's `matmul`: a 1-D `a` is a row
//! `(1, k)` and a 1-D `b` a column `(k, 1)`, and that axis is dropped from the result.

/// A cuBLAS operation on a stored matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// As stored (`CUBLAS_OP_N`).
    N,
    /// Transposed (`CUBLAS_OP_T`).
    T,
}

/// How one operand is passed to cuBLAS without a copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OperandLayout {
    /// The operation cuBLAS applies to the matrix as stored.
    pub op: Op,
    /// The leading dimension of the stored matrix, in elements.
    pub ld: usize,
    /// Elements from one matrix of the batch to the next (0: the same matrix for each).
    pub batch_stride: usize,
}

/// The layout cuBLAS reads an operand of `rows` x `cols` with strides `(row_stride,
/// col_stride)` in elements (and `batch_stride` between the matrices of a batch of `batch`)
/// by, or `None` when it must be copied to C order first.
pub(crate) fn operand_layout(
    rows: usize,
    cols: usize,
    row_stride: isize,
    col_stride: isize,
    batch: usize,
    batch_stride: isize,
) -> Option<OperandLayout> {
    let batch_stride = if batch <= 1 {
        0
    } else {
        usize::try_from(batch_stride).ok()?
    };
    // An axis of length 0 or 1 is never stepped along: its stride is whatever fits.
    let pick = |len: usize, stride: isize, fits: isize| if len <= 1 { fits } else { stride };
    let (cols1, rows1) = (cols.max(1) as isize, rows.max(1) as isize);
    let (sr, sc) = (pick(rows, row_stride, cols1), pick(cols, col_stride, 1));
    if sc == 1 && sr >= cols1 {
        return Some(OperandLayout {
            op: Op::N,
            ld: sr as usize,
            batch_stride,
        });
    }
    let (sr, sc) = (pick(rows, row_stride, 1), pick(cols, col_stride, rows1));
    if sr == 1 && sc >= rows1 {
        return Some(OperandLayout {
            op: Op::T,
            ld: sc as usize,
            batch_stride,
        });
    }
    None
}

/// One operand seen as a batch of matrices: its batch length, rows, columns and the strides of
/// each (the batch stride 0 when it has no batch axis).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Matrices {
    pub batch: usize,
    pub rows: usize,
    pub cols: usize,
    pub batch_stride: isize,
    pub row_stride: isize,
    pub col_stride: isize,
}

impl Matrices {
    /// `shape` and `strides` of an operand as matrices; `is_left` says which side a vector
    /// goes (a row on the left, a column on the right). `None` for 0-d or more than 3 axes.
    pub(crate) fn of(shape: &[usize], strides: &[isize], is_left: bool) -> Option<Matrices> {
        let m = |batch, rows, cols, batch_stride, row_stride, col_stride| Matrices {
            batch,
            rows,
            cols,
            batch_stride,
            row_stride,
            col_stride,
        };
        Some(match (shape, strides) {
            (&[k], &[s]) if is_left => m(1, 1, k, 0, 0, s),
            (&[k], &[s]) => m(1, k, 1, 0, s, 0),
            (&[r, c], &[sr, sc]) => m(1, r, c, 0, sr, sc),
            (&[b, r, c], &[sb, sr, sc]) => m(b, r, c, sb, sr, sc),
            _ => return None,
        })
    }

    /// The layout cuBLAS reads these matrices by ([`operand_layout`]).
    pub(crate) fn layout(&self) -> Option<OperandLayout> {
        operand_layout(
            self.rows,
            self.cols,
            self.row_stride,
            self.col_stride,
            self.batch,
            self.batch_stride,
        )
    }
}

/// The sizes of a product `a @ b`: batch, `m`, `k`, `n`, and the result's shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Product {
    pub batch: usize,
    pub m: usize,
    pub k: usize,
    pub n: usize,
    pub shape: Vec<usize>,
}

/// The product of arrays of shapes `a` and `b` by NumPy's `matmul` (1-D to 3-D operands, a
/// batch of one or no batch axis broadcast over the other's), or `None` when they do not
/// multiply.
pub(crate) fn product(a: &[usize], b: &[usize]) -> Option<Product> {
    let zeros = [0isize; 3];
    let ma = Matrices::of(a, &zeros[..a.len().min(3)], true)?;
    let mb = Matrices::of(b, &zeros[..b.len().min(3)], false)?;
    if ma.cols != mb.rows {
        return None;
    }
    let batch = match (a.len() == 3, b.len() == 3) {
        (true, true) if ma.batch == mb.batch || mb.batch == 1 => ma.batch,
        (true, true) if ma.batch == 1 => mb.batch,
        (true, true) => return None,
        (true, false) => ma.batch,
        (false, true) => mb.batch,
        (false, false) => 1,
    };
    let mut shape = Vec::with_capacity(3);
    if a.len() == 3 || b.len() == 3 {
        shape.push(batch);
    }
    if a.len() > 1 {
        shape.push(ma.rows);
    }
    if b.len() > 1 {
        shape.push(mb.cols);
    }
    Some(Product {
        batch,
        m: ma.rows,
        k: ma.cols,
        n: mb.cols,
        shape,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_order_is_passed_as_stored() {
        // A (4, 3) C-order matrix, and every other row of an (8, 3) one.
        assert_eq!(
            operand_layout(4, 3, 3, 1, 1, 0),
            Some(OperandLayout {
                op: Op::N,
                ld: 3,
                batch_stride: 0
            })
        );
        assert_eq!(
            operand_layout(4, 3, 6, 1, 1, 0),
            Some(OperandLayout {
                op: Op::N,
                ld: 6,
                batch_stride: 0
            })
        );
        // Columns 0..3 of a (4, 10) matrix: ld is the full row.
        assert_eq!(operand_layout(4, 3, 10, 1, 1, 0).map(|l| l.ld), Some(10));
    }

    #[test]
    fn transposes_and_fortran_order_are_transposed_by_cublas() {
        // `.t()` of a (3, 4) C-order matrix is (4, 3) with strides (1, 4).
        assert_eq!(
            operand_layout(4, 3, 1, 4, 1, 0),
            Some(OperandLayout {
                op: Op::T,
                ld: 4,
                batch_stride: 0
            })
        );
        // Fortran order (4, 3): strides (1, 4) too; a batch of them, each 12 apart.
        assert_eq!(
            operand_layout(4, 3, 1, 4, 5, 12),
            Some(OperandLayout {
                op: Op::T,
                ld: 4,
                batch_stride: 12
            })
        );
    }

    #[test]
    fn other_layouts_are_copied() {
        // Steps on both axes, reversed rows, a broadcast row, a negative batch stride,
        // rows overlapping (ld < cols).
        assert_eq!(operand_layout(4, 3, 6, 2, 1, 0), None);
        assert_eq!(operand_layout(4, 3, -3, 1, 1, 0), None);
        assert_eq!(operand_layout(4, 3, 0, 1, 1, 0), None);
        assert_eq!(operand_layout(4, 3, 3, 1, 2, -12), None);
        assert_eq!(operand_layout(4, 3, 2, 1, 1, 0), None);
        assert_eq!(operand_layout(4, 3, 1, 3, 1, 0), None);
    }

    #[test]
    fn axes_of_length_one_fit_any_stride() {
        // One row with any row stride; one column with any column stride (also negative).
        assert_eq!(
            operand_layout(1, 5, -7, 1, 1, 0),
            Some(OperandLayout {
                op: Op::N,
                ld: 5,
                batch_stride: 0
            })
        );
        assert_eq!(
            operand_layout(5, 1, 1, -2, 1, 0),
            Some(OperandLayout {
                op: Op::N,
                ld: 1,
                batch_stride: 0
            })
        );
        assert_eq!(
            operand_layout(5, 1, 4, -2, 1, 0),
            Some(OperandLayout {
                op: Op::N,
                ld: 4,
                batch_stride: 0
            })
        );
        // A row with a step between its elements is a column-major 1 x k with ld = step.
        assert_eq!(
            operand_layout(1, 5, 0, 3, 1, 0),
            Some(OperandLayout {
                op: Op::T,
                ld: 3,
                batch_stride: 0
            })
        );
        // A batch of one has no batch stride.
        assert_eq!(operand_layout(2, 2, 2, 1, 1, -4).map(|l| l.batch_stride), Some(0));
    }

    #[test]
    fn products_follow_numpy_matmul_shapes() {
        let p = |a: &[usize], b: &[usize]| product(a, b).map(|p| (p.batch, p.m, p.k, p.n, p.shape));
        assert_eq!(p(&[4, 3], &[3, 5]), Some((1, 4, 3, 5, vec![4, 5])));
        assert_eq!(p(&[2, 4, 3], &[2, 3, 5]), Some((2, 4, 3, 5, vec![2, 4, 5])));
        assert_eq!(p(&[2, 4, 3], &[3, 5]), Some((2, 4, 3, 5, vec![2, 4, 5])));
        assert_eq!(p(&[4, 3], &[7, 3, 5]), Some((7, 4, 3, 5, vec![7, 4, 5])));
        assert_eq!(p(&[1, 4, 3], &[7, 3, 5]), Some((7, 4, 3, 5, vec![7, 4, 5])));
        assert_eq!(p(&[7, 4, 3], &[1, 3, 5]), Some((7, 4, 3, 5, vec![7, 4, 5])));
        assert_eq!(p(&[3], &[3, 5]), Some((1, 1, 3, 5, vec![5])));
        assert_eq!(p(&[4, 3], &[3]), Some((1, 4, 3, 1, vec![4])));
        assert_eq!(p(&[3], &[3]), Some((1, 1, 3, 1, vec![])));
        assert_eq!(p(&[4, 0], &[0, 5]), Some((1, 4, 0, 5, vec![4, 5])));
        assert_eq!(p(&[0, 4, 3], &[3, 5]), Some((0, 4, 3, 5, vec![0, 4, 5])));
        assert_eq!(p(&[4, 3], &[4, 5]), None);
        assert_eq!(p(&[2, 4, 3], &[3, 3, 5]), None);
        assert_eq!(p(&[], &[3]), None);
        assert_eq!(p(&[1, 1, 4, 3], &[3, 5]), None);
    }

    #[test]
    fn vectors_are_a_row_on_the_left_and_a_column_on_the_right() {
        let left = Matrices::of(&[3], &[2], true).unwrap();
        assert_eq!((left.rows, left.cols, left.col_stride), (1, 3, 2));
        let right = Matrices::of(&[3], &[-1], false).unwrap();
        assert_eq!((right.rows, right.cols, right.row_stride), (3, 1, -1));
        // A reversed column is copied; a stepped row is read as it lies.
        assert_eq!(right.layout(), None);
        assert_eq!(left.layout().map(|l| (l.op, l.ld)), Some((Op::T, 2)));
    }
}
