//! Which variables a module image declares, read once when it is loaded: none, `__constant__`
//! ones only, or a `__device__` one. What each launch of the module's kernels then is to them
//! (nothing, a read, a write: `driver::ordering::ModuleUses`).
//!
//! The answer may be more than the module has, never less: a launch of a module said to have
//! none is not ordered with copies to and from its variables. So whatever cannot be read for
//! sure counts as a `__device__` variable: a fatbin (its entries may be compressed), an ELF
//! that is not the 64-bit little-endian one every cubin is, a PTX declaration that is not
//! plainly one variable of a toolchain table.
//!
//! The toolchain's own tables are not counted: the format strings of `printf` (`$str`, a name
//! no C source can declare), the CUDA math library's constant tables (`__cudart_…`, names C++
//! reserves to the implementation, e.g. `__cudart_i2opi_f` for `sinf`) and the statics of the
//! standard library and libcu++ (`std::`, `cuda::std::`: `integral_constant<bool, true>::value`,
//! from the `<type_traits>` the prelude includes), which are `.global` in PTX yet never
//! written. Counting them would make every kernel calling `sinf` or `printf` a
//! writer of module variables, ordered after the kernels of its module on every other stream.
//! A lookup of one of them in a module otherwise without variables is refused
//! ([`toolchain_table_error`]), since launches of that module are not recorded.

use crate::driver::ordering::ModuleVars;
use crate::error::Error;

use super::image::{image_kind, Kind};

/// The variables `image` (PTX, cubin or fatbin) declares.
pub(crate) fn module_vars(image: &[u8]) -> ModuleVars {
    match image_kind(image) {
        Kind::Ptx => ptx_vars(image),
        Kind::Elf => elf_vars(image).unwrap_or(ModuleVars::Device),
        Kind::Fatbin => ModuleVars::Device,
    }
}

/// True for the name of one of the toolchain's own tables (see the module docs).
fn is_toolchain_table(name: &[u8]) -> bool {
    name.starts_with(b"$")
        || name.starts_with(b"__cudart_")
        // The standard library's and libcu++'s own statics (`std::integral_constant<bool,
        // true>::value`, which the `<type_traits>` every prelude pulls in defines as a
        // `.global`): namespaces C++ reserves to the implementation, whose constexpr members no
        // kernel writes. Counting them would make every module a writer of its variables.
        || name.starts_with(b"_ZNSt")
        || name.starts_with(b"_ZSt")
        || name.starts_with(b"_ZNKSt")
        || name.starts_with(b"_ZN4cuda3std")
        || name.starts_with(b"_ZN4cuda3__")
}

/// The error of a lookup of a variable that the driver finds in a module the load found none
/// in: one of the toolchain's tables (see the module docs), whose copies could not be ordered
/// with the module's launches.
pub(crate) fn toolchain_table_error(name: &str) -> Error {
    Error::Unsupported {
        what: "reading or writing a variable of the CUDA toolchain's own",
        needs: format!(
            "a variable the source declares: `{name}` is a table the compiler added (a `printf` format \
             string or a math library table), which the module's launches are not ordered with"
        ),
    }
}

/// PTX: every whitespace-delimited `.global` or `.const` token starts a variable declaration
/// (instructions name state spaces inside one token, `ld.global.f32`). Comments are not
/// skipped: a declaration in one only counts a variable more.
fn ptx_vars(ptx: &[u8]) -> ModuleVars {
    let text = String::from_utf8_lossy(ptx);
    let mut found = ModuleVars::None;
    for token in text.split_ascii_whitespace() {
        let var = match token {
            ".global" => ModuleVars::Device,
            ".const" => ModuleVars::Constant,
            _ => continue,
        };
        // `token` is a slice of `text`: the declaration follows it, up to its `;`.
        let after = token.as_ptr() as usize - text.as_ptr() as usize + token.len();
        let decl = &text[after..];
        let decl = &decl[..decl.find(';').unwrap_or(decl.len())];
        if !ptx_declares_a_toolchain_table(decl) {
            found = found.max(var);
        }
    }
    found
}

/// True when `decl`, a PTX declaration after its state space and before its `;`
/// (`.align 4 .b8 $str[7] = {…}`), declares exactly one variable, a toolchain table.
fn ptx_declares_a_toolchain_table(decl: &str) -> bool {
    let declarators = decl.split('=').next().unwrap_or("");
    if declarators.contains(',') {
        return false;
    }
    let mut tokens = declarators.split_ascii_whitespace();
    while let Some(t) = tokens.next() {
        if t == ".align" {
            tokens.next();
        } else if !t.starts_with('.') {
            // The first token that is not a directive (`.b8`, `.u32`, `.v4`) is the name.
            return is_toolchain_table(t.as_bytes());
        }
    }
    false
}

const SHT_SYMTAB: u32 = 2;
const STT_OBJECT: u8 = 1;
const STT_COMMON: u8 = 5;
/// Section indices from here up are special (absolute, common, extended): no section to name.
const SHN_LORESERVE: u16 = 0xff00;

/// One ELF64 section header, the fields read here.
struct Section {
    name: u32,
    kind: u32,
    offset: usize,
    size: usize,
    link: u32,
    entsize: usize,
}

/// A cubin (ELF64, little-endian): each data symbol (`STT_OBJECT`, `STT_COMMON`) defined in
/// the module is a variable, a `__constant__` one in a `.nv.constant…` section, `__shared__`
/// in `.nv.shared…` (not module memory), `__device__` anywhere else. `None` when the file
/// cannot be read as such (then everything counts).
fn elf_vars(elf: &[u8]) -> Option<ModuleVars> {
    let at = |o: usize, n: usize| elf.get(o..o.checked_add(n)?);
    let u16_at = |o: usize| at(o, 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |o: usize| Some(u32::from_le_bytes(at(o, 4)?.try_into().ok()?));
    let u64_at = |o: usize| usize::try_from(u64::from_le_bytes(at(o, 8)?.try_into().ok()?)).ok();
    // EI_CLASS 2 (64-bit), EI_DATA 1 (little-endian).
    if elf.get(4) != Some(&2) || elf.get(5) != Some(&1) {
        return None;
    }
    let (shoff, shentsize) = (u64_at(0x28)?, usize::from(u16_at(0x3a)?));
    let (shnum, shstrndx) = (usize::from(u16_at(0x3c)?), usize::from(u16_at(0x3e)?));
    if shentsize < 64 {
        return None;
    }
    let section = |i: usize| -> Option<Section> {
        if i >= shnum {
            return None;
        }
        let h = shoff.checked_add(i.checked_mul(shentsize)?)?;
        Some(Section {
            name: u32_at(h)?,
            kind: u32_at(h + 4)?,
            offset: u64_at(h + 0x18)?,
            size: u64_at(h + 0x20)?,
            link: u32_at(h + 0x28)?,
            entsize: u64_at(h + 0x38)?,
        })
    };
    let contents = |s: &Section| at(s.offset, s.size);
    fn c_str(table: &[u8], at: u32) -> Option<&[u8]> {
        let rest = table.get(at as usize..)?;
        Some(&rest[..rest.iter().position(|&c| c == 0)?])
    }
    let names = contents(&section(shstrndx)?)?;
    let mut found = ModuleVars::None;
    let mut symtabs = 0;
    for i in 0..shnum {
        let symtab = section(i)?;
        if symtab.kind != SHT_SYMTAB {
            continue;
        }
        symtabs += 1;
        if symtab.entsize < 24 {
            return None;
        }
        let strings = contents(&section(symtab.link as usize)?)?;
        for sym in contents(&symtab)?.chunks_exact(symtab.entsize) {
            let kind = sym[4] & 0xf;
            let shndx = u16::from_le_bytes([sym[6], sym[7]]);
            // An undefined symbol has no storage in this module.
            if (kind != STT_OBJECT && kind != STT_COMMON) || shndx == 0 {
                continue;
            }
            let name = c_str(strings, u32::from_le_bytes(sym[..4].try_into().ok()?))?;
            if is_toolchain_table(name) {
                continue;
            }
            let var = if shndx >= SHN_LORESERVE {
                ModuleVars::Device
            } else {
                let in_section = c_str(names, section(usize::from(shndx))?.name)?;
                if in_section.starts_with(b".nv.shared") {
                    continue;
                } else if in_section.starts_with(b".nv.constant") {
                    ModuleVars::Constant
                } else {
                    ModuleVars::Device
                }
            };
            found = found.max(var);
        }
    }
    // Without a symbol table nothing can be told (nor looked up): count everything.
    (symtabs > 0).then_some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiler::target::Target;

    #[test]
    fn ptx_declarations_count_and_instructions_and_toolchain_tables_do_not() {
        let none = ".version 8.0\n.target sm_90\n.global .align 1 .b8 $str[7] = {104, 105, 32, 37, 100, 10};\n\
                    .global .align 4 .b8 __cudart_i2opi_f[24] = {65, 144};\n\
                    .visible .entry k(.param .u64 k_param_0) {\n ld.global.f32 %f1, [%rd1];\n\
                    st.global.f32 [%rd1], %f1;\n cvta.to.global.u64 %rd2, %rd1;\n ld.const.f32 %f2, [taps];\n}\n";
        assert_eq!(ptx_vars(none.as_bytes()), ModuleVars::None);
        let constant = format!("{none}.visible .const .align 4 .b8 taps[16];\n");
        assert_eq!(ptx_vars(constant.as_bytes()), ModuleVars::Constant);
        for device in [
            ".global .align 4 .b8 table[32];",
            ".visible .global .align 8 .f64 _ZN2ns1dE;",
            ".global .u32 hidden;",
            ".extern .global .align 4 .u32 elsewhere;",
            ".global .attribute(.managed) .align 4 .u32 m;",
            // Two declarators, the first a toolchain name: counted.
            ".global .u32 $a, b;",
            // A name after a comment token: counted (the name read is the comment's).
            ".global /* $x */ .u32 y;",
        ] {
            let ptx = format!("{constant}{device}\n");
            assert_eq!(ptx_vars(ptx.as_bytes()), ModuleVars::Device, "{device}");
        }
    }

    /// NVRTC's PTX and cubin of one source, read as the loader reads them.
    fn compiled(src: &str) -> Option<[ModuleVars; 2]> {
        let mut out = [ModuleVars::None; 2];
        for (slot, target) in out.iter_mut().zip([
            Target::Ptx { major: 9, minor: 0 },
            Target::Cubin { major: 9, minor: 0 },
        ]) {
            let image = match crate::compiler::nvrtc::compile(src, "vars.cu", &["k"], &[], target) {
                Err(Error::NvrtcNotFound) => return None,
                r => r.unwrap().image,
            };
            *slot = module_vars(&image);
        }
        Some(out)
    }

    #[test]
    fn nvrtc_modules_are_read_for_their_variables() {
        let kernel = |decls: &str| {
            format!(
                "{decls}\nextern \"C\" __global__ void k(float *x, double y) {{\n\
                 x[threadIdx.x] = sinf(x[threadIdx.x]) + (float)sin(y) + READS; printf(\"%d\\n\", 3); }}"
            )
        };
        let cases = [
            ("#define READS 0", ModuleVars::None),
            (
                "__constant__ float taps[4];\n#define READS taps[threadIdx.x % 4]",
                ModuleVars::Constant,
            ),
            (
                "__constant__ float taps[4];\n__device__ int table[8];\n#define READS taps[1] + table[threadIdx.x % 8]",
                ModuleVars::Device,
            ),
            (
                "namespace ns { __device__ double d; }\n#define READS (float)ns::d",
                ModuleVars::Device,
            ),
            (
                "static __device__ int hidden;\n#define READS hidden++",
                ModuleVars::Device,
            ),
            (
                "__managed__ int m;\n#define READS m",
                ModuleVars::Device,
            ),
        ];
        for (decls, want) in cases {
            let Some(got) = compiled(&kernel(decls)) else {
                return eprintln!("skipped: NVRTC not found");
            };
            assert_eq!(got, [want; 2], "{decls}");
        }
    }

    #[test]
    fn images_that_cannot_be_read_count_as_device_variables() {
        assert_eq!(module_vars(&0xBA55_ED50u32.to_le_bytes()), ModuleVars::Device);
        // A truncated ELF, a 32-bit one, and one without a symbol table.
        assert_eq!(module_vars(b"\x7fELF\x02\x01"), ModuleVars::Device);
        assert_eq!(
            module_vars(b"\x7fELF\x01\x01\x01\0\0\0\0\0\0\0\0\0"),
            ModuleVars::Device
        );
        let mut elf = vec![0u8; 64 + 64];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        elf[0x28..0x30].copy_from_slice(&64u64.to_le_bytes());
        elf[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        elf[0x3c..0x3e].copy_from_slice(&1u16.to_le_bytes());
        assert_eq!(module_vars(&elf), ModuleVars::Device);
    }
}
