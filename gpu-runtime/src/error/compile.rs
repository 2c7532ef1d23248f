//! [`CompileError`]: CUDA C that failed to compile, with the log and the lines it names.

/// CUDA C that failed to compile, with the compiler's log and the source lines it points at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct CompileError {
    /// The compiler and its version, e.g. `NVRTC 13.5`.
    pub compiler: String,
    /// The options the compiler was called with.
    pub options: Vec<String>,
    /// The name the source was compiled under (appears in the log, e.g. `axpy.cu(3): error`).
    pub source_name: String,
    /// The compiler's log, unchanged.
    pub log: String,
    /// The source, kept to show the lines the log refers to.
    pub source_code: String,
}

impl CompileError {
    /// Line numbers (1-based) that the log reports errors or warnings on.
    pub fn reported_lines(&self) -> Vec<usize> {
        // The macro's build-time check reads logs with the same parser, so the lines it
        // reports at build time are the ones shown here at run time.
        gpu_cuda_source::nvrtc_log::reported_lines(&self.log, &self.source_name)
    }

    /// The source with line numbers, two lines either side of each reported line.
    pub fn source_excerpt(&self) -> String {
        let src: Vec<&str> = self.source_code.lines().collect();
        let mut shown = vec![false; src.len()];
        for line in self.reported_lines() {
            let lo = line.saturating_sub(3);
            let hi = (line + 2).min(src.len());
            for s in shown.iter_mut().take(hi).skip(lo) {
                *s = true;
            }
        }
        let reported = self.reported_lines();
        let mut out = String::new();
        let mut last = None;
        for (i, text) in src.iter().enumerate() {
            if !shown[i] {
                continue;
            }
            if last.is_some_and(|l: usize| l + 1 != i) {
                out.push_str("      ...\n");
            }
            let marker = if reported.contains(&(i + 1)) { '>' } else { ' ' };
            out.push_str(&format!("{marker}{:>4} | {text}\n", i + 1));
            last = Some(i);
        }
        out
    }

    fn render(&self) -> String {
        let mut s = format!(
            "CUDA C compilation of `{}` failed ({} with options {:?}):\n{}",
            self.source_name,
            self.compiler,
            self.options,
            self.log.trim_end()
        );
        let excerpt = self.source_excerpt();
        if !excerpt.is_empty() {
            s.push_str("\nsource:\n");
            s.push_str(excerpt.trim_end());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CompileError {
        CompileError {
            compiler: "NVRTC 13.0".into(),
            options: vec!["--gpu-architecture=sm_90".into()],
            source_name: "k.cu".into(),
            log: "k.cu(4): error: identifier \"q\" is undefined\n\n1 error detected\n".into(),
            source_code: "a\nb\nc\nd q\ne\nf\ng\nh\n".into(),
        }
    }

    #[test]
    fn compile_error_points_at_reported_lines() {
        let e = sample();
        assert_eq!(e.reported_lines(), vec![4]);
        let excerpt = e.source_excerpt();
        assert!(excerpt.contains(">   4 | d q"), "{excerpt}");
        assert!(excerpt.contains("    2 | b"));
        assert!(!excerpt.contains("    1 | a"));
        assert!(!excerpt.contains("| h"));
        let msg = e.to_string();
        assert!(msg.contains("identifier \"q\" is undefined"));
        assert!(msg.contains("sm_90"));
    }
}
