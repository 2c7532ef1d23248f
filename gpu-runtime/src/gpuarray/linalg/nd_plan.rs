//! NumPy's `matmul` of any number of batch axes and N-d `dot`, as pure functions of shapes and
//! strides (unit-tested without a GPU): the result's shape, each operand's strides broadcast
//! over the batch axes, and whether several axes step through memory as one (so that a batch
//! of any number of axes is one strided batch for cuBLAS without a copy).

use crate::gpuarray::kernels::broadcast::broadcast_shapes;

/// A product `a @ b` of any number of axes by NumPy's `matmul`: the broadcast batch axes, the
/// matrix sizes, and the result's shape (a vector's axis dropped, as NumPy does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NdProduct {
    pub batch: Vec<usize>,
    pub m: usize,
    pub k: usize,
    pub n: usize,
    pub shape: Vec<usize>,
}

/// The shape of a matrix operand: a 1-D `a` a row `(1, k)`, a 1-D `b` a column `(k, 1)`.
fn as_matrix(shape: &[usize], is_left: bool) -> Vec<usize> {
    match shape {
        &[k] if is_left => vec![1, k],
        &[k] => vec![k, 1],
        s => s.to_vec(),
    }
}

/// NumPy's `matmul` of shapes `a` and `b` (no 0-d operand; the batch axes broadcast by
/// NumPy's rules), or `None` when they do not multiply.
pub(crate) fn nd_product(a: &[usize], b: &[usize]) -> Option<NdProduct> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (a2, b2) = (as_matrix(a, true), as_matrix(b, false));
    let (na, nb) = (a2.len(), b2.len());
    let (m, k, k2, n) = (a2[na - 2], a2[na - 1], b2[nb - 2], b2[nb - 1]);
    if k != k2 {
        return None;
    }
    let batch = broadcast_shapes(&[&a2[..na - 2], &b2[..nb - 2]]).ok()?;
    let mut shape = batch.clone();
    if a.len() > 1 {
        shape.push(m);
    }
    if b.len() > 1 {
        shape.push(n);
    }
    Some(NdProduct {
        batch,
        m,
        k,
        n,
        shape,
    })
}

/// The shape and strides of an operand as matrices broadcast to `batch` (a vector as a row or a
/// column of stride 0 across; a batch axis it lacks or has of length 1 with stride 0).
pub(crate) fn broadcast_matrices(
    shape: &[usize],
    strides: &[isize],
    is_left: bool,
    batch: &[usize],
) -> (Vec<usize>, Vec<isize>) {
    let (mshape, mstrides): (Vec<usize>, Vec<isize>) = match (shape, strides) {
        (&[k], &[s]) if is_left => (vec![1, k], vec![0, s]),
        (&[k], &[s]) => (vec![k, 1], vec![s, 0]),
        _ => (shape.to_vec(), strides.to_vec()),
    };
    let own = mshape.len() - 2;
    let mut out_shape = batch.to_vec();
    let mut out_strides = vec![0isize; batch.len()];
    for j in 0..own {
        // Axis `j` of the operand's batch is axis `batch.len() - own + j` of the broadcast one.
        let at = batch.len() - own + j;
        if mshape[j] != 1 {
            out_strides[at] = mstrides[j];
        }
    }
    out_shape.extend_from_slice(&mshape[own..]);
    out_strides.extend_from_slice(&mstrides[own..]);
    (out_shape, out_strides)
}

/// The axes `dims` with `strides` as one axis of `(length, stride)`, when one stride steps
/// through them all in C order (axes of length 1 ignored; every stride 0 is a broadcast, one
/// element repeated, stride 0); `None` when they do not.
pub(crate) fn merge_axes(dims: &[usize], strides: &[isize]) -> Option<(usize, isize)> {
    let len: usize = dims.iter().product();
    if len == 0 {
        return Some((0, 0));
    }
    let kept: Vec<(usize, isize)> = dims
        .iter()
        .zip(strides)
        .filter(|&(&d, _)| d != 1)
        .map(|(&d, &s)| (d, s))
        .collect();
    let Some(&(_, last)) = kept.last() else {
        return Some((len, 0));
    };
    for w in kept.windows(2) {
        let ((_, outer), (d, inner)) = (w[0], w[1]);
        if outer != inner.checked_mul(d as isize)? {
            return None;
        }
    }
    Some((len, last))
}

/// NumPy's `dot` result shape for `a` and `b` of which at least one has more than 2 axes and
/// `b` at least 2: `a.shape[:-1] + b.shape[:-2] + b.shape[-1:]`, summing over `a`'s last axis
/// and `b`'s second to last; `None` when those differ.
pub(crate) fn dot_shape(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let (na, nb) = (a.len(), b.len());
    if na == 0 || nb < 2 || a[na - 1] != b[nb - 2] {
        return None;
    }
    let mut shape = a[..na - 1].to_vec();
    shape.extend_from_slice(&b[..nb - 2]);
    shape.push(b[nb - 1]);
    Some(shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NumPy: `np.matmul(np.ones((2,1,3,4)), np.ones((5,4,6))).shape == (2,5,3,6)`, and so on.
    #[test]
    fn batch_axes_broadcast_as_numpy() {
        let p = nd_product(&[2, 1, 3, 4], &[5, 4, 6]).unwrap();
        assert_eq!((p.batch.clone(), p.m, p.k, p.n), (vec![2, 5], 3, 4, 6));
        assert_eq!(p.shape, vec![2, 5, 3, 6]);
        assert_eq!(nd_product(&[4], &[7, 2, 4, 3]).unwrap().shape, vec![7, 2, 3]);
        assert_eq!(nd_product(&[7, 2, 3, 4], &[4]).unwrap().shape, vec![7, 2, 3]);
        assert_eq!(nd_product(&[4], &[4]).unwrap().shape, Vec::<usize>::new());
        assert_eq!(
            nd_product(&[0, 3, 4], &[1, 1, 4, 2]).unwrap().shape,
            vec![1, 0, 3, 2]
        );
        assert!(nd_product(&[2, 3, 4], &[3, 4, 5]).is_none(), "batch 2 against 3");
        assert!(nd_product(&[3, 4], &[5, 6]).is_none(), "k 4 against 5");
        assert!(nd_product(&[], &[3]).is_none(), "0-d");
    }

    #[test]
    fn operands_broadcast_with_stride_zero() {
        // (3, 4) C order against a batch (2, 5): both batch axes stride 0.
        let (s, st) = broadcast_matrices(&[3, 4], &[4, 1], true, &[2, 5]);
        assert_eq!((s, st), (vec![2, 5, 3, 4], vec![0, 0, 4, 1]));
        // (5, 1, 4, 6): the axis of 1 broadcast, the 5 kept.
        let (s, st) = broadcast_matrices(&[5, 1, 4, 6], &[24, 24, 6, 1], false, &[5, 7]);
        assert_eq!((s, st), (vec![5, 7, 4, 6], vec![24, 0, 6, 1]));
        // Vectors: a row of a, a column of b.
        assert_eq!(
            broadcast_matrices(&[4], &[2], true, &[3]),
            (vec![3, 1, 4], vec![0, 0, 2])
        );
        assert_eq!(
            broadcast_matrices(&[4], &[-1], false, &[]),
            (vec![4, 1], vec![-1, 0])
        );
    }

    #[test]
    fn axes_merge_when_one_stride_steps_through_them() {
        assert_eq!(merge_axes(&[2, 3], &[36, 12]), Some((6, 12)));
        assert_eq!(merge_axes(&[2, 1, 3], &[36, 99, 12]), Some((6, 12)));
        assert_eq!(merge_axes(&[2, 3], &[12, 36]), None, "transposed batch axes");
        assert_eq!(merge_axes(&[2, 3], &[0, 12]), None, "one axis broadcast");
        assert_eq!(merge_axes(&[2, 3], &[0, 0]), Some((6, 0)));
        assert_eq!(merge_axes(&[], &[]), Some((1, 0)));
        assert_eq!(merge_axes(&[4, 0], &[1, 1]), Some((0, 0)));
    }

    /// NumPy: `np.dot(np.ones((2,3,4)), np.ones((5,4,6))).shape == (2,3,5,6)`.
    #[test]
    fn dot_sums_over_the_last_and_second_to_last_axes() {
        assert_eq!(dot_shape(&[2, 3, 4], &[5, 4, 6]), Some(vec![2, 3, 5, 6]));
        assert_eq!(dot_shape(&[4], &[5, 4, 6]), Some(vec![5, 6]));
        assert_eq!(dot_shape(&[2, 3, 4], &[4, 6]), Some(vec![2, 3, 6]));
        assert_eq!(dot_shape(&[2, 3, 4], &[5, 3, 6]), None);
    }
}
