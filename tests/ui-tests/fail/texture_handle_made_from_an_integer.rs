// A texture handle is not an integer anyone can wrap: its fields are private.
use gpu_runtime::driver::TextureObject;

fn main() {
    let _made_up = TextureObject(0x1234);
}
