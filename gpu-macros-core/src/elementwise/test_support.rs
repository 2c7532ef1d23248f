//! What the unit tests of the elementwise files share: signatures parsed as the macro reads them.

use crate::elementwise::args::Item;
use crate::elementwise::params::{read_param, Param};

pub(super) fn sig(item: &str) -> Item {
    match syn::parse_str::<Item>(item) {
        Ok(i) => i,
        Err(e) => panic!("`{item}` does not parse: {e}"),
    }
}

pub(super) fn params(item: &str) -> Vec<Param> {
    sig(item)
        .sig
        .inputs
        .iter()
        .map(|a| read_param(a).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

pub(super) const AXPY: &str =
    "fn axpy(a: f32, x: &DeviceArray<f32>, y: &DeviceArrayView<f32, Ix2>, z: &mut DeviceArray<f32>);";
