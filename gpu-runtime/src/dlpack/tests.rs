//! The checks of an import, on tensors built by hand (no GPU), and the refusal of another
//! library's tensor by the safe imports.

use std::ffi::c_void;

use cudarc::driver::sys;
use dlpark::ffi::{DLDataType, DLDevice, DLDeviceType, DLManagedTensorVersioned, DLPackVersion, DLTensor};
use dlpark::{DlpackElement, DlpackFlags};

use super::export::exported_here;
use super::import::{check_tensor, Checked};
use super::streams::{handle_kind, Handle};
use super::{Dlpack, DlpackTensor, DlpackTensorMut};
use crate::error::{DlpackError, Error};

/// A CUDA tensor description of `dtype` at `data` with this shape and strides (kept alive by
/// the caller).
fn tensor(data: u64, dtype: DLDataType, shape: &mut [i64], strides: Option<&mut [i64]>) -> DLTensor {
    DLTensor {
        data: data as usize as *mut c_void,
        device: DLDevice {
            device_type: DLDeviceType::CUDA,
            device_id: 0,
        },
        ndim: shape.len() as i32,
        dtype,
        shape: shape.as_mut_ptr(),
        strides: strides.map_or(std::ptr::null_mut(), |s| s.as_mut_ptr()),
        byte_offset: 0,
    }
}

fn check<T: DlpackElement>(
    t: &DLTensor,
    flags: DlpackFlags,
    write: bool,
) -> std::result::Result<Checked, DlpackError> {
    // SAFETY: the tests' shapes and strides live as long as `t` is used.
    unsafe { check_tensor::<T>(t, DLPackVersion::CURRENT, flags, 0, write) }
}

#[test]
fn a_contiguous_tensor_is_accepted_with_its_layout() {
    let (mut shape, mut strides) = ([2i64, 3], [3i64, 1]);
    let mut t = tensor(0x1000, DLDataType::F32, &mut shape, Some(&mut strides));
    t.byte_offset = 8;
    let c = check::<f32>(&t, DlpackFlags::empty(), true).unwrap();
    assert_eq!(
        c,
        Checked {
            address: 0x1008,
            len: 6,
            shape: vec![2, 3],
            strides: vec![3, 1]
        }
    );
    // Fortran order is contiguous too.
    let (mut shape, mut strides) = ([2i64, 3], [1i64, 2]);
    let t = tensor(0x1000, DLDataType::F64, &mut shape, Some(&mut strides));
    assert_eq!(
        check::<f64>(&t, DlpackFlags::empty(), false).unwrap().strides,
        vec![1, 2]
    );
}

#[test]
fn another_device_type_is_refused() {
    for (device_type, code) in [
        (DLDeviceType::CPU, 1),
        (DLDeviceType::CUDAHOST, 3),
        (DLDeviceType::CUDAMANAGED, 13),
        (DLDeviceType::ROCM, 10),
    ] {
        let (mut shape, mut strides) = ([4i64], [1i64]);
        let mut t = tensor(0x1000, DLDataType::F32, &mut shape, Some(&mut strides));
        t.device.device_type = device_type;
        assert_eq!(
            check::<f32>(&t, DlpackFlags::empty(), false),
            Err(DlpackError::DeviceType { device_type: code })
        );
    }
}

#[test]
fn another_device_is_refused() {
    let (mut shape, mut strides) = ([4i64], [1i64]);
    let mut t = tensor(0x1000, DLDataType::F32, &mut shape, Some(&mut strides));
    t.device.device_id = 1;
    assert_eq!(
        check::<f32>(&t, DlpackFlags::empty(), false),
        Err(DlpackError::Device {
            device_id: 1,
            expected: 0
        })
    );
}

#[test]
fn another_dtype_is_refused() {
    let (mut shape, mut strides) = ([4i64], [1i64]);
    // Same size, another code; same code, another size; vector lanes.
    let cases = [
        (DLDataType::I32, 0u8, 32u8, 1u16),
        (DLDataType::F64, 2, 64, 1),
        (
            DLDataType::new(dlpark::ffi::DLDataTypeCode::FLOAT, 32, 4),
            2,
            32,
            4,
        ),
    ];
    for (dtype, code, bits, lanes) in cases {
        let t = tensor(0x1000, dtype, &mut shape, Some(&mut strides));
        assert_eq!(
            check::<f32>(&t, DlpackFlags::empty(), false),
            Err(DlpackError::Dtype {
                code,
                bits,
                lanes,
                rust_type: "f32",
                expected_code: 2,
                expected_bits: 32
            })
        );
    }
}

#[test]
fn strides_no_contiguous_use_takes_are_refused() {
    // A column of a matrix (gaps), a broadcast (overlap), reversed order.
    let cases: [(&[i64], &[i64]); 3] = [(&[4, 2], &[4, 2]), (&[3, 4], &[0, 1]), (&[5], &[-1])];
    for (shape, strides) in cases {
        let (mut shape, mut strides) = (shape.to_vec(), strides.to_vec());
        let t = tensor(0x1000, DLDataType::F32, &mut shape, Some(&mut strides));
        assert_eq!(
            check::<f32>(&t, DlpackFlags::empty(), false),
            Err(DlpackError::Strides {
                shape: shape.clone(),
                strides: strides.clone()
            })
        );
    }
}

#[test]
fn a_misaligned_first_element_is_refused() {
    let (mut shape, mut strides) = ([4i64], [1i64]);
    let mut t = tensor(0x1000, DLDataType::F64, &mut shape, Some(&mut strides));
    t.byte_offset = 4;
    assert_eq!(
        check::<f64>(&t, DlpackFlags::empty(), false),
        Err(DlpackError::Misaligned {
            address: 0x1004,
            align: 8,
            rust_type: "f64"
        })
    );
    t.data = 0x1002 as *mut c_void;
    t.byte_offset = 0;
    assert!(matches!(
        check::<f64>(&t, DlpackFlags::empty(), false),
        Err(DlpackError::Misaligned { address: 0x1002, .. })
    ));
}

#[test]
fn a_read_only_tensor_is_refused_for_writing_only() {
    let (mut shape, mut strides) = ([4i64], [1i64]);
    let t = tensor(0x1000, DLDataType::I32, &mut shape, Some(&mut strides));
    assert_eq!(
        check::<i32>(&t, DlpackFlags::READ_ONLY, true),
        Err(DlpackError::ReadOnly)
    );
    assert!(check::<i32>(&t, DlpackFlags::READ_ONLY, false).is_ok());
}

#[test]
fn malformed_descriptions_are_refused() {
    let (mut shape, mut strides) = ([-1i64], [1i64]);
    let t = tensor(0x1000, DLDataType::F32, &mut shape, Some(&mut strides));
    assert!(matches!(
        check::<f32>(&t, DlpackFlags::empty(), false),
        Err(DlpackError::Invalid { .. })
    ));
    // A null data pointer with elements.
    let (mut shape, mut strides) = ([4i64], [1i64]);
    let t = tensor(0, DLDataType::F32, &mut shape, Some(&mut strides));
    assert!(matches!(
        check::<f32>(&t, DlpackFlags::empty(), false),
        Err(DlpackError::Invalid { .. })
    ));
    // A shape whose bytes overflow.
    let (mut shape, mut strides) = ([1i64 << 40, 1 << 30], [1i64 << 30, 1]);
    let t = tensor(0x1000, DLDataType::F32, &mut shape, Some(&mut strides));
    assert!(matches!(
        check::<f32>(&t, DlpackFlags::empty(), false),
        Err(DlpackError::Invalid { .. })
    ));
    // No strides: C order before DLPack 1.2, refused since.
    let mut shape = [2i64, 2];
    let t = tensor(0x1000, DLDataType::F32, &mut shape, None);
    // SAFETY: the shape lives; the strides are null.
    let old = unsafe {
        check_tensor::<f32>(
            &t,
            DLPackVersion { major: 1, minor: 1 },
            DlpackFlags::empty(),
            0,
            false,
        )
    };
    assert_eq!(old.unwrap().strides, vec![2, 1]);
    assert!(matches!(
        check::<f32>(&t, DlpackFlags::empty(), false),
        Err(DlpackError::Invalid { .. })
    ));
}

#[test]
fn an_empty_tensor_may_have_a_null_pointer() {
    let (mut shape, mut strides) = ([0i64, 3], [3i64, 1]);
    let t = tensor(0, DLDataType::U8, &mut shape, Some(&mut strides));
    let c = check::<u8>(&t, DlpackFlags::empty(), true).unwrap();
    assert_eq!((c.address, c.len), (0, 0));
}

/// Another library's tensor: a CPU-built one with its own deleter, which counts its calls.
static FOREIGN_DELETES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

unsafe extern "C" fn foreign_deleter(m: *mut DLManagedTensorVersioned) {
    FOREIGN_DELETES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    // SAFETY: made by `foreign` from a Box, deleted once.
    let m = unsafe { Box::from_raw(m) };
    // SAFETY: the shape was leaked from a Box<[i64; 2]> by `foreign`.
    drop(unsafe { Box::from_raw(m.dl_tensor.shape.cast::<[i64; 2]>()) });
}

fn foreign() -> Dlpack {
    let shape = Box::into_raw(Box::new([4i64, 1]));
    let m = Box::new(DLManagedTensorVersioned {
        version: DLPackVersion::CURRENT,
        manager_ctx: std::ptr::null_mut(),
        deleter: Some(foreign_deleter),
        flags: DlpackFlags::empty(),
        dl_tensor: DLTensor {
            data: 0x1000 as *mut c_void,
            device: DLDevice {
                device_type: DLDeviceType::CUDA,
                device_id: 0,
            },
            ndim: 1,
            dtype: DLDataType::F32,
            shape: shape.cast(),
            // The second value is the stride.
            // SAFETY: inside the same allocation.
            strides: unsafe { shape.cast::<i64>().add(1) },
            byte_offset: 0,
        },
    });
    // SAFETY: an initialized tensor owned here, with a deleter that does not unwind.
    unsafe { Dlpack::from_raw(Box::into_raw(m)) }.unwrap()
}

#[test]
fn safe_imports_refuse_another_librarys_tensor_and_release_it() {
    let before = FOREIGN_DELETES.load(std::sync::atomic::Ordering::SeqCst);
    let t = foreign();
    assert!(exported_here(&t).is_none());
    assert!(matches!(
        DlpackTensor::<f32>::from_dlpack_ref(&t),
        Err(Error::Dlpack(DlpackError::NotExportedHere))
    ));
    assert!(matches!(
        DlpackTensor::<f32>::from_dlpack(t),
        Err(Error::Dlpack(DlpackError::NotExportedHere))
    ));
    assert!(matches!(
        DlpackTensorMut::<f32>::from_dlpack(foreign()),
        Err(Error::Dlpack(DlpackError::NotExportedHere))
    ));
    // Both refused tensors were given back to their producer.
    assert_eq!(
        FOREIGN_DELETES.load(std::sync::atomic::Ordering::SeqCst),
        before + 2
    );
}

#[test]
fn special_stream_handles_are_told_apart_from_streams() {
    let handle = |v: usize| handle_kind(v as sys::CUstream);
    // Null and CU_STREAM_LEGACY name the legacy default stream of the context they are used
    // with; CU_STREAM_PER_THREAD names a stream per thread, which an export refuses as its
    // consumer (its end may run on another thread); anything else is one stream.
    assert_eq!(handle(0), Handle::Legacy);
    assert_eq!(handle(1), Handle::Legacy);
    assert_eq!(handle(2), Handle::PerThread);
    for v in [3usize, 0x1000, 0x7f00_dead_b000] {
        assert_eq!(handle(v), Handle::Stream, "{v:#x}");
    }
}
