//! The TCP rendezvous and the launchers' variables, without a GPU: ranks (threads, and real
//! processes of this binary) meet on 127.0.0.1, exchange the unique id and pass barriers; each
//! failure (a rank that never arrives, ranks that disagree on the world size, a port in use, a
//! store that goes away or never answers) is its typed error within its timeout; and every
//! launcher's variables parse, or say which are missing.
//!
//! `source scripts/nvrtc-env.sh && cargo test --features nccl --test nccl rendezvous::`.

use std::collections::HashMap;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use gpu_runtime::nccl::{
    self, expand_slurm_hostlist, LaunchEnv, LaunchEnvError, Launcher, NcclError, Rendezvous, RendezvousError,
    DEFAULT_MASTER_PORT,
};

/// Set in a child process: the rank it plays (with the variables below).
const CHILD_RANK: &str = "GPU_SUITE_RDZV_RANK";
const CHILD_SIZE: &str = "GPU_SUITE_RDZV_SIZE";
const CHILD_ADDR: &str = "GPU_SUITE_RDZV_ADDR";

/// A port free right now on this host (the OS picks it; another process could take it before
/// the test binds it, which the tests would report as `PortInUse`).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn address() -> String {
    format!("127.0.0.1:{}", free_port())
}

/// Bytes that differ from run to run, standing in for a unique id where NCCL is not needed.
fn fresh_bytes() -> Vec<u8> {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    (0..128u32)
        .map(|i| ((t >> (i % 64)) as u8) ^ (i as u8).wrapping_mul(31))
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What one rank does in the tests that pass: joins, gets rank 0's bytes (and its NCCL id when
/// NCCL loads), passes barriers, and counts itself in. Returns what it saw.
fn one_rank(addr: &str, rank: usize, n: usize) -> (Vec<u8>, Option<String>, i64) {
    let timeout = Duration::from_secs(30);
    let rdzv = Rendezvous::connect(addr, rank, n, timeout).unwrap_or_else(|e| panic!("rank {rank}: {e}"));
    assert_eq!((rdzv.rank(), rdzv.world_size(), rdzv.address()), (rank, n, addr));
    let payload = rdzv.share("payload", || Ok(fresh_bytes())).unwrap();
    rdzv.barrier().unwrap();
    // Every rank sets a key of its own; after a barrier each reads them all.
    rdzv.set(&format!("host-of/{rank}"), format!("rank {rank}").as_bytes())
        .unwrap();
    rdzv.barrier().unwrap();
    for r in 0..n {
        assert_eq!(
            rdzv.get(&format!("host-of/{r}")).unwrap(),
            format!("rank {r}").as_bytes()
        );
    }
    rdzv.add("arrived", 1).unwrap();
    rdzv.barrier().unwrap();
    let arrived = rdzv.add("arrived", 0).unwrap();
    let id = nccl::is_available().then(|| rdzv.unique_id().unwrap().to_hex());
    // Rank 0 serves until everyone is done with the store.
    rdzv.barrier().unwrap();
    (payload, id, arrived)
}

#[test]
fn ranks_meet_as_threads() {
    for n in [1, 2, 3, 8] {
        let addr = address();
        let seen: Vec<_> = (0..n)
            .map(|rank| {
                let addr = addr.clone();
                thread::spawn(move || one_rank(&addr, rank, n))
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .collect();
        for (payload, id, arrived) in &seen {
            assert_eq!(payload, &seen[0].0, "{n} ranks: rank 0's bytes reach every rank");
            assert_eq!(id, &seen[0].1);
            assert_eq!(*arrived, n as i64);
        }
    }
}

/// The child side of [`ranks_meet_as_processes`]: a no-op in the test run itself.
#[test]
fn rendezvous_child() {
    let Ok(rank) = std::env::var(CHILD_RANK) else {
        return;
    };
    let rank: usize = rank.parse().unwrap();
    let n: usize = std::env::var(CHILD_SIZE).unwrap().parse().unwrap();
    let addr = std::env::var(CHILD_ADDR).unwrap();
    let (payload, id, arrived) = one_rank(&addr, rank, n);
    println!(
        "RDZV rank {rank}: payload {} id {} arrived {arrived}",
        hex(&payload),
        id.as_deref().unwrap_or("none")
    );
}

fn spawn_rank(addr: &str, rank: usize, n: usize) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .arg(crate::common::test_path(module_path!(), "rendezvous_child"))
        .args(["--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_RANK, rank.to_string())
        .env(CHILD_SIZE, n.to_string())
        .env(CHILD_ADDR, addr)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn ranks_meet_as_processes() {
    for n in [2, 5, 8] {
        let addr = address();
        // The ranks start in any order: the last first.
        let children: Vec<Child> = (0..n).rev().map(|r| spawn_rank(&addr, r, n)).collect();
        let mut lines = Vec::new();
        for c in children {
            let out = c.wait_with_output().unwrap();
            let text =
                String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() && text.contains("1 passed"),
                "{n} ranks: a rank failed:\n{text}"
            );
            // libtest may print its "test ... " prefix on the same line.
            let line = text.lines().find_map(|l| l.split_once("RDZV ")).unwrap().1;
            lines.push(line.to_owned());
        }
        // Same payload, id and count everywhere: drop the "rank r:" prefix and compare.
        let tails: Vec<&str> = lines.iter().map(|l| l.split_once(": ").unwrap().1).collect();
        assert!(tails.iter().all(|t| *t == tails[0]), "{lines:#?}");
        assert!(tails[0].ends_with(&format!("arrived {n}")), "{}", tails[0]);
        if nccl::is_available() {
            assert!(!tails[0].contains("id none"), "{}", tails[0]);
        }
    }
}

/// `f()` returns within `bound`, with what it returned.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let r = f();
    (r, start.elapsed())
}

#[test]
fn a_rank_that_never_arrives_times_out_naming_it() {
    let addr = address();
    let timeout = Duration::from_millis(800);
    let (r, took) = timed(|| Rendezvous::connect(&addr, 0, 3, timeout));
    match r {
        Err(NcclError::Rendezvous(RendezvousError::Timeout {
            address,
            rank: 0,
            world_size: 3,
            timeout: t,
            missing,
            ..
        })) => {
            assert_eq!((address, t, missing), (addr.clone(), timeout, vec![1, 2]));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        took >= timeout && took < timeout + Duration::from_secs(3),
        "{took:?}"
    );
    // The message says which ranks.
    let e = Rendezvous::connect(&address(), 0, 2, Duration::from_millis(100)).unwrap_err();
    assert!(e.to_string().contains("rank(s) 1 never arrived"), "{e}");
}

#[test]
fn ranks_that_disagree_on_the_world_size_fail_within_the_timeout() {
    let addr = address();
    let timeout = Duration::from_secs(2);
    let a = addr.clone();
    let rank0 = thread::spawn(move || timed(|| Rendezvous::connect(&a, 0, 2, timeout)));
    let (r1, took1) = timed(|| Rendezvous::connect(&addr, 1, 3, timeout));
    match r1 {
        Err(NcclError::Rendezvous(RendezvousError::WorldSizeMismatch {
            rank: 1,
            world_size: 3,
            store_world_size: 2,
            ..
        })) => {}
        other => panic!("{other:?}"),
    }
    // Refused as soon as it reaches the store, not at the timeout.
    assert!(took1 < timeout, "{took1:?}");
    let (r0, took0) = rank0.join().unwrap();
    assert!(
        matches!(&r0, Err(NcclError::Rendezvous(RendezvousError::Timeout { missing, .. })) if missing == &[1]),
        "{r0:?}"
    );
    assert!(took0 < timeout + Duration::from_secs(3), "{took0:?}");
}

#[test]
fn a_port_in_use_is_an_error_at_once() {
    let taken = TcpListener::bind("0.0.0.0:0").unwrap();
    let addr = format!("127.0.0.1:{}", taken.local_addr().unwrap().port());
    let (r, took) = timed(|| Rendezvous::connect(&addr, 0, 2, Duration::from_secs(10)));
    match r {
        Err(NcclError::Rendezvous(RendezvousError::PortInUse {
            address,
            rank: 0,
            world_size: 2,
        })) => assert_eq!(address, addr),
        other => panic!("{other:?}"),
    }
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn a_store_that_never_answers_is_unreachable_after_the_timeout() {
    let addr = address();
    let timeout = Duration::from_millis(700);
    let (r, took) = timed(|| Rendezvous::connect(&addr, 1, 2, timeout));
    match r {
        Err(NcclError::Rendezvous(RendezvousError::Unreachable {
            rank: 1,
            world_size: 2,
            timeout: t,
            ..
        })) => assert_eq!(t, timeout),
        other => panic!("{other:?}"),
    }
    assert!(
        took >= timeout && took < timeout + Duration::from_secs(3),
        "{took:?}"
    );
}

#[test]
fn a_store_that_goes_away_fails_the_waiting_ranks_at_once() {
    let addr = address();
    let timeout = Duration::from_secs(20);
    let a = addr.clone();
    let rank0 = thread::spawn(move || {
        let rdzv = Rendezvous::connect(&a, 0, 2, timeout).unwrap();
        thread::sleep(Duration::from_millis(300));
        // Rank 0 exits while rank 1 waits for a key.
        drop(rdzv);
    });
    let rdzv = Rendezvous::connect(&addr, 1, 2, timeout).unwrap();
    let (r, took) = timed(|| rdzv.get("never-set"));
    match r {
        Err(NcclError::Rendezvous(RendezvousError::StoreClosed {
            address,
            rank: 1,
            world_size: 2,
            ..
        })) => assert_eq!(address, addr),
        other => panic!("{other:?}"),
    }
    assert!(took < Duration::from_secs(3), "{took:?}: not at once");
    rank0.join().unwrap();
    // And later calls too.
    assert!(matches!(
        rdzv.barrier(),
        Err(NcclError::Rendezvous(RendezvousError::StoreClosed { .. }))
    ));
}

#[test]
fn a_process_killed_as_rank_0_fails_the_others() {
    let addr = address();
    let mut rank0 = spawn_rank(&addr, 0, 3);
    let a = addr.clone();
    // Rank 2 never comes, so rank 0 waits in the join barrier until killed.
    let rank1 = thread::spawn(move || timed(|| Rendezvous::connect(&a, 1, 3, Duration::from_secs(20))));
    thread::sleep(Duration::from_millis(1500));
    rank0.kill().unwrap();
    let _ = rank0.wait();
    let (r, took) = rank1.join().unwrap();
    assert!(
        matches!(
            r,
            Err(NcclError::Rendezvous(RendezvousError::StoreClosed {
                rank: 1,
                ..
            }))
        ),
        "{r:?}"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn a_key_no_rank_sets_times_out() {
    let rdzv = Rendezvous::connect(&address(), 0, 1, Duration::from_secs(5)).unwrap();
    let (r, took) = timed(|| rdzv.get_with_timeout("nobody", Duration::from_millis(300)));
    assert!(
        matches!(&r, Err(NcclError::Rendezvous(RendezvousError::Timeout { operation, missing, .. })) if operation.contains("nobody") && missing.is_empty()),
        "{r:?}"
    );
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "{took:?}"
    );
    // A one-rank job passes its barriers alone.
    rdzv.barrier().unwrap();
    // A timeout too long for the clock means no timeout, not a panic.
    let forever = Rendezvous::connect(&address(), 0, 1, Duration::MAX).unwrap();
    forever.set("k", b"v").unwrap();
    assert_eq!(forever.get("k").unwrap(), b"v");
    assert_eq!(forever.add("n", i64::MAX).unwrap(), i64::MAX);
    assert_eq!(forever.add("n", 1).unwrap(), i64::MAX, "counters saturate");
    forever.barrier().unwrap();
}

#[test]
fn bad_ranks_and_twice_the_same_rank_are_refused() {
    assert!(matches!(
        Rendezvous::connect("127.0.0.1:1", 2, 2, Duration::from_secs(1)),
        Err(NcclError::Rendezvous(RendezvousError::BadRank {
            rank: 2,
            world_size: 2,
            ..
        }))
    ));
    let addr = address();
    let a = addr.clone();
    let rank0 = thread::spawn(move || Rendezvous::connect(&a, 0, 2, Duration::from_secs(3)));
    let first = thread::spawn({
        let a = addr.clone();
        move || Rendezvous::connect(&a, 1, 2, Duration::from_secs(3))
    });
    let first = first.join().unwrap().unwrap();
    let second = Rendezvous::connect(&addr, 1, 2, Duration::from_secs(3));
    assert!(
        matches!(
            second,
            Err(NcclError::Rendezvous(RendezvousError::RankTaken { rank: 1, .. }))
        ),
        "{second:?}"
    );
    rank0.join().unwrap().unwrap();
    drop(first);
}

// ---------------------------------------------------------------------------------------------
// The launchers' variables.

fn parse(vars: &[(&str, &str)]) -> Result<LaunchEnv, LaunchEnvError> {
    let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    LaunchEnv::from_vars(|name| map.get(name).cloned())
}

#[test]
fn torchrun_variables() {
    let env = parse(&[
        ("RANK", "3"),
        ("WORLD_SIZE", "8"),
        ("LOCAL_RANK", "1"),
        ("MASTER_ADDR", "node01"),
        ("MASTER_PORT", "29400"),
    ])
    .unwrap();
    assert_eq!(
        env,
        LaunchEnv {
            launcher: Launcher::Torchrun,
            rank: 3,
            world_size: 8,
            local_rank: 1,
            master_addr: "node01".into(),
            master_port: 29400,
        }
    );
    assert_eq!(env.master(), "node01:29400");
    // torchrun's agent serves its own store on MASTER_PORT: the rendezvous takes the next one,
    // unless GPU_RUNTIME_RDZV_PORT says otherwise.
    let torchrun = [
        ("RANK", "3"),
        ("WORLD_SIZE", "8"),
        ("LOCAL_RANK", "1"),
        ("MASTER_ADDR", "node01"),
        ("MASTER_PORT", "29400"),
        ("TORCHELASTIC_USE_AGENT_STORE", "True"),
    ];
    assert_eq!(parse(&torchrun).unwrap().master_port, 29401);
    let env = parse(&[&torchrun[..], &[("GPU_RUNTIME_RDZV_PORT", "31000")]].concat()).unwrap();
    assert_eq!(env.master_port, 31000);
    let mut last = torchrun;
    last[4].1 = "65535";
    assert!(matches!(
        parse(&last),
        Err(LaunchEnvError::Invalid {
            var: "MASTER_PORT",
            ..
        })
    ));
    let e = parse(&[("RANK", "0"), ("WORLD_SIZE", "2")]).unwrap_err();
    assert_eq!(
        e,
        LaunchEnvError::Missing {
            launcher: Launcher::Torchrun,
            missing: vec!["LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"]
        }
    );
    assert_eq!(
        e.to_string(),
        "torchrun's variables are incomplete: LOCAL_RANK, MASTER_ADDR and MASTER_PORT are not set"
    );
    let e = parse(&[
        ("WORLD_SIZE", "2"),
        ("LOCAL_RANK", "0"),
        ("MASTER_ADDR", "h"),
        ("MASTER_PORT", "1"),
    ])
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "torchrun's variables are incomplete: RANK is not set"
    );
}

#[test]
fn slurm_variables_and_its_host_list() {
    let env = parse(&[
        ("SLURM_PROCID", "6"),
        ("SLURM_NTASKS", "8"),
        ("SLURM_LOCALID", "2"),
        ("SLURM_JOB_NODELIST", "node[01-04,07],gpu2"),
    ])
    .unwrap();
    assert_eq!(
        (env.launcher, env.rank, env.world_size, env.local_rank),
        (Launcher::Slurm, 6, 8, 2)
    );
    assert_eq!(
        (env.master_addr.as_str(), env.master_port),
        ("node01", DEFAULT_MASTER_PORT)
    );
    // MASTER_ADDR and MASTER_PORT win over the list and the default.
    let env = parse(&[
        ("SLURM_PROCID", "0"),
        ("SLURM_NTASKS", "1"),
        ("SLURM_LOCALID", "0"),
        ("SLURM_JOB_NODELIST", "node[01-04]"),
        ("MASTER_ADDR", "10.0.0.9"),
        ("MASTER_PORT", "40000"),
    ])
    .unwrap();
    assert_eq!(env.master(), "10.0.0.9:40000");
    // SLURM_NODELIST when the job's is missing.
    let env = parse(&[
        ("SLURM_PROCID", "0"),
        ("SLURM_NTASKS", "2"),
        ("SLURM_LOCALID", "0"),
        ("SLURM_NODELIST", "a[009-011]"),
    ])
    .unwrap();
    assert_eq!(env.master_addr, "a009");
    let e = parse(&[
        ("SLURM_PROCID", "0"),
        ("SLURM_NTASKS", "2"),
        ("SLURM_LOCALID", "0"),
    ])
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Slurm's variables are incomplete: SLURM_JOB_NODELIST is not set"
    );
    let e = parse(&[("SLURM_PROCID", "0")]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Slurm's variables are incomplete: SLURM_NTASKS and SLURM_LOCALID are not set"
    );
    let e = parse(&[
        ("SLURM_PROCID", "0"),
        ("SLURM_NTASKS", "2"),
        ("SLURM_LOCALID", "0"),
        ("SLURM_JOB_NODELIST", "node[01-"),
    ])
    .unwrap_err();
    assert!(matches!(e, LaunchEnvError::HostList { position: 4, .. }), "{e}");
    assert_eq!(
        expand_slurm_hostlist("node[01-04,07],gpu2").unwrap(),
        ["node01", "node02", "node03", "node04", "node07", "gpu2"]
    );
    assert_eq!(expand_slurm_hostlist("n[9-11]").unwrap(), ["n9", "n10", "n11"]);
}

#[test]
fn open_mpi_variables() {
    let base = [
        ("OMPI_COMM_WORLD_RANK", "1"),
        ("OMPI_COMM_WORLD_SIZE", "4"),
        ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
    ];
    // Across hosts Open MPI does not say where rank 0 is: MASTER_ADDR must.
    let e = parse(&[&base[..], &[("OMPI_COMM_WORLD_LOCAL_SIZE", "2")]].concat()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Open MPI's variables are incomplete: MASTER_ADDR is not set"
    );
    let env = parse(&[&base[..], &[("MASTER_ADDR", "fe80::1"), ("MASTER_PORT", "12345")]].concat()).unwrap();
    assert_eq!(
        (env.launcher, env.rank, env.world_size, env.local_rank),
        (Launcher::OpenMpi, 1, 4, 1)
    );
    assert_eq!(env.master(), "[fe80::1]:12345");
    // Every rank on one host: rank 0 is local.
    let env = parse(&[&base[..], &[("OMPI_COMM_WORLD_LOCAL_SIZE", "4")]].concat()).unwrap();
    assert_eq!(env.master(), format!("127.0.0.1:{DEFAULT_MASTER_PORT}"));
    // mpirun inside a Slurm allocation: Open MPI's variables win over the batch step's.
    let env = parse(
        &[
            &base[..],
            &[
                ("OMPI_COMM_WORLD_LOCAL_SIZE", "4"),
                ("SLURM_PROCID", "0"),
                ("SLURM_NTASKS", "1"),
                ("SLURM_LOCALID", "0"),
            ],
        ]
        .concat(),
    )
    .unwrap();
    assert_eq!((env.launcher, env.rank), (Launcher::OpenMpi, 1));
    let e = parse(&[("OMPI_COMM_WORLD_RANK", "0")]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Open MPI's variables are incomplete: OMPI_COMM_WORLD_SIZE and OMPI_COMM_WORLD_LOCAL_RANK are not set"
    );
}

#[test]
fn no_launcher_and_bad_values_say_what_is_wrong() {
    let e = parse(&[("PATH", "/bin")]).unwrap_err();
    assert_eq!(e, LaunchEnvError::NoLauncher);
    assert!(e.to_string().contains("RANK and WORLD_SIZE"), "{e}");
    let torch = |rank: &str, size: &str, port: &str| {
        parse(&[
            ("RANK", rank),
            ("WORLD_SIZE", size),
            ("LOCAL_RANK", "0"),
            ("MASTER_ADDR", "h"),
            ("MASTER_PORT", port),
        ])
    };
    assert!(matches!(
        torch("4", "4", "1"),
        Err(LaunchEnvError::Invalid { var: "RANK", .. })
    ));
    assert!(matches!(
        torch("x", "4", "1"),
        Err(LaunchEnvError::Invalid { var: "RANK", .. })
    ));
    assert!(matches!(
        torch("0", "0", "1"),
        Err(LaunchEnvError::Invalid {
            var: "WORLD_SIZE",
            ..
        })
    ));
    assert!(matches!(
        torch("0", "1", "70000"),
        Err(LaunchEnvError::Invalid {
            var: "MASTER_PORT",
            ..
        })
    ));
    assert!(matches!(
        torch("0", "1", "0"),
        Err(LaunchEnvError::Invalid {
            var: "MASTER_PORT",
            ..
        })
    ));
    let e = torch("-1", "2", "1").unwrap_err();
    assert_eq!(
        e.to_string(),
        "the environment variable RANK is \"-1\", but must be a non-negative integer"
    );
    // Empty counts as unset.
    assert_eq!(
        parse(&[("RANK", ""), ("WORLD_SIZE", "")]).unwrap_err(),
        LaunchEnvError::NoLauncher
    );
}

#[test]
fn the_local_rank_picks_the_gpu() {
    let env = |local_rank| LaunchEnv {
        launcher: Launcher::Torchrun,
        rank: local_rank,
        world_size: 8,
        local_rank,
        master_addr: "h".into(),
        master_port: 1,
    };
    assert_eq!(env(3).device_ordinal(8), Ok(3));
    // One GPU visible per process (srun --gpus-per-task=1): device 0.
    assert_eq!(env(3).device_ordinal(1), Ok(0));
    assert_eq!(
        env(3).device_ordinal(2),
        Err(LaunchEnvError::NoDeviceForRank {
            local_rank: 3,
            devices: 2
        })
    );
    assert!(env(0).device_ordinal(0).is_err());
}
