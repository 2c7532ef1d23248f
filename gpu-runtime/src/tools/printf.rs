//! Capturing what kernels `printf`, in the process, for tests.
//!
//! The driver writes a kernel's `printf` output to the process's standard output (file
//! descriptor 1) when the context synchronizes. [`capture_printf`] points descriptor 1 at a
//! private temporary file for the duration of a closure and a synchronize, then puts it back and
//! returns what was written. Descriptor 1 is the process's, not the thread's: while a capture
//! runs, whatever any thread writes to standard output is captured too (captures themselves are
//! serialized).

use crate::driver::context::core::Context;
use crate::error::{Error, Result};
use crate::sync::{LockRank, Mutex};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;

/// Runs `work` (launches whose kernels call `printf`), synchronizes `ctx`, and returns
/// `work`'s result with everything written to standard output meanwhile: the kernels' `printf`
/// output, in the order the driver wrote it.
///
/// ```no_run
/// use gpu_runtime::{kernel, Context};
/// use gpu_runtime::tools::capture_printf;
///
/// #[kernel(r#"
/// #include <cstdio>
/// __global__ void hello(int n) { if (threadIdx.x < n) printf("thread %d\n", threadIdx.x); }"#)]
/// fn hello(n: i32);
///
/// # fn main() -> gpu_runtime::Result<()> {
/// let ctx = Context::default()?;
/// let k = hello::prepare(&ctx)?;
/// let ((), out) = capture_printf(&ctx, || k.prepared_call(1, 32, 2))?;
/// let mut lines: Vec<&str> = out.lines().collect();
/// lines.sort();
/// assert_eq!(lines, ["thread 0", "thread 1"]);
/// # Ok(()) }
/// ```
pub fn capture_printf<R>(ctx: &Context, work: impl FnOnce() -> Result<R>) -> Result<(R, String)> {
    let (result, text) = capture_stdout(|| {
        let r = work();
        // The driver flushes the kernels' printf buffer to stdout when the context synchronizes.
        let synced = ctx.synchronize();
        r.and_then(|r| synced.map(|()| r))
    })?;
    Ok((result?, text))
}

/// Serializes captures: descriptor 1 can point at one file at a time.
static CAPTURING: Mutex<()> = Mutex::new(LockRank::PrintfCapture, ());

/// Runs `f` with standard output (descriptor 1) going to a temporary file, then restores it
/// and returns what was written, whether `f` succeeded or not.
pub(crate) fn capture_stdout<R>(f: impl FnOnce() -> R) -> Result<(R, String)> {
    let _one_at_a_time = CAPTURING.lock();
    // Each step names itself: "could not {action} standard output: ...".
    let io = |action: &'static str| {
        move |source: std::io::Error| Error::Io {
            action,
            path: "standard output".into(),
            source,
        }
    };
    let mut file = private_temp_file().map_err(io("create the temporary file that captures"))?;
    flush_all();
    // SAFETY: dup of descriptor 1, which exists for the whole process; the copy is closed by
    // `Restore`.
    let saved = unsafe { libc::dup(1) };
    if saved < 0 {
        return Err(io("save")(std::io::Error::last_os_error()));
    }
    let restore = Restore(saved);
    // SAFETY: both descriptors are open; descriptor 1 now refers to the file until `restore`.
    if unsafe { libc::dup2(file.as_raw_fd(), 1) } < 0 {
        return Err(io("redirect")(std::io::Error::last_os_error()));
    }
    let result = f();
    flush_all();
    drop(restore);
    let mut text = String::new();
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_string(&mut text))
        .map_err(io("read back the printf output captured from"))?;
    Ok((result, text))
}

/// Puts standard output back when dropped, so that a panic in the closure restores it too.
struct Restore(libc::c_int);

impl Drop for Restore {
    fn drop(&mut self) {
        flush_all();
        // SAFETY: `self.0` is the duplicate of the original descriptor 1 made above; it is
        // closed once, here.
        unsafe {
            libc::dup2(self.0, 1);
            libc::close(self.0);
        }
    }
}

/// Flushes Rust's and C's buffered standard output, so that text written before a switch of
/// descriptor 1 lands where it was meant to.
fn flush_all() {
    let _ = std::io::stdout().flush();
    // SAFETY: fflush(NULL) flushes every C stdio output stream; it takes no pointer of ours.
    unsafe { libc::fflush(std::ptr::null_mut()) };
}

/// A new file in the temporary directory that only this process can reach (removed from the
/// directory at once).
fn private_temp_file() -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = std::env::temp_dir();
    for attempt in 0..100u32 {
        let path = dir.join(format!(".gpu-runtime-printf-{}-{attempt}", std::process::id()));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(file) => {
                let _ = std::fs::remove_file(&path);
                return Ok(file);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        "no free temporary file name",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What C's printf writes (as the driver does) is captured, the closure's result comes
    /// back, and standard output works again afterwards.
    #[test]
    fn captures_what_c_writes_to_standard_output() {
        let values: Vec<i32> = (0..50).map(|i| i * 7919 % 1000 - 500).collect();
        let (sum, text) = capture_stdout(|| {
            for v in &values {
                // SAFETY: a NUL-terminated format with one %d for one c_int.
                unsafe { libc::printf(c"value %d\n".as_ptr(), *v) };
            }
            values.iter().sum::<i32>()
        })
        .unwrap();
        assert_eq!(sum, values.iter().sum::<i32>());
        let want: String = values.iter().map(|v| format!("value {v}\n")).collect();
        assert_eq!(text, want);
        // (`print!` would go to the test harness's capture, not to descriptor 1.)
        let (_, again) = capture_stdout(|| std::io::stdout().write_all(b"from Rust")).unwrap();
        assert_eq!(again, "from Rust");
    }
}
