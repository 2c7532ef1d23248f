//! Argument checks of run-time typed launches, without a GPU.

use super::arg::*;
#[allow(unused_imports)]
use crate::error::Error;

#[test]
fn host_arrays_fit_the_pointers_their_direction_allows() {
    let (a, mut b, mut c) = (vec![1f32; 4], vec![0f32; 4], vec![0f32; 4]);
    let input = Arg::host_in(&a);
    let output = Arg::host_out(&mut b);
    let both = Arg::host_in_out(&mut c);
    // In reads only: fits `const T *` and `T *`; Out and InOut need a writable `T *`.
    assert!(input.fits(ArgType::ConstPtr) && input.fits(ArgType::MutPtr));
    assert!(!output.fits(ArgType::ConstPtr) && output.fits(ArgType::MutPtr));
    assert!(!both.fits(ArgType::ConstPtr) && both.fits(ArgType::MutPtr));
    assert!(!input.fits(ArgType::F32));
    assert_eq!(input.elem_size(), Some(4));
    assert!(output.describe().contains("host_out"));
    let Arg::Host(h) = &both else { panic!("{both:?}") };
    assert_eq!((h.bytes, h.direction), (16, Direction::InOut));
}

#[test]
fn a_non_contiguous_array_is_refused_when_copied() {
    let m = ndarray::Array2::<f64>::zeros((3, 5));
    let t = m.t();
    let Arg::Host(h) = Arg::host_in(&t) else { panic!() };
    assert!(matches!(h.checked_ptr(), Err(Error::NotContiguous { .. })));
    let Arg::Host(h) = Arg::host_in(&m) else { panic!() };
    assert_eq!((h.checked_ptr().is_ok(), h.bytes, h.elem_size), (true, 120, 8));
}
