//! Structured copies: rectangles and boxes between host memory, device memory and CUDA arrays
//! (PyCUDA's `Memcpy2D` and `Memcpy3D`).
//!
//! A copy is built, checked, then run. Every end is borrowed for the builder's lifetime, and
//! every extent is checked against the memory it touches before the driver is called:
//!
//! ```no_run
//! use gpu_runtime::{Context, driver::Memcpy2D};
//! let ctx = Context::default()?;
//! let host: Vec<f32> = (0..64 * 48).map(|i| i as f32).collect(); // 48 rows of 64
//! let mut dev = ctx.alloc_pitch::<f32>(16, 8)?;
//! let pitch = dev.pitch();
//! // The 16 x 8 block whose top-left corner is column 10, row 20 of the host image.
//! Memcpy2D::new(16 * 4, 8)
//!     .src_host(&host, 64 * 4)
//!     .src_pos(10 * 4, 20)
//!     .dst_device(&mut dev, pitch)
//!     .call()?;
//! # Ok::<(), gpu_runtime::Error>(())
//! ```

mod copy2d;
mod copy3d;
mod ends;
#[cfg(test)]
mod tests;

pub use copy2d::Memcpy2D;
pub use copy3d::Memcpy3D;
