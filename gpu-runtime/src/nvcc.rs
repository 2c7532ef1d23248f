//! Compiling with the `nvcc` program in a temporary build directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::compiler::{CompiledModule, Target};
use crate::error::{CompileError, Error, Result};
use crate::source_module::{make_build_dir, parse_target, Plan};

/// Runs `nvcc --cubin` (or `--ptx` for a `compute_XY` target) on the plan's source.
pub(crate) fn compile(
    plan: &Plan<'_>,
    nvcc: &Path,
    arch: &str,
    code: Option<&str>,
) -> Result<(CompiledModule, Option<PathBuf>)> {
    // The image's kind follows what nvcc is asked to emit last: -code if given, else -arch.
    let target = parse_target(code.unwrap_or(arch))?;
    let (flag, ext) = match target {
        Target::Cubin { .. } => ("--cubin", "cubin"),
        Target::Ptx { .. } => ("--ptx", "ptx"),
    };
    let dir = make_build_dir()?;
    let result = run(plan, nvcc, arch, code, &dir, flag, ext, target);
    if plan.spec_keep() {
        eprintln!("gpu-runtime: nvcc build directory kept in {}", dir.display());
        result.map(|m| (m, Some(dir)))
    } else {
        let _ = std::fs::remove_dir_all(&dir);
        result.map(|m| (m, None))
    }
}

#[allow(clippy::too_many_arguments)]
fn run(
    plan: &Plan<'_>,
    nvcc: &Path,
    arch: &str,
    code: Option<&str>,
    dir: &Path,
    flag: &str,
    ext: &str,
    target: Target,
) -> Result<CompiledModule> {
    let io = |e: std::io::Error| Error::Io {
        path: dir.display().to_string(),
        message: e.to_string(),
    };
    let source_name = plan.spec_name();
    std::fs::write(dir.join(source_name), plan.text.as_bytes()).map_err(io)?;
    let output = format!("kernel.{ext}");
    let mut args: Vec<String> = vec![flag.into(), format!("-arch={arch}")];
    if let Some(code) = code {
        args.push(format!("-code={code}"));
    }
    args.extend(plan.options.iter().cloned());
    args.extend(["-o".into(), output.clone(), source_name.to_owned()]);
    let out = Command::new(nvcc)
        .args(&args)
        .current_dir(dir)
        .output()
        .map_err(|e| Error::CompilerNotFound {
            compiler: nvcc.display().to_string(),
            reason: e.to_string(),
        })?;
    let mut log = String::from_utf8_lossy(&out.stderr).into_owned();
    log.push_str(&String::from_utf8_lossy(&out.stdout));
    let log = log.trim_end().to_owned();
    if !out.status.success() {
        let mut command = vec![nvcc.display().to_string()];
        command.extend(args);
        return Err(Error::Compile(CompileError {
            compiler: plan.compiler_label.lines().last().unwrap_or("nvcc").to_owned(),
            options: command,
            source_name: source_name.to_owned(),
            log,
            source_code: plan.spec.source().to_owned(),
        }));
    }
    let mut image = std::fs::read(dir.join(&output)).map_err(io)?;
    if matches!(target, Target::Ptx { .. }) && image.last() != Some(&0) {
        image.push(0);
    }
    Ok(CompiledModule {
        image,
        target,
        // With nvcc there are no name expressions: kernels are looked up by the names given.
        lowered_names: plan.spec.kernel_names().iter().map(|k| k.to_string()).collect(),
        log,
    })
}
