//! CuPy beside the array rows: each section runs its own script in a `python3` subprocess,
//! when CuPy is importable on the machine.

use std::process::Command;

/// Whether `python3 -c "import cupy"` succeeds here.
pub fn importable() -> bool {
    Command::new("python3")
        .args(["-c", "import cupy"])
        .output()
        .is_ok_and(|probe| probe.status.success())
}

/// The figures a script prints (whitespace-separated numbers on its standard output) after a
/// prelude that defines `cp` and `t(f)`: the best of `rounds` CUDA-event timings of `f()`, in
/// seconds, after one untimed call. `None` when CuPy is not importable or the script printed
/// other than `count` numbers (said on standard error, with the end of the script's).
pub fn timed_figures(rounds: usize, body: &str, count: usize) -> Option<Vec<f64>> {
    if !importable() {
        return None;
    }
    let script = format!(
        r#"
import cupy as cp
def t(f):
    f()
    best = 1e9
    for _ in range({rounds}):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record(); f(); e.record(); e.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(s, e) / 1e3)
    return best
{body}"#
    );
    let out = Command::new("python3").args(["-c", &script]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Vec<f64> = text.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    if v.len() != count {
        // Said here, not left to the caller's "CuPy rows skipped": a script that prints the
        // wrong number of figures is a bench bug, not a machine without CuPy.
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(3).collect();
        eprintln!(
            "CuPy script printed {} figures where {count} were expected: {}",
            v.len(),
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        );
        return None;
    }
    Some(v)
}
