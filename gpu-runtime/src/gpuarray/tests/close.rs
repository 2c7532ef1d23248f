//! `isclose` and `nan_to_num` with no GPU: their kernels compile with NVRTC, and `isclose`'s
//! text is NumPy's asymmetric formula.

use crate::gpuarray::expr::close::test_sources;
use crate::gpuarray::tests::compiles;

#[test]
fn isclose_and_nan_to_num_kernels_compile() {
    let sources = test_sources();
    assert_eq!(sources.len(), 10);
    for (name, s) in &sources {
        compiles(name, s);
    }
    // `|a - b| <= atol + rtol * |b|`: the tolerance scales with the second operand only.
    let (_, first) = &sources[0];
    assert!(first.contains("isfinite"), "{first}");
    let (_, with_nan) = &sources[2];
    assert!(with_nan.contains("isnan"), "{with_nan}");
}
