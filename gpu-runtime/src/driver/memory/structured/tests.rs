//! Extent checks of structured copies, without a GPU.

use super::*;
use crate::error::{CopyError, Error};

#[test]
fn extents_are_checked_before_the_driver() {
    let src = vec![0f32; 16 * 8];
    let mut dst = vec![0f32; 16 * 8];
    // 9 rows of a 8-row image.
    let e = Memcpy2D::new(64, 9)
        .src_host(&src, 64)
        .dst_host(&mut dst, 64)
        .call()
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::EndTooSmall {
                which: "source",
                need: 576,
                bytes: 512,
                ..
            })
        ),
        "{e}"
    );
    // Rows wider than the pitch.
    let e = Memcpy2D::new(68, 2)
        .src_host(&src, 64)
        .dst_host(&mut dst, 128)
        .call()
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::RowsOverlap {
                which: "source",
                pitch: 64,
                start: 0,
                end: 68,
                ..
            })
        ),
        "{e}"
    );
    // No destination.
    let e = Memcpy2D::new(64, 2).src_host(&src, 64).call().unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::EndMissing {
                which: "destination",
                ..
            })
        ),
        "{e}"
    );
    // 3D, host to host, `depth` slices of 8 rows of 64 bytes: through `call` or `call_peer`.
    let mut host_3d = |depth: usize, peer: bool| {
        let copy = Memcpy3D::new(64, 8, depth)
            .src_host(&src, 64)
            .src_height(8)
            .dst_host(&mut dst, 64)
            .dst_height(8);
        let result = if peer { copy.call_peer() } else { copy.call() };
        result.unwrap_err()
    };
    // The box's last slice runs past the end, for both calls, whose extents are checked the
    // same way.
    for peer in [false, true] {
        let e = host_3d(2, peer);
        assert!(
            matches!(
                e,
                Error::Copy(CopyError::EndTooSmall {
                    need: 1024,
                    bytes: 512,
                    ..
                })
            ),
            "{e}"
        );
    }
    // In bounds, but both ends on the host: refused without a driver call.
    let e = host_3d(1, true);
    assert!(matches!(e, Error::Copy(CopyError::BothEndsHost { .. })), "{e}");
    // The same in 2D.
    let e = Memcpy2D::new(64, 8)
        .src_host(&src, 64)
        .dst_host(&mut dst, 64)
        .call()
        .unwrap_err();
    assert!(matches!(e, Error::Copy(CopyError::BothEndsHost { .. })), "{e}");
}
