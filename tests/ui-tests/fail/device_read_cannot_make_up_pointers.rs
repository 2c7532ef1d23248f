// A safe implementation of `DeviceRead` cannot hand launches an arbitrary address or length:
// the trait's one method returns a `DeviceView`, which only real memory (or `unsafe`) makes.
use gpu_runtime::DeviceRead;

struct Bogus;

impl DeviceRead<f32> for Bogus {
    fn device_ptr(&self) -> u64 {
        0xdead_beef
    }
    fn len(&self) -> usize {
        1 << 40
    }
}

fn main() {}
