//! The operating-system calls of the runtime: hints for host memory and
//! files, whose failure changes nothing. They live in the binding crate,
//! the runtime's one crate with `unsafe` code, beside PJRT's C API.

use std::fs::File;

/// Reserves `bytes` of disk for `file` before they are written (NumPy
/// does the same), without changing its length.
pub fn reserve(file: &File, bytes: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        extern "C" {
            fn fallocate(fd: i32, mode: i32, offset: i64, len: i64) -> i32;
        }
        const FALLOC_FL_KEEP_SIZE: i32 = 1;
        if let Ok(len) = i64::try_from(bytes) {
            // SAFETY: the descriptor is open for as long as `file`
            // lives; fallocate reads no memory of ours.
            unsafe {
                fallocate(file.as_raw_fd(), FALLOC_FL_KEEP_SIZE, 0, len);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, bytes);
}

/// Asks the kernel to back the spare capacity of `buffer` with huge
/// pages (NumPy does the same for arrays of 4 MiB and more); a hint,
/// whose failure changes nothing.
pub fn advise_huge_pages(buffer: &mut Vec<u8>) {
    const MIN_BYTES: usize = 4 << 20;
    if buffer.capacity() < MIN_BYTES {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        const MADV_HUGEPAGE: i32 = 14;
        const PAGE: usize = 4096;
        let start = buffer.as_mut_ptr() as usize;
        let aligned = start.next_multiple_of(PAGE);
        let end = start + buffer.capacity();
        if aligned < end {
            // SAFETY: [aligned, end) lies inside the buffer's allocation,
            // which outlives the call; advice never changes its contents.
            unsafe {
                madvise(
                    aligned as *mut std::ffi::c_void,
                    end - aligned,
                    MADV_HUGEPAGE,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buffer;
}
