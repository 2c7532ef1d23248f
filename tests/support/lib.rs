//! Support for the suite's tests and benches: seeded random data and comparisons
//! against CPU references, the views the elementwise tests run on ([`views`]), and the Jacobi
//! solver of the GPU-loop example, bench and tests ([`solver`]).

// The solver is the graph_solver example's own module (the example is self-contained, as a
// user would copy it); the tests and the report bench use that same file.
#[path = "../../examples/graph_solver/solver.rs"]
pub mod solver;
pub mod views;

/// A small, seeded xorshift generator: reproducible random test data without a dependency.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value; 0 is remapped).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A float uniform in `[-1, 1)`.
    pub fn f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    /// A double uniform in `[-1, 1)`.
    pub fn f64(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    /// `n` floats uniform in `[-1, 1)`.
    pub fn vec_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
}

/// The index and values of the first element where `got` and `want` differ by more than
/// `tol * (1 + |want|)`, if any.
pub fn first_mismatch(got: &[f32], want: &[f32], tol: f32) -> Option<(usize, f32, f32)> {
    assert_eq!(got.len(), want.len(), "lengths differ");
    got.iter()
        .zip(want)
        .enumerate()
        // Written so that a NaN on either side counts as a mismatch.
        .find(|(_, (g, w))| {
            (*g - *w).abs().partial_cmp(&(tol * (1.0 + w.abs()))) != Some(std::cmp::Ordering::Less)
                && *g != *w
        })
        .map(|(i, (g, w))| (i, *g, *w))
}

/// Panics with the first mismatch when `got` and `want` differ beyond `tol`.
#[track_caller]
pub fn assert_close(got: &[f32], want: &[f32], tol: f32) {
    if let Some((i, g, w)) = first_mismatch(got, want, tol) {
        panic!("element {i}: got {g}, want {w} (tolerance {tol})");
    }
}

/// Runs the ignored test `test` of the current test binary again (its whole name, as `--list`
/// prints it: `module::name` in a crate of modules), in a child process with the environment
/// variables `vars` set, and returns whether it passed and everything it printed.
/// A test plays the child's part when it finds its variable set: for work that must not run
/// in the parent's process (a kernel fault, a second process's view of IPC memory, a fresh
/// default context).
pub fn rerun_test_in_child(test: &str, vars: &[(&str, &str)]) -> (bool, String) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(exe)
        .args([test, "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .envs(vars.iter().copied())
        .output()
        .expect("the test binary runs again");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success() && text.contains("1 passed"), text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_seeded_and_spread() {
        let a = Rng::new(7).vec_f32(1000);
        assert_eq!(a, Rng::new(7).vec_f32(1000));
        assert_ne!(a, Rng::new(8).vec_f32(1000));
        assert!(a.iter().all(|v| (-1.0..1.0).contains(v)));
        assert!(a.iter().any(|v| *v < -0.5) && a.iter().any(|v| *v > 0.5));
    }

    #[test]
    fn mismatch_is_found_and_tolerance_respected() {
        assert_eq!(first_mismatch(&[1.0, 2.0], &[1.0, 2.0000001], 1e-6), None);
        assert_eq!(
            first_mismatch(&[1.0, 2.5], &[1.0, 2.0], 1e-6),
            Some((1, 2.5, 2.0))
        );
        assert!(first_mismatch(&[f32::NAN], &[1.0], 1e-3).is_some());
    }
}
