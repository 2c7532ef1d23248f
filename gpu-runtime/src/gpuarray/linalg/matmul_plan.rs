//! How [`matmul`](crate::gpuarray::linalg::matmul) hands arrays to cuBLAS, as pure functions of shapes and
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

use crate::gpuarray::linalg::nd_plan::nd_product;

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
/// multiply: [`nd_product`]'s, for the shapes one cuBLAS call takes.
pub(crate) fn product(a: &[usize], b: &[usize]) -> Option<Product> {
    if a.len() > 3 || b.len() > 3 {
        return None;
    }
    let p = nd_product(a, b)?;
    Some(Product {
        // At most one batch axis: a 3-D operand's, or the two broadcast together.
        batch: p.batch.first().copied().unwrap_or(1),
        m: p.m,
        k: p.k,
        n: p.n,
        shape: p.shape,
    })
}

/// The column-major cuBLAS call (`gemm`, or `gemm_strided_batched` when `batch > 1`) that
/// computes the row-major `C = A B` of `p` into a C-order `C`, from the layouts of `a` and `b`
/// ([`Matrices::layout`], or a C-order copy's): cuBLAS's `A` is our `b` and its `B` our `a`
/// (the module docs say why), `m` and `n` traded, `ldc` the row length `n` of `C`, and the
/// matrices of `C` one after another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GemmCall {
    pub transa: Op,
    pub transb: Op,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub lda: usize,
    pub ldb: usize,
    pub ldc: usize,
    pub batch: usize,
    pub stride_a: usize,
    pub stride_b: usize,
    pub stride_c: usize,
}

/// The [`GemmCall`] of `p` with `a` and `b` laid out as `la` and `lb`.
pub(crate) fn gemm_call(p: &Product, la: OperandLayout, lb: OperandLayout) -> GemmCall {
    GemmCall {
        transa: lb.op,
        transb: la.op,
        m: p.n,
        n: p.m,
        k: p.k,
        lda: lb.ld,
        ldb: la.ld,
        ldc: p.n,
        batch: p.batch,
        stride_a: lb.batch_stride,
        stride_b: la.batch_stride,
        stride_c: p.m * p.n,
    }
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

    #[test]
    fn issue41_batched_matrix_vector_call() {
        // [5, 3, 2] @ [2] in C order: cuBLAS's A is b as a 1 x 2 row (ld 1, the same for every
        // batch), its B each 2 x 3 `aᵀ` (ld 2, 6 apart), C 1 x 3 per batch (3 apart).
        let p = product(&[5, 3, 2], &[2]).unwrap();
        let la = Matrices::of(&[5, 3, 2], &[6, 2, 1], true)
            .unwrap()
            .layout()
            .unwrap();
        let lb = Matrices::of(&[2], &[1], false).unwrap().layout().unwrap();
        assert_eq!(
            gemm_call(&p, la, lb),
            GemmCall {
                transa: Op::N,
                transb: Op::N,
                m: 1,
                n: 3,
                k: 2,
                lda: 1,
                ldb: 2,
                ldc: 1,
                batch: 5,
                stride_a: 0,
                stride_b: 6,
                stride_c: 3,
            }
        );
        let mut rng = Rng(41);
        for (a, b) in [
            (&[5, 3, 2][..], &[2][..]),
            (&[2], &[5, 2, 3]),
            (&[5, 3, 2], &[5, 2]),
        ] {
            let (a, b) = (Operand::c_order(&mut rng, a), Operand::c_order(&mut rng, b));
            emulate_and_compare(&a, &b);
        }
    }

    /// A xorshift generator: the unit tests' random shapes, strides and values.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn value(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        }
    }

    /// A row-major operand as it lies in memory: `mem[first + Σ index·stride]` is its element
    /// at `index`.
    struct Operand {
        shape: Vec<usize>,
        strides: Vec<isize>,
        first: usize,
        mem: Vec<f64>,
    }

    impl Operand {
        fn c_order(rng: &mut Rng, shape: &[usize]) -> Operand {
            let mut strides = vec![0isize; shape.len()];
            let mut acc = 1isize;
            for ax in (0..shape.len()).rev() {
                strides[ax] = acc;
                acc *= shape[ax] as isize;
            }
            let mem = (0..acc.max(0) as usize).map(|_| rng.value()).collect();
            Operand {
                shape: shape.to_vec(),
                strides,
                first: 0,
                mem,
            }
        }

        /// Axes laid out in a random order, each stepped (every other element) or padded at
        /// random, some reversed and some broadcast (stride 0): C and Fortran order,
        /// transposes, slices with steps, reversed and broadcast views among them.
        fn random(rng: &mut Rng, shape: &[usize]) -> Operand {
            let n = shape.len();
            let mut order: Vec<usize> = (0..n).rev().collect();
            if rng.below(3) == 0 {
                for i in (1..n).rev() {
                    order.swap(i, rng.below(i + 1));
                }
            }
            let mut strides = vec![0isize; n];
            let mut acc = 1isize;
            for &ax in &order {
                let step = if rng.below(5) == 0 { 2 } else { 1 };
                strides[ax] = acc * step;
                acc = acc * step * shape[ax].max(1) as isize
                    + if rng.below(5) == 0 {
                        rng.below(3) as isize
                    } else {
                        0
                    };
            }
            for st in &mut strides {
                match rng.below(12) {
                    0 => *st = -*st,
                    1 => *st = 0,
                    _ => {}
                }
            }
            // Element 0 sits past every reversed axis's extent, so every index lands in `mem`.
            let first: isize = shape
                .iter()
                .zip(&strides)
                .map(|(&d, &st)| if st < 0 { (d.max(1) as isize - 1) * -st } else { 0 })
                .sum();
            let last: isize = shape
                .iter()
                .zip(&strides)
                .map(|(&d, &st)| if st > 0 { (d.max(1) as isize - 1) * st } else { 0 })
                .sum();
            let mem = (0..(first + last + 1) as usize).map(|_| rng.value()).collect();
            Operand {
                shape: shape.to_vec(),
                strides,
                first: first as usize,
                mem,
            }
        }

        fn at(&self, index: &[usize]) -> f64 {
            let off: isize = index
                .iter()
                .zip(&self.strides)
                .map(|(&i, &st)| i as isize * st)
                .sum();
            self.mem[(self.first as isize + off) as usize]
        }

        /// What the device pointer of an array of this layout gives cuBLAS: the memory it
        /// spans, from its lowest address (`DeviceRead for DeviceArrayBase`).
        fn span(&self) -> &[f64] {
            if self.shape.contains(&0) {
                return &[];
            }
            let lo: isize = self
                .shape
                .iter()
                .zip(&self.strides)
                .map(|(&d, &st)| (d as isize - 1) * st.min(0))
                .sum();
            let hi: isize = self
                .shape
                .iter()
                .zip(&self.strides)
                .map(|(&d, &st)| (d as isize - 1) * st.max(0))
                .sum();
            let first = self.first as isize;
            &self.mem[(first + lo) as usize..=(first + hi) as usize]
        }

        /// A C-order copy (what `matmul` makes of an operand cuBLAS cannot read as it lies).
        fn to_c_order(&self) -> Operand {
            let mut rng = Rng(1);
            let mut c = Operand::c_order(&mut rng, &self.shape);
            for (flat, v) in c.mem.iter_mut().enumerate() {
                let mut index = vec![0; self.shape.len()];
                let mut rest = flat;
                for ax in (0..self.shape.len()).rev() {
                    index[ax] = rest % self.shape[ax];
                    rest /= self.shape[ax];
                }
                *v = self.at(&index);
            }
            c
        }
    }

    /// NumPy's `a @ b` of two operands of 1 to 3 axes, from their elements, as a flat C-order
    /// result and its shape; `None` where NumPy refuses the shapes.
    fn numpy_matmul(a: &Operand, b: &Operand) -> Option<(Vec<usize>, Vec<f64>)> {
        let shape = numpy_shape(&a.shape, &b.shape)?;
        let (a3, b3) = (as_3d(&a.shape, true), as_3d(&b.shape, false));
        // Broadcast: a batch of one takes the other's length (0 included).
        let batch = if a3[0] == 1 { b3[0] } else { a3[0] };
        let (m, k, n) = (a3[1], a3[2], b3[2]);
        let index = |sh: &[usize], is_left: bool, t: usize, r: usize, c: usize| -> Vec<usize> {
            let t = if as_3d(sh, is_left)[0] == 1 { 0 } else { t };
            match sh.len() {
                1 if is_left => vec![c],
                1 => vec![r],
                2 => vec![r, c],
                _ => vec![t, r, c],
            }
        };
        let mut out = Vec::with_capacity(batch * m * n);
        for t in 0..batch {
            for i in 0..m {
                for j in 0..n {
                    out.push(
                        (0..k)
                            .map(|l| {
                                a.at(&index(&a.shape, true, t, i, l)) * b.at(&index(&b.shape, false, t, l, j))
                            })
                            .sum(),
                    );
                }
            }
        }
        Some((shape, out))
    }

    /// `[batch, rows, cols]` of an operand of 1 to 3 axes (a vector a row on the left, a column on
    /// the right).
    fn as_3d(shape: &[usize], is_left: bool) -> [usize; 3] {
        match *shape {
            [k] if is_left => [1, 1, k],
            [k] => [1, k, 1],
            [r, c] => [1, r, c],
            [b, r, c] => [b, r, c],
            _ => unreachable!("1 to 3 axes"),
        }
    }

    /// The shape of NumPy's `matmul` of any number of axes (batch axes broadcast), or `None`
    /// where NumPy raises.
    fn numpy_shape(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
        if a.is_empty() || b.is_empty() {
            return None;
        }
        let a2: Vec<usize> = if a.len() == 1 { vec![1, a[0]] } else { a.to_vec() };
        let b2: Vec<usize> = if b.len() == 1 { vec![b[0], 1] } else { b.to_vec() };
        let (ra, rb) = (a2.len() - 2, b2.len() - 2);
        if a2[ra + 1] != b2[rb] {
            return None;
        }
        let nb = ra.max(rb);
        let mut shape = Vec::new();
        for i in 0..nb {
            let da = if i + ra >= nb { a2[i + ra - nb] } else { 1 };
            let db = if i + rb >= nb { b2[i + rb - nb] } else { 1 };
            shape.push(match (da, db) {
                (x, y) if x == y => x,
                (1, y) => y,
                (x, 1) => x,
                _ => return None,
            });
        }
        if a.len() > 1 {
            shape.push(a2[ra]);
        }
        if b.len() > 1 {
            shape.push(b2[rb + 1]);
        }
        Some(shape)
    }

    /// Runs `a @ b` as `matmul` does, with cuBLAS emulated on the host: each operand as it lies
    /// (its `operand_layout`) or copied to C order, the call of [`gemm_call`] reading each
    /// matrix through its `op` and leading dimension from the memory the operand spans (an
    /// index outside that memory fails the test: the device would have read past the buffer),
    /// and compares the result with [`numpy_matmul`].
    fn emulate_and_compare(a: &Operand, b: &Operand) {
        let what = format!(
            "{:?} (strides {:?}) @ {:?} (strides {:?})",
            a.shape, a.strides, b.shape, b.strides
        );
        let p = product(&a.shape, &b.shape);
        let Some((want_shape, want)) = numpy_matmul(a, b) else {
            assert_eq!(p, None, "{what}");
            return;
        };
        let p = p.unwrap_or_else(|| panic!("{what}: refused, NumPy gives {want_shape:?}"));
        assert_eq!(p.shape, want_shape, "{what}");
        if p.batch == 0 || p.m == 0 || p.n == 0 {
            assert!(want.is_empty(), "{what}");
            return;
        }
        if p.k == 0 {
            assert!(want.iter().all(|&v| v == 0.0), "{what}");
            return;
        }
        let laid = |x: &Operand, is_left: bool| -> (Operand, OperandLayout) {
            let layout = |x: &Operand| Matrices::of(&x.shape, &x.strides, is_left).and_then(|m| m.layout());
            match layout(x) {
                Some(l) => (
                    Operand {
                        shape: x.shape.clone(),
                        strides: x.strides.clone(),
                        first: x.first,
                        mem: x.mem.clone(),
                    },
                    l,
                ),
                None => {
                    let c = x.to_c_order();
                    let l = layout(&c).unwrap_or_else(|| panic!("{what}: a C-order copy has no layout"));
                    (c, l)
                }
            }
        };
        let ((xa, la), (xb, lb)) = (laid(a, true), laid(b, false));
        let call = gemm_call(&p, la, lb);
        // cuBLAS's A is our b, its B our a.
        let (mem_a, mem_b) = (xb.span(), xa.span());
        let stored = |op: Op, rows: usize, cols: usize| if op == Op::N { (rows, cols) } else { (cols, rows) };
        let (ar, _) = stored(call.transa, call.m, call.k);
        let (br, _) = stored(call.transb, call.k, call.n);
        assert!(
            call.lda >= ar.max(1),
            "{what}: lda {} < {ar} ({call:?})",
            call.lda
        );
        assert!(
            call.ldb >= br.max(1),
            "{what}: ldb {} < {br} ({call:?})",
            call.ldb
        );
        assert!(call.ldc >= call.m.max(1), "{what}: ldc ({call:?})");
        let read = |mem: &[f64], op: Op, ld: usize, base: usize, r: usize, c: usize| -> f64 {
            let at = base + if op == Op::N { r + c * ld } else { c + r * ld };
            *mem.get(at)
                .unwrap_or_else(|| panic!("{what}: reads element {at} of {} ({call:?})", mem.len()))
        };
        let mut c = vec![f64::NAN; p.batch * p.m * p.n];
        for t in 0..call.batch {
            for col in 0..call.n {
                for row in 0..call.m {
                    let v: f64 = (0..call.k)
                        .map(|l| {
                            read(mem_a, call.transa, call.lda, t * call.stride_a, row, l)
                                * read(mem_b, call.transb, call.ldb, t * call.stride_b, l, col)
                        })
                        .sum();
                    let at = t * call.stride_c + row + col * call.ldc;
                    assert!(
                        at < c.len(),
                        "{what}: writes element {at} of {} ({call:?})",
                        c.len()
                    );
                    assert!(c[at].is_nan(), "{what}: writes element {at} twice ({call:?})");
                    c[at] = v;
                }
            }
        }
        for (i, (g, w)) in c.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-12 * (1.0 + w.abs()),
                "{what}: element {i}: {g} vs {w} ({call:?})"
            );
        }
    }

    /// A random shape of `ndim` axes: mostly small, sometimes 1 or 0.
    fn random_shape(rng: &mut Rng, ndim: usize) -> Vec<usize> {
        (0..ndim)
            .map(|_| match rng.below(10) {
                0 => 0,
                1 | 2 => 1,
                _ => 2 + rng.below(5),
            })
            .collect()
    }

    /// Every shape family NumPy's and CuPy's matmul tests use (vector and matrix on either
    /// side, batches, a batch of one broadcast, empty axes, shapes that do not multiply and
    /// more than 3 axes), with operands in random layouts, through the plan and an emulated
    /// cuBLAS, against NumPy's rules on the host.
    #[test]
    fn random_products_in_random_layouts_match_numpy() {
        let mut rng = Rng(0x5eed);
        let (mut computed, mut refused) = (0, 0);
        for _ in 0..4000 {
            let (na, nb) = (1 + rng.below(3), 1 + rng.below(3));
            let mut sa = random_shape(&mut rng, na);
            let mut sb = random_shape(&mut rng, nb);
            // Mostly shapes that multiply: the inner lengths and the batches made to agree.
            if rng.below(6) != 0 {
                let k = *sa.last().unwrap();
                let at = if nb == 1 { 0 } else { nb - 2 };
                sb[at] = k;
                if na == 3 && nb == 3 && rng.below(3) != 0 {
                    sb[0] = if rng.below(3) == 0 { 1 } else { sa[0] };
                    if rng.below(4) == 0 {
                        sa[0] = 1;
                    }
                }
            }
            let (a, b) = (Operand::random(&mut rng, &sa), Operand::random(&mut rng, &sb));
            emulate_and_compare(&a, &b);
            if numpy_shape(&sa, &sb).is_some() {
                computed += 1;
            } else {
                refused += 1;
            }
        }
        // Both kinds were drawn often enough to mean something.
        assert!(
            computed > 2000 && refused > 100,
            "{computed} computed, {refused} refused"
        );
    }

    /// Shapes NumPy multiplies but `matmul` refuses (more than 3 axes) and shapes NumPy
    /// refuses: `product` gives `None` (a typed error in `matmul`), never a wrong shape.
    #[test]
    fn products_of_more_axes_or_mismatched_shapes_are_refused() {
        let mut rng = Rng(77);
        for _ in 0..2000 {
            let (na, nb) = (rng.below(6), rng.below(6));
            let (sa, sb) = (random_shape(&mut rng, na), random_shape(&mut rng, nb));
            match (product(&sa, &sb), numpy_shape(&sa, &sb)) {
                (Some(p), Some(shape)) => {
                    assert!(na <= 3 && nb <= 3, "{sa:?} @ {sb:?}");
                    assert_eq!(p.shape, shape, "{sa:?} @ {sb:?}");
                }
                (Some(p), None) => panic!("{sa:?} @ {sb:?}: NumPy refuses, product gives {p:?}"),
                (None, Some(shape)) => assert!(
                    na > 3 || nb > 3,
                    "{sa:?} @ {sb:?}: NumPy gives {shape:?}, product refuses"
                ),
                (None, None) => {}
            }
        }
        assert_eq!(product(&[2, 1, 3, 4], &[5, 4, 2]), None);
        assert_eq!(numpy_shape(&[2, 1, 3, 4], &[5, 4, 2]), Some(vec![2, 5, 3, 2]));
    }
}
