//! NCCL without a GPU: a missing library is an error, not a panic; with NCCL installed it
//! loads, makes unique ids, and they travel as text, files and environment variables; options
//! and errors read as documented; and without a GPU, making a communicator is an error.
//!
//! `source scripts/nvrtc-env.sh && cargo test --features nccl --test nccl library::` (the script
//! installs the NCCL wheel when the machine has no NCCL).

use std::process::Command;
use std::time::{Duration, Instant};

use gpu_runtime::nccl::{self, CommOptions, Comms, DataType, NcclError, NcclType, UniqueId, UNIQUE_ID_BYTES};
use gpu_runtime::Error;

/// Set in a child process: which part it plays.
const CHILD_ENV: &str = "GPU_SUITE_NCCL_CPU_CHILD";
/// The id a child reads from its environment.
const ID_ENV: &str = "GPU_SUITE_NCCL_CPU_ID";

/// Runs test `test` of this binary again in a child with `vars` set (and `clear` removed), and
/// returns whether it passed and what it printed.
fn rerun(test: &str, vars: &[(&str, &str)], clear: &[&str]) -> (bool, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.arg(crate::common::test_path(module_path!(), test))
        .args(["--exact", "--nocapture", "--test-threads=1"])
        .envs(vars.iter().copied());
    for v in clear {
        cmd.env_remove(v);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success() && text.contains("1 passed"), text)
}

/// True when the loader finds libnccl.so without LD_LIBRARY_PATH (a system install).
fn nccl_on_system_path() -> bool {
    Command::new("ldconfig").arg("-p").output().is_ok_and(|o| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .any(|l| l.trim_start().starts_with("libnccl.so "))
    })
}

fn sample_id() -> UniqueId {
    let mut bytes = [0u8; UNIQUE_ID_BYTES];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = (i * 7 + 3) as u8;
    }
    UniqueId::from_bytes(bytes)
}

#[test]
fn missing_nccl_is_an_error_not_a_panic() {
    if std::env::var(CHILD_ENV).as_deref() == Ok("no-nccl") {
        // LD_LIBRARY_PATH is empty here: the loader sees only the system's libraries.
        let found = nccl::is_available();
        match UniqueId::new() {
            Err(e @ NcclError::NotFound { .. }) => {
                assert!(!found);
                assert!(matches!(nccl::version(), Err(NcclError::NotFound { .. })));
                assert!(Comms::all_devices().is_err());
                println!("child: NCCL not found: {e}");
            }
            Ok(_) => println!("child: NCCL loaded from the system's path"),
            Err(e) => panic!("unexpected error: {e}"),
        }
        // Reading an id needs no NCCL.
        assert_eq!(UniqueId::from_env(ID_ENV).unwrap(), sample_id());
        return println!("child: the id from the environment matches");
    }
    let hex = sample_id().to_hex();
    let (passed, text) = rerun(
        "missing_nccl_is_an_error_not_a_panic",
        &[(CHILD_ENV, "no-nccl"), ("LD_LIBRARY_PATH", ""), (ID_ENV, &hex)],
        &[],
    );
    assert!(passed, "the child failed (a panic?):\n{text}");
    assert!(
        text.contains("child: the id from the environment matches"),
        "{text}"
    );
    if nccl_on_system_path() {
        assert!(
            text.contains("child: NCCL loaded from the system's path"),
            "{text}"
        );
    } else {
        assert!(
            text.contains("child: NCCL not found: NCCL could not be loaded: tried libnccl.so"),
            "{text}"
        );
        assert!(
            text.contains("pip install nvidia-nccl-cu13") || text.contains("symlink"),
            "{text}"
        );
    }
}

#[test]
fn nccl_loads_and_makes_unique_ids() {
    let id = UniqueId::new().unwrap_or_else(|e| panic!("{e} (source scripts/nvrtc-env.sh first)"));
    assert!(nccl::is_available());
    let (major, minor, patch) = nccl::version().unwrap();
    println!("NCCL {major}.{minor}.{patch}");
    assert!(
        major == 2 && minor >= 18,
        "NCCL {major}.{minor}.{patch} is older than this crate was built for"
    );
    // Each id is new, and round trips through text.
    let other = UniqueId::new().unwrap();
    assert_ne!(id, other);
    let hex = id.to_hex();
    assert_eq!(hex.len(), 2 * UNIQUE_ID_BYTES);
    assert!(hex.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(UniqueId::from_hex(&hex).unwrap(), id);
    assert_eq!(hex.parse::<UniqueId>().unwrap(), id);
    assert_eq!(id.to_string(), hex);
    assert_eq!(UniqueId::from_bytes(*id.as_bytes()), id);
    assert_eq!(format!("{id:?}"), format!("UniqueId({}...)", &hex[..16]));
}

#[test]
fn unique_ids_travel_through_files() {
    let dir = std::env::temp_dir().join(format!("gpu-suite-nccl-cpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let id = sample_id();
    let file = dir.join("job.id");
    id.write_to_file(&file).unwrap();
    assert_eq!(UniqueId::read_from_file(&file, Duration::ZERO).unwrap(), id);
    // The write went through a temporary file that is gone.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["job.id"]);
    // A reader started first waits for the writer.
    let late = dir.join("late.id");
    let writer = {
        let late = late.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            sample_id().write_to_file(late).unwrap();
        })
    };
    let start = Instant::now();
    assert_eq!(
        UniqueId::read_from_file(&late, Duration::from_secs(30)).unwrap(),
        id
    );
    assert!(start.elapsed() >= Duration::from_millis(150));
    writer.join().unwrap();
    // No file within the timeout is a timeout; a file without an id is an error at once.
    let e = UniqueId::read_from_file(dir.join("never.id"), Duration::from_millis(100)).unwrap_err();
    assert!(
        matches!(&e, NcclError::Timeout { aborted: false, operation, .. } if operation.contains("never.id")),
        "{e}"
    );
    // a message test: a timeout that aborted nothing does not say it did.
    assert!(!e.to_string().contains("aborted"), "{e}");
    std::fs::write(dir.join("bad.id"), "not an id").unwrap();
    let e = UniqueId::read_from_file(dir.join("bad.id"), Duration::from_secs(30)).unwrap_err();
    assert!(matches!(e, NcclError::UniqueIdLength { len: 9, .. }), "{e}");
    // A directory that does not exist cannot be written.
    let e = id.write_to_file(dir.join("missing/dir/x.id")).unwrap_err();
    // The operating system's error is kept, so its kind can be matched.
    assert!(
        matches!(&e, NcclError::Cuda(Error::Io { action: "write", source, .. }) if source.kind() == std::io::ErrorKind::NotFound),
        "{e}"
    );
    assert!(std::error::Error::source(&e).is_some(), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
    // An unset variable is an error naming it.
    let e = UniqueId::from_env("GPU_SUITE_NCCL_CPU_UNSET_VARIABLE").unwrap_err();
    assert!(
        matches!(&e, NcclError::UniqueIdVariable { var, source: std::env::VarError::NotPresent }
            if var == "GPU_SUITE_NCCL_CPU_UNSET_VARIABLE"),
        "{e}"
    );
}

#[test]
fn options_types_and_errors() {
    let o = CommOptions::default();
    assert_eq!(o.get_timeout(), Duration::from_secs(300));
    assert!(!o.is_blocking() && !o.verifies_counts());
    let o = CommOptions::new()
        .timeout(Duration::from_secs(5))
        .blocking(true)
        .verify_counts(true);
    assert!(o.is_blocking() && o.verifies_counts() && o.get_timeout() == Duration::from_secs(5));
    assert_eq!(<gpu_runtime::half::bf16 as NcclType>::DATA_TYPE, DataType::BF16);
    assert_eq!(<f64 as NcclType>::DATA_TYPE.size(), 8);
    let e = NcclError::Timeout {
        operation: "ncclCommInitRankConfig for rank(s) 0 of 2".into(),
        timeout: Duration::from_secs(5),
        aborted: true,
    };
    let text = e.to_string();
    assert!(
        text.starts_with("NCCL: ncclCommInitRankConfig for rank(s) 0 of 2 did not finish within 5s"),
        "{text}"
    );
    assert!(text.contains("were aborted"), "{text}");
    let e = NcclError::Aborted {
        operation: "ncclAllReduce",
        rank: 1,
    };
    // a message test: the sentence names the rank.
    assert!(e.to_string().contains("rank 1"), "{e}");
}

#[test]
fn communicators_without_a_gpu_are_errors() {
    let e = Comms::new(&[]).unwrap_err();
    assert!(matches!(e, NcclError::NoContext), "{e}");
    // On a machine without a GPU (CI's), making every device's rank fails with the driver's
    // error; on one with GPUs it works, which tests/nccl_collectives/ covers.
    match Comms::all_devices() {
        Ok(comms) => println!("{} GPU(s) here: made {} rank(s)", comms.len(), comms.len()),
        Err(e) => println!("no communicator without a GPU: {e}"),
    }
}
