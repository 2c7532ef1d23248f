// A handle from raw driver calls is taken only with the caller's promise to keep the object
// and its memory alive and ordered.
use gpu_runtime::driver::TextureObject;

fn main() {
    let unchecked = TextureObject::from_raw(0x1234);
    assert_eq!(unchecked.raw(), 0x1234);
}
