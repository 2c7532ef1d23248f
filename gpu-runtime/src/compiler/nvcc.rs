//! Compiling with the `nvcc` program in a temporary build directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use std::borrow::Cow;

use crate::compiler::build_dir::make_build_dir;
use crate::compiler::nvrtc::{CompiledModule, Target};
use crate::compiler::target::parse_target;
use crate::error::{CompileError, Error, Result};

/// One nvcc compile: the program, the architecture, and the source with its options.
pub(crate) struct Job<'a> {
    pub(crate) nvcc: &'a Path,
    pub(crate) arch: &'a str,
    pub(crate) code: Option<&'a str>,
    /// The file name of the source in the build directory, and in messages.
    pub(crate) source_name: &'a str,
    /// The text compiled.
    pub(crate) text: &'a str,
    /// The source as written, shown in compile errors.
    pub(crate) source: &'a str,
    pub(crate) options: &'a [String],
    /// Headers given in memory (`SourceModule::header`): written under `headers/` in the build
    /// directory, which nvcc searches first.
    pub(crate) headers: &'a [crate::compiler::source_module::MemoryHeader],
    pub(crate) kernels: &'a [Cow<'static, str>],
    /// The compiler's description; its last line names it in errors.
    pub(crate) label: &'a str,
    /// Keep the build directory, and say where it is.
    pub(crate) keep: bool,
}

/// Runs `nvcc --cubin` (or `--ptx` for a `compute_XY` target) on the job's source.
pub(crate) fn compile(job: &Job<'_>) -> Result<(CompiledModule, Option<PathBuf>)> {
    let (arch, code) = (job.arch, job.code);
    // The image's kind follows what nvcc is asked to emit last: -code if given, else -arch.
    let target = parse_target(code.unwrap_or(arch))?;
    let (flag, ext) = match target {
        Target::Cubin { .. } => ("--cubin", "cubin"),
        Target::Ptx { .. } => ("--ptx", "ptx"),
    };
    let dir = make_build_dir()?;
    let result = run(job, &dir, flag, ext, target);
    if job.keep {
        eprintln!("gpu-runtime: nvcc build directory kept in {}", dir.display());
        result.map(|m| (m, Some(dir)))
    } else {
        let _ = std::fs::remove_dir_all(&dir);
        result.map(|m| (m, None))
    }
}

fn run(job: &Job<'_>, dir: &Path, flag: &str, ext: &str, target: Target) -> Result<CompiledModule> {
    let (nvcc, arch, code) = (job.nvcc, job.arch, job.code);
    // Names the file, not just the build directory, in the error.
    let io = |action: &'static str, file: &Path| {
        let path = file.display().to_string();
        move |source: std::io::Error| Error::Io { action, path, source }
    };
    let source_name = job.source_name;
    let source_file = dir.join(source_name);
    std::fs::write(&source_file, job.text.as_bytes()).map_err(io("write", &source_file))?;
    let output = format!("kernel.{ext}");
    let mut args: Vec<String> = vec![flag.into(), format!("-arch={arch}")];
    if let Some(code) = code {
        args.push(format!("-code={code}"));
    }
    if !job.headers.is_empty() {
        let root = dir.join("headers");
        for (name, contents) in job.headers {
            // A name that would leave the folder (`../x.h`, `/abs.h`) cannot be a file in it:
            // nvcc then finds that header where its `#include` says, or says it cannot.
            let inside = std::path::Path::new(name.as_ref())
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
            if !inside {
                continue;
            }
            let file = root.join(name.as_ref());
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent).map_err(io("create", parent))?;
            }
            std::fs::write(&file, contents).map_err(io("write", &file))?;
        }
        args.push("-Iheaders".into());
    }
    args.extend(job.options.iter().cloned());
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
            compiler: job.label.lines().last().unwrap_or("nvcc").to_owned(),
            options: command,
            source_name: source_name.to_owned(),
            log,
            source_code: job.source.to_owned(),
        }));
    }
    let output_file = dir.join(&output);
    let mut image = std::fs::read(&output_file).map_err(io("read nvcc's output", &output_file))?;
    if matches!(target, Target::Ptx { .. }) && image.last() != Some(&0) {
        image.push(0);
    }
    Ok(CompiledModule {
        image,
        target,
        // With nvcc there are no name expressions: kernels are looked up by the names given.
        lowered_names: job.kernels.iter().map(|k| k.to_string()).collect(),
        log,
    })
}
