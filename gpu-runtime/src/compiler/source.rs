//! A CUDA C source as the `#[kernel]` macro knows it at compile time: the text, the local
//! headers it includes, the kernels to take from it, the options, and images compiled ahead of
//! time. Compiling it needs NVRTC, not a GPU; a context loads it (`driver::module::cache`).
//!
//! Everything a compile reads is in the binary: the text and every header it includes from its
//! own folder and its `include_dirs` (given to NVRTC in memory, by the name the `#include`
//! gives), so a program compiles its kernels the same wherever it runs, and no path of the
//! machine that built it is kept. [`SourceOnDisk`] says where those files were, relative to the
//! crate's root, for `GPU_RUNTIME_SOURCE_DIR` (reading them from disk instead, to edit kernels
//! without building again: `disk.rs`).

use crate::compiler::embedded::{getters, EmbeddedImage};
use crate::compiler::nvrtc::{self, Target};
use crate::error::{Error, Result};

/// A CUDA C source known at compile time, and the kernels to take from it.
///
/// The `#[kernel]` macro emits one `static` of this type per source; its address identifies the
/// module in each context's cache, so preparing a kernel never hashes the source.
#[derive(Debug)]
pub struct ModuleSource {
    name: &'static str,
    source: &'static str,
    kernels: &'static [&'static str],
    options: &'static [&'static str],
    /// For a module linked from several sources: the sources (`source` is then empty).
    parts: &'static [SourcePart],
    /// Images compiled at build time (`embed = [...]`), tried before compiling.
    images: &'static [EmbeddedImage],
    /// Whether NVRTC includes the prelude before the source (`prelude = false` turns it off).
    prelude: bool,
    /// The headers the source includes from its folder and include directories, read at build
    /// time: NVRTC is given them in memory.
    headers: &'static [SourceHeader],
    /// Where the source and its headers were, relative to the crate's root.
    on_disk: Option<&'static SourceOnDisk>,
}

/// A header compiled with a [`ModuleSource`]: the name an `#include` gives it and its bytes,
/// read when the crate was built.
#[derive(Debug)]
pub struct SourceHeader {
    name: &'static str,
    contents: &'static [u8],
}

impl SourceHeader {
    /// The header `#include`d as `name` (e.g. `"cuda_utils.cuh"`), with `contents`.
    pub const fn new(name: &'static str, contents: &'static [u8]) -> SourceHeader {
        SourceHeader { name, contents }
    }

    getters! {
        /// The name an `#include` gives it.
        name: &'static str;
        /// Its bytes, as read at build time.
        contents: &'static [u8];
    }
}

/// Where a `#[kernel]`'s source and headers were when it was built, relative to the root of the
/// crate that declares it (the directory of its `Cargo.toml`): what `GPU_RUNTIME_SOURCE_DIR`
/// reads them from instead of the copies in the binary.
#[derive(Debug)]
pub struct SourceOnDisk {
    package: &'static str,
    file: Option<&'static str>,
    include_dirs: &'static [&'static str],
}

impl SourceOnDisk {
    /// The source of package `package` (its `Cargo.toml` name): the kernel file `file` (`None`
    /// for a source written in the attribute) and the `include_dirs`, each relative to the
    /// package's root.
    pub const fn new(
        package: &'static str,
        file: Option<&'static str>,
        include_dirs: &'static [&'static str],
    ) -> SourceOnDisk {
        SourceOnDisk {
            package,
            file,
            include_dirs,
        }
    }

    getters! {
        /// The package (crate) name.
        package: &'static str;
        /// The kernel file, relative to the package's root.
        file: Option<&'static str>;
        /// The include directories, relative to the package's root.
        include_dirs: &'static [&'static str];
    }
}

/// One source of a module linked from several (see [`ModuleSource::linked`]).
#[derive(Debug)]
pub struct SourcePart {
    name: &'static str,
    source: &'static str,
    kernels: &'static [&'static str],
}

impl SourcePart {
    /// A source named `name`, its text, and the kernels of the module it declares.
    pub const fn new(
        name: &'static str,
        source: &'static str,
        kernels: &'static [&'static str],
    ) -> SourcePart {
        SourcePart {
            name,
            source,
            kernels,
        }
    }
}

impl ModuleSource {
    /// A source named `name` (used in compiler messages, e.g. `axpy.cu`), its text, the
    /// `__global__` functions to load from it, and extra NVRTC options.
    pub const fn new(
        name: &'static str,
        source: &'static str,
        kernels: &'static [&'static str],
        options: &'static [&'static str],
    ) -> ModuleSource {
        ModuleSource {
            name,
            source,
            kernels,
            options,
            parts: &[],
            images: &[],
            prelude: true,
            headers: &[],
            on_disk: None,
        }
    }

    /// A module linked from several sources compiled as relocatable device code (with the
    /// device runtime `cudadevrt` when it is found, for kernels that launch kernels). `kernels`
    /// lists every kernel of the module in order; each part lists those it declares, in the
    /// same order.
    pub const fn linked(
        name: &'static str,
        parts: &'static [SourcePart],
        kernels: &'static [&'static str],
        options: &'static [&'static str],
    ) -> ModuleSource {
        ModuleSource {
            parts,
            ..ModuleSource::new(name, "", kernels, options)
        }
    }

    /// The same source with the headers it includes from its folder and include directories,
    /// given to NVRTC in memory (`#[kernel]` reads them at build time).
    pub const fn with_headers(self, headers: &'static [SourceHeader]) -> ModuleSource {
        ModuleSource { headers, ..self }
    }

    /// The same source, with where it was on disk (for `GPU_RUNTIME_SOURCE_DIR`).
    pub const fn with_disk_paths(self, on_disk: &'static SourceOnDisk) -> ModuleSource {
        ModuleSource {
            on_disk: Some(on_disk),
            ..self
        }
    }

    /// The same source with images compiled ahead of time (`#[kernel(…, embed = […])]`):
    /// loading picks the best one for the device and compiles the source only when none fits.
    pub const fn with_images(self, images: &'static [EmbeddedImage]) -> ModuleSource {
        ModuleSource { images, ..self }
    }

    /// The same source compiled without the [`NVRTC_PRELUDE`](crate::compiler::NVRTC_PRELUDE)
    /// (`#[kernel(…, prelude = false)]`), for a source that gives one of its names another
    /// meaning. For a single source: the sources of a [`linked`](Self::linked) module are
    /// compiled with it.
    pub const fn without_prelude(self) -> ModuleSource {
        ModuleSource {
            prelude: false,
            ..self
        }
    }

    getters! {
        /// Whether NVRTC includes the [`NVRTC_PRELUDE`](crate::compiler::NVRTC_PRELUDE) before the source
        /// (true unless [`without_prelude`](Self::without_prelude)).
        prelude: bool;
        /// The images embedded ahead of time, if any.
        images: &'static [EmbeddedImage];
        /// The headers compiled with the source, in memory.
        headers: &'static [SourceHeader];
        /// Where the source and its headers were when the crate was built, relative to its root.
        on_disk: Option<&'static SourceOnDisk>;
        /// The CUDA C source text.
        source: &'static str;
        /// The kernels taken from the source, in the order `Function::prepare` indexes them.
        kernels: &'static [&'static str];
        /// The file name compiler messages use, e.g. `axpy.cu`.
        name: &'static str;
        /// The extra compiler options given with the source.
        options: &'static [&'static str];
    }

    /// True when the module is linked from several sources (`#[kernel(files = [...])]`).
    pub(crate) fn is_linked(&self) -> bool {
        !self.parts.is_empty()
    }

    /// Compiles the source for `target` without loading it: needs NVRTC, not a GPU.
    pub fn compile(&self, target: Target) -> Result<nvrtc::CompiledModule> {
        if self.parts.is_empty() {
            let headers: Vec<(&str, &[u8])> = self.headers.iter().map(|h| (h.name, h.contents)).collect();
            return nvrtc::compile_with(
                self.source,
                self.name,
                self.kernels,
                self.options,
                target,
                self.prelude,
                &headers,
            );
        }
        let cc = match target {
            Target::Cubin { major, minor } | Target::Ptx { major, minor } => (major, minor),
        };
        let mut m = crate::compiler::link::DynamicModule::new();
        for p in self.parts {
            m.add_source(p.source, p.name, p.kernels, self.options);
        }
        // Only kernels that launch kernels need the device runtime; without it they fail to
        // link with a message that says so.
        let _ = m.add_stdlib("cudadevrt");
        let mut compiled = m.link_image(target, cc)?;
        // Put the lowered names in the order of `kernels`.
        let order: Vec<&str> = self
            .parts
            .iter()
            .flat_map(|p| p.kernels.iter().copied())
            .collect();
        let mut lowered = Vec::with_capacity(self.kernels.len());
        for k in self.kernels {
            let i = order
                .iter()
                .position(|o| o == k)
                .ok_or_else(|| Error::KernelNotFound {
                    name: (*k).to_owned(),
                })?;
            lowered.push(compiled.lowered_names[i].clone());
        }
        compiled.lowered_names = lowered;
        Ok(compiled)
    }
}
