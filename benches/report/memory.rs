//! Memory: allocation (pooled and plain), host-to-device transfers (pinned and pageable), the
//! In/InOut convenience call, and axpy's bandwidth next to a device-to-device copy.

use std::ffi::c_void;
use std::time::{Duration, Instant};

use gpu_runtime::cudarc::driver::sys;
use gpu_runtime::driver::HostAllocFlags;
use gpu_runtime::tools::DeviceMemoryPool;
use gpu_runtime::Context;

use crate::dma_floor::DmaFloor;
use crate::table::Row;
use crate::{axpy, best, ok};

const ROUNDS: usize = 7;

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Allocate + free of 1 MiB: the pool and a plain buffer, against cuMemAlloc + cuMemFree.
fn allocation(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    const POOLED: usize = 1_000_000;
    const PLAIN: usize = 2_000;
    let pool = DeviceMemoryPool::new(ctx);
    drop(pool.allocate(1 << 20)?);
    let (mut pooled, mut plain, mut raw) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let t = Instant::now();
        for _ in 0..POOLED {
            drop(std::hint::black_box(
                pool.allocate(std::hint::black_box(1 << 20))?,
            ));
        }
        pooled.push(t.elapsed() / POOLED as u32);
        let t = Instant::now();
        for _ in 0..PLAIN {
            drop(std::hint::black_box(ctx.alloc::<u8>(1 << 20)?));
        }
        plain.push(t.elapsed() / PLAIN as u32);
        ctx.bind()?;
        let t = Instant::now();
        for _ in 0..PLAIN {
            let mut p = 0;
            // SAFETY: valid out-pointer; the context is current; freed right away.
            unsafe {
                ok(sys::cuMemAlloc_v2(&mut p, 1 << 20));
                ok(sys::cuMemFree_v2(p));
            }
        }
        raw.push(t.elapsed() / PLAIN as u32);
    }
    Ok(vec![
        Row {
            figure: "1 MiB allocate + free, pooled",
            raw: "cuMemAlloc + cuMemFree",
            ours: us(best(&pooled)),
            theirs: us(best(&raw)),
            unit: "us",
            higher_is_better: false,
            target: "<= 0.1 us",
            rounds: Vec::new(),
        },
        Row {
            figure: "1 MiB allocate + free, DeviceBuffer",
            raw: "cuMemAlloc + cuMemFree",
            ours: us(best(&plain)),
            theirs: us(best(&raw)),
            unit: "us",
            higher_is_better: false,
            target: "",
            rounds: Vec::new(),
        },
    ])
}

/// 256 MiB host to device, from pinned and from pageable memory.
fn transfers(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    const BYTES: usize = 256 << 20;
    let mut pinned = ctx.pagelocked_empty::<u8, _>(BYTES, HostAllocFlags::NONE)?;
    pinned.as_slice_memory_order_mut().fill(7);
    let pageable = vec![7u8; BYTES];
    let mut dev = ctx.alloc::<u8>(BYTES)?;
    ctx.bind()?;
    let mut raw_host: *mut c_void = std::ptr::null_mut();
    let mut raw_dev = 0;
    // SAFETY: valid out-pointers; the context is current; freed at the end.
    unsafe {
        ok(sys::cuMemHostAlloc(&mut raw_host, BYTES, 0));
        std::ptr::write_bytes(raw_host.cast::<u8>(), 7, BYTES);
        ok(sys::cuMemAlloc_v2(&mut raw_dev, BYTES));
    }
    let (mut ours_pinned, mut raw_pinned, mut ours_pageable, mut raw_pageable) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let t = Instant::now();
        dev.copy_from_host(&pinned)?;
        ours_pinned.push(t.elapsed());
        let t = Instant::now();
        // SAFETY: both hold BYTES bytes.
        unsafe { ok(sys::cuMemcpyHtoD_v2(raw_dev, raw_host, BYTES)) };
        raw_pinned.push(t.elapsed());
        let t = Instant::now();
        dev.copy_from_host(&pageable)?;
        ours_pageable.push(t.elapsed());
        let t = Instant::now();
        // SAFETY: both hold BYTES bytes.
        unsafe { ok(sys::cuMemcpyHtoD_v2(raw_dev, pageable.as_ptr().cast(), BYTES)) };
        raw_pageable.push(t.elapsed());
    }
    // SAFETY: allocated above, freed once.
    unsafe {
        ok(sys::cuMemFreeHost(raw_host));
        ok(sys::cuMemFree_v2(raw_dev));
    }
    let gbs = |d: Duration| BYTES as f64 / d.as_secs_f64() / 1e9;
    Ok(vec![
        Row {
            figure: "host to device 256 MiB, pinned",
            raw: "cuMemHostAlloc + cuMemcpyHtoD",
            ours: gbs(best(&ours_pinned)),
            theirs: gbs(best(&raw_pinned)),
            unit: "GB/s",
            higher_is_better: true,
            target: ">= 0.95x sys",
            rounds: Vec::new(),
        },
        Row {
            figure: "host to device 256 MiB, pageable Vec",
            raw: "cuMemcpyHtoD from the Vec",
            ours: gbs(best(&ours_pageable)),
            theirs: gbs(best(&raw_pageable)),
            unit: "GB/s",
            higher_is_better: true,
            target: "",
            rounds: Vec::new(),
        },
    ])
}

/// axpy with `#[In] x` and `#[InOut] y` at 2^20 floats from Vecs, end to end, against the
/// unstaged sequence PyCUDA's `__call__` performs.
fn convenience(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    const N: usize = 1 << 20;
    const CALLS: usize = 20;
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.001).collect();
    let mut y: Vec<f32> = (0..N).map(|i| 1.0 - (i % 777) as f32 * 0.002).collect();
    let k = axpy::prepare(ctx)?;
    let (grid, block) = ((N as u32).div_ceil(256), 256u32);
    for _ in 0..3 {
        k.call(grid, block, 0.0, &x, &mut y, N as i32)?;
    }
    let dma_floor = DmaFloor::new(ctx, k.function().raw(), &x, &y, grid, block)?;
    let (mut ours, mut raw, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let mut times: Vec<Duration> = (0..CALLS).map(|_| dma_floor.run()).collect();
        times.sort();
        floor.push(times[CALLS / 2]);
        let mut times = Vec::new();
        for _ in 0..CALLS {
            let t = Instant::now();
            k.call(grid, block, 1e-7, &x, &mut y, N as i32)?;
            times.push(t.elapsed());
        }
        times.sort();
        ours.push(times[CALLS / 2]);
        let mut times = Vec::new();
        for _ in 0..CALLS {
            let t = Instant::now();
            ctx.bind()?;
            let bytes = N * 4;
            let (mut xd, mut yd) = (0, 0);
            let (mut a, mut n) = (1e-7f32, N as i32);
            // SAFETY: sizes match the host Vecs; the parameters match the kernel's signature.
            unsafe {
                ok(sys::cuMemAlloc_v2(&mut xd, bytes));
                ok(sys::cuMemAlloc_v2(&mut yd, bytes));
                ok(sys::cuMemcpyHtoD_v2(xd, x.as_ptr().cast(), bytes));
                ok(sys::cuMemcpyHtoD_v2(yd, y.as_ptr().cast(), bytes));
                let mut params: [*mut c_void; 4] = [
                    (&mut a as *mut f32).cast(),
                    (&mut xd as *mut u64).cast(),
                    (&mut yd as *mut u64).cast(),
                    (&mut n as *mut i32).cast(),
                ];
                ok(sys::cuLaunchKernel(
                    k.function().raw(),
                    grid,
                    1,
                    1,
                    block,
                    1,
                    1,
                    0,
                    std::ptr::null_mut(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                ));
                ok(sys::cuMemcpyDtoH_v2(y.as_mut_ptr().cast(), yd, bytes));
                ok(sys::cuMemFree_v2(xd));
                ok(sys::cuMemFree_v2(yd));
            }
            times.push(t.elapsed());
        }
        times.sort();
        raw.push(times[CALLS / 2]);
    }
    Ok(vec![
        Row {
            figure: "axpy In/InOut call, 2^20 floats from Vecs",
            raw: "cuMemAlloc, 2x HtoD, launch, DtoH, cuMemFree",
            ours: us(best(&ours)),
            theirs: us(best(&raw)),
            unit: "us",
            higher_is_better: false,
            target: "<= 750 us (PyCUDA 1515 us)",
            rounds: Vec::new(),
        },
        Row {
            figure: "  the same call against its DMA floor",
            raw: "pinned: 2x HtoDAsync, launch, DtoHAsync",
            ours: us(best(&ours)),
            theirs: us(best(&floor)),
            unit: "us",
            higher_is_better: false,
            target: "<= 1.3x",
            rounds: Vec::new(),
        },
    ])
}

/// axpy over 2^26 floats (reads 8 bytes and writes 4 per element) against a device-to-device
/// copy of the same size (reads and writes 4 bytes per element): how close to the memory
/// system's speed a launched kernel gets.
fn bandwidth(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    const N: usize = 1 << 26;
    let k = axpy::prepare(ctx)?;
    let x = ctx.alloc_zeros::<f32>(N)?;
    let mut y = ctx.alloc_zeros::<f32>(N)?;
    let mut copy = ctx.alloc::<f32>(N)?;
    let (grid, block) = ((N as u32).div_ceil(256), 256u32);
    let (mut ours, mut raw) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        ours.push(k.prepared_timed_call(grid, block, 1.0, &x, &mut y, N as i32)?);
        let start = gpu_runtime::Event::new(ctx)?;
        let end = gpu_runtime::Event::new(ctx)?;
        start.record(None)?;
        ctx.bind()?;
        // SAFETY: both buffers hold N floats; the context is current.
        unsafe { ok(sys::cuMemcpyDtoD_v2(copy.device_ptr(), x.device_ptr(), N * 4)) };
        end.record(None)?;
        end.synchronize()?;
        raw.push(end.time_since(&start)?);
        std::hint::black_box(&mut copy);
    }
    let gbs = |bytes_per_elem: usize, d: Duration| (bytes_per_elem * N) as f64 / d.as_secs_f64() / 1e9;
    Ok(vec![Row {
        figure: "axpy bandwidth, 2^26 floats (bytes moved)",
        raw: "cuMemcpyDtoD of 2^26 floats",
        ours: gbs(12, best(&ours)),
        theirs: gbs(8, best(&raw)),
        unit: "GB/s",
        higher_is_better: true,
        target: "",
        rounds: Vec::new(),
    }])
}

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let mut rows = allocation(ctx)?;
    rows.extend(transfers(ctx)?);
    rows.extend(convenience(ctx)?);
    rows.extend(bandwidth(ctx)?);
    Ok(rows)
}
