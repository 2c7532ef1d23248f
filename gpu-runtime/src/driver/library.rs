//! Opening an NVIDIA library that cudarc loads lazily (NCCL, cuRAND) before cudarc may: cudarc
//! panics on a library or a function it cannot find, where this crate returns an error.

/// Why a library cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unusable {
    /// None of the names opened: the names tried, each once, in order.
    NotFound { tried: Vec<String> },
    /// `name` opened, but lacks the functions `missing`.
    Lacks {
        name: String,
        missing: Vec<&'static str>,
    },
}

/// Opens the first of `names` that the loader finds, checks that it has every function of
/// `symbols`, and keeps it open for the life of the process (cudarc then opens the same
/// library again, which only counts a reference; unloading ours would only make cudarc's open
/// map it again).
pub(crate) fn open_checked(names: &[String], symbols: &[&'static str]) -> Result<(), Unusable> {
    for name in names {
        // SAFETY: opening the library runs its initialisers, which only set up its own state;
        // this is the library cudarc would open for its first call anyway.
        if let Ok(lib) = unsafe { libloading::Library::new(name) } {
            let missing: Vec<&'static str> = symbols
                .iter()
                // SAFETY: only the presence of each symbol is asked; nothing is called.
                .filter(|s| unsafe { lib.get::<*const ()>(s.as_bytes()) }.is_err())
                .copied()
                .collect();
            if !missing.is_empty() {
                return Err(Unusable::Lacks {
                    name: name.clone(),
                    missing,
                });
            }
            std::mem::forget(lib);
            return Ok(());
        }
    }
    // cudarc's candidate list repeats some names.
    let mut tried: Vec<String> = Vec::new();
    for n in names {
        if !tried.contains(n) {
            tried.push(n.clone());
        }
    }
    Err(Unusable::NotFound { tried })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_do_not_open_are_listed_once_each() {
        let names = [
            "libno-such-gpu-lib.so",
            "libno-such-gpu-lib.so.9",
            "libno-such-gpu-lib.so",
        ]
        .map(String::from);
        assert_eq!(
            open_checked(&names, &["f"]),
            Err(Unusable::NotFound {
                tried: vec!["libno-such-gpu-lib.so".into(), "libno-such-gpu-lib.so.9".into()]
            })
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_library_without_a_function_is_refused_by_name() {
        // libc opens everywhere this runs, and has `malloc` but no NCCL.
        let names = ["libc.so.6".to_string()];
        assert_eq!(open_checked(&names, &["malloc"]), Ok(()));
        assert_eq!(
            open_checked(&names, &["malloc", "ncclNoSuchCall"]),
            Err(Unusable::Lacks {
                name: "libc.so.6".into(),
                missing: vec!["ncclNoSuchCall"]
            })
        );
    }
}
