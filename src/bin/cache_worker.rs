//! Helper for tests/cache.rs: compiles one fixed kernel through the compile cache in a process
//! of its own and prints `status=… key=… bytes=…`. Takes the cache directory as its argument
//! (`-` for the default one); reads the cache's environment variables as any program would.

use gpu_runtime::SourceModule;

pub const SOURCE: &str = "__global__ void twice(float *x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] *= 2.0f;\n}\n";

fn main() {
    let dir = std::env::args().nth(1).expect("usage: cache_worker DIR|-");
    let mut m = SourceModule::new(SOURCE).arch("sm_90");
    if dir != "-" {
        m = m.cache_dir(Some(dir));
    }
    match m.compile_report() {
        Ok(r) => println!(
            "status={:?} key={} bytes={}",
            r.status,
            r.key.to_hex(),
            r.module.image.len()
        ),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
