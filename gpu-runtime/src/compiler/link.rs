//! Modules linked from several pieces: CUDA sources compiled as relocatable device code, PTX,
//! cubins, fatbins, objects and device libraries such as `cudadevrt` (for kernels that launch
//! kernels). PyCUDA's `DynamicModule`.
//!
//! Linking runs on the CPU with nvJitLink (`libnvJitLink.so.13`), so an image can be built and
//! tested without a GPU; [`DynamicModule::load`] then loads it into a context.

use std::path::PathBuf;

use crate::compiler::nvjitlink;
use crate::compiler::nvrtc::{self, CompiledModule, Target};
use crate::error::{Error, Result};

/// What the bytes given to [`DynamicModule::add_data`] are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkInput {
    /// A device ELF (`.cubin`), relocatable (`-rdc`) or not.
    Cubin,
    /// PTX text (compiled by the linker for the target).
    Ptx,
    /// NVVM IR for link-time optimisation.
    LtoIr,
    /// A fat binary (`.fatbin`).
    Fatbin,
    /// A host object file with embedded device code (`.o`).
    Object,
    /// A static library of such objects (`.a`), e.g. `libcudadevrt.a`.
    Library,
}

impl LinkInput {
    fn code(self) -> u32 {
        match self {
            LinkInput::Cubin => 1,
            LinkInput::Ptx => 2,
            LinkInput::LtoIr => 3,
            LinkInput::Fatbin => 4,
            LinkInput::Object => 5,
            LinkInput::Library => 6,
        }
    }
}

struct Source {
    name: String,
    text: String,
    kernels: Vec<&'static str>,
    options: Vec<String>,
}

/// A module built from several CUDA sources and binary pieces, linked into one image.
///
/// Sources are compiled with `-rdc=true` (relocatable device code), so a kernel in one source
/// may call `__device__` functions or launch kernels defined in another. A kernel that
/// launches kernels (dynamic parallelism) needs `add_stdlib("cudadevrt")`.
///
/// ```no_run
/// use gpu_runtime::{Context, compiler::DynamicModule};
/// let ctx = Context::default()?;
/// let mut m = DynamicModule::new();
/// m.add_source("__device__ float twice(float x) { return 2 * x; }", "twice.cu", &[], &[])
///  .add_source(r#"
///     __device__ float twice(float x);
///     extern "C" __global__ void k(float *y) { y[threadIdx.x] = twice(y[threadIdx.x]); }"#,
///     "k.cu", &["k"], &[]);
/// m.add_stdlib("cudadevrt")?;
/// let linked = m.load(&ctx)?;
/// let k = linked.function("k")?;
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
#[derive(Default)]
pub struct DynamicModule {
    sources: Vec<Source>,
    data: Vec<(LinkInput, Vec<u8>, String)>,
}

impl std::fmt::Debug for DynamicModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicModule")
            .field(
                "sources",
                &self.sources.iter().map(|s| &s.name).collect::<Vec<_>>(),
            )
            .field("data", &self.data.iter().map(|d| (&d.2, d.0)).collect::<Vec<_>>())
            .finish()
    }
}

impl DynamicModule {
    /// An empty module.
    pub fn new() -> DynamicModule {
        DynamicModule::default()
    }

    /// Adds a CUDA C source named `name` (for messages), from which the `__global__`
    /// functions `kernels` are to be looked up, compiled with the extra NVRTC `options`.
    /// A kernel must be declared in the source that lists it (it may be defined in another).
    pub fn add_source(
        &mut self,
        source: impl Into<String>,
        name: &str,
        kernels: &[&'static str],
        options: &[&str],
    ) -> &mut DynamicModule {
        self.sources.push(Source {
            name: name.to_owned(),
            text: source.into(),
            kernels: kernels.to_vec(),
            options: options.iter().map(|o| o.to_string()).collect(),
        });
        self
    }

    /// Adds precompiled device code or a library.
    pub fn add_data(&mut self, data: impl Into<Vec<u8>>, kind: LinkInput, name: &str) -> &mut DynamicModule {
        let mut data = data.into();
        // nvJitLink reads PTX as a C string whatever size it is given: without a NUL it reads
        // past the buffer (seen as intermittent "bad input" errors).
        if kind == LinkInput::Ptx && data.last() != Some(&0) {
            data.push(0);
        }
        self.data.push((kind, data, name.to_owned()));
        self
    }

    /// Adds the CUDA device library `lib{name}.a` (e.g. `cudadevrt`, needed by kernels that
    /// launch kernels), found in `$CUDA_PATH/lib64`, `$CUDA_HOME/lib64`,
    /// `/usr/local/cuda/lib64` or a directory on `LD_LIBRARY_PATH` (where the PyPI wheel
    /// `nvidia-cuda-runtime` puts it). [`Error::LibraryNotFound`] lists the directories when
    /// it is in none of them.
    pub fn add_stdlib(&mut self, name: &str) -> Result<&mut DynamicModule> {
        let path = find_library(name)?;
        let bytes = std::fs::read(&path).map_err(|e| Error::LibraryNotFound {
            name: name.to_owned(),
            searched: format!("{} (found but unreadable: {e})", path.display()),
        })?;
        Ok(self.add_data(bytes, LinkInput::Library, &format!("lib{name}.a")))
    }

    /// Compiles every source for `target` and links everything into one cubin for the
    /// compute capability `cc`. Needs NVRTC and nvJitLink, not a GPU.
    pub fn link_image(&self, target: Target, cc: (u32, u32)) -> Result<CompiledModule> {
        let mut compiled = Vec::with_capacity(self.sources.len());
        let mut logs = Vec::new();
        for s in &self.sources {
            let mut options: Vec<&str> = vec!["-rdc=true"];
            options.extend(s.options.iter().map(String::as_str));
            let c = nvrtc::compile(&s.text, &s.name, &s.kernels, &options, target)?;
            if !c.log.is_empty() {
                logs.push(c.log.clone());
            }
            compiled.push(c);
        }
        let kind = match target {
            Target::Cubin { .. } => LinkInput::Cubin,
            Target::Ptx { .. } => LinkInput::Ptx,
        };
        let mut inputs: Vec<nvjitlink::Input<'_>> = self
            .sources
            .iter()
            .zip(&compiled)
            .map(|(s, c)| nvjitlink::Input {
                kind: kind.code(),
                // PTX keeps its trailing NUL: nvJitLink reads it as a C string.
                data: &c.image,
                name: &s.name,
            })
            .collect();
        inputs.extend(self.data.iter().map(|(k, d, n)| nvjitlink::Input {
            kind: k.code(),
            data: d,
            name: n,
        }));
        let image = nvjitlink::link(cc, &inputs).map_err(|e| self.explain(e))?;
        Ok(CompiledModule {
            image,
            target: Target::Cubin {
                major: cc.0,
                minor: cc.1,
            },
            lowered_names: compiled
                .iter()
                .flat_map(|c| c.lowered_names.iter().cloned())
                .collect(),
            log: logs.join("\n"),
        })
    }

    /// An undefined device-runtime symbol means the code launches kernels without cudadevrt.
    fn explain(&self, e: Error) -> Error {
        match e {
            Error::Link { linker, call, log }
                if log.contains("GetParameterBuffer") || log.contains("LaunchDevice") =>
            {
                Error::Link {
                    linker,
                    call,
                    log: format!(
                        "{log}\n(a kernel launches kernels: add the device runtime with \
                         `add_stdlib(\"cudadevrt\")`)"
                    ),
                }
            }
            e => e,
        }
    }

    /// The kernels to look up, in the order `LinkedModule::function` indexes them.
    pub(crate) fn kernel_names(&self) -> Vec<&'static str> {
        self.sources
            .iter()
            .flat_map(|s| s.kernels.iter().copied())
            .collect()
    }

    /// The text of each CUDA source, in the order they were added: what a loaded module keeps
    /// to read its kernels' declarations from (typed launches, `prepare_declared`).
    pub(crate) fn source_texts(&self) -> impl Iterator<Item = &str> {
        self.sources.iter().map(|s| s.text.as_str())
    }
}

/// Of the sources of a linked module, the one to read the declaration of `kernel` (its C
/// name) from: the first that declares it (a prototype or the definition), else the first
/// source, whose lookup then says what it does declare. `None` without sources.
pub(crate) fn declaring_source<'s, S: AsRef<str>>(sources: &'s [S], kernel: &str) -> Option<&'s str> {
    sources
        .iter()
        .map(AsRef::as_ref)
        .find(|s| gpu_cuda_source::find_kernel(s, kernel).is_ok())
        .or(sources.first().map(AsRef::as_ref))
}

/// Finds `lib{name}.a` in the toolkit or on `LD_LIBRARY_PATH`.
pub(crate) fn find_library(name: &str) -> Result<PathBuf> {
    let file = format!("lib{name}.a");
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(d) = std::env::var_os("GPU_RUNTIME_CUDA_LIB") {
        dirs.push(d.into());
    }
    dirs.extend(nvjitlink::candidates());
    if let Some(p) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    dirs.iter()
        .map(|d| d.join(&file))
        .find(|p| p.is_file())
        .ok_or_else(|| Error::LibraryNotFound {
            name: name.to_owned(),
            searched: nvjitlink::listed(&dirs),
        })
}

/// Whether a device linker (nvJitLink) can be loaded here.
pub fn linker_available() -> bool {
    nvjitlink::is_available()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = "struct P { float k; };\n__device__ float twice(float x) { return 2 * x; }\n\
        extern \"C\" __global__ void scale(float *y, P p, int n) { y[0] = p.k * twice(y[0]); }";
    const USE: &str = "__device__ float twice(float x);\n\
        extern \"C\" __global__ void apply(float *y, const float *x, int n) { y[0] = twice(x[0]); }";

    #[test]
    fn each_kernel_is_declared_by_the_source_that_holds_it() {
        let mut m = DynamicModule::new();
        m.add_source(LIB, "lib.cu", &["scale"], &[])
            .add_source(USE, "use.cu", &["apply"], &[]);
        let texts: Vec<&str> = m.source_texts().collect();
        assert_eq!(
            texts,
            [LIB, USE],
            "the module keeps every source's text, in order"
        );
        for (kernel, holder, params) in [("scale", 0, 3), ("apply", 1, 3)] {
            let src = declaring_source(&texts, kernel).unwrap();
            assert!(
                std::ptr::eq(src, texts[holder]),
                "{kernel} is read from the source that declares it"
            );
            let decl = gpu_cuda_source::find_kernel(src, kernel).unwrap();
            assert_eq!(decl.params.len(), params);
        }
        let consts =
            gpu_cuda_source::find_kernel(declaring_source(&texts, "apply").unwrap(), "apply").unwrap();
        assert!(
            matches!(
                consts.params[1].ty,
                gpu_cuda_source::CType::Pointer {
                    pointee_const: true,
                    ..
                }
            ),
            "the declaration keeps `const`, so launches are checked against it"
        );
        // A kernel no source declares: the first source, whose lookup lists what it has.
        let missing = declaring_source(&texts, "nope").unwrap();
        match gpu_cuda_source::find_kernel(missing, "nope") {
            Err(gpu_cuda_source::DeclError::NotFound { available, .. }) => assert_eq!(available, ["scale"]),
            other => panic!("expected NotFound, got {other:?}"),
        }
        assert_eq!(declaring_source::<&str>(&[], "scale"), None);
    }

    #[test]
    fn a_prototype_in_an_earlier_source_is_a_declaration_too() {
        // The macro checks that every source declaring a kernel agrees; the run time reads the
        // first one, which is then the same.
        let proto = "extern \"C\" __global__ void apply(float *y, const float *x, int n);";
        let texts = [proto, USE];
        assert!(std::ptr::eq(declaring_source(&texts, "apply").unwrap(), proto));
    }
}
