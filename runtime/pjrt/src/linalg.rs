//! pw's linear-algebra custom calls: the `lapack_*_ffi` targets JAX's CPU
//! lowering emits for `jnp.linalg` and `jax.lax.linalg` (jaxlib registers
//! its own only with its in-process client, so a PJRT plugin in another
//! process has none). Each kernel takes the operands and attributes jaxlib's
//! kernel of the same name takes (`jaxlib/cpu/lapack_kernels.cc` at
//! jax-v0.10.2) and runs LAPACK ([`crate::lapack`]) on each matrix of the
//! batch. JAX lays the matrices out column-major (its custom calls ask for
//! that layout), batch dimensions outermost.

use crate::lapack::{self, Eig, Scalar, Svd, SvdDriver};
use crate::sys;
use crate::xla_ffi::{self, Call, KernelError, C32, C64};

/// A batch of matrices: (count, rows, columns) from a shape `[..., rows, cols]`.
fn matrices(dims: &[i64]) -> Result<(usize, usize, usize), KernelError> {
    if dims.len() < 2 {
        return Err(KernelError::invalid(format!(
            "expected a batch of matrices, got shape {dims:?}"
        )));
    }
    let size = |d: i64| usize::try_from(d).unwrap_or(0);
    let (batch, matrix) = dims.split_at(dims.len() - 2);
    let count = batch.iter().map(|&d| size(d)).product();
    Ok((count, size(matrix[0]), size(matrix[1])))
}

/// Splits `data` into `count` pieces of `size` elements, after checking it
/// holds exactly that many.
fn each<'a, T>(
    what: &str,
    data: &'a mut [T],
    size: usize,
    count: usize,
) -> Result<Vec<&'a mut [T]>, KernelError> {
    if data.len() != size * count {
        return Err(KernelError::invalid(format!(
            "{what} holds {} elements, not {count} x {size}",
            data.len()
        )));
    }
    if size == 0 {
        return Ok((0..count).map(|_| <&mut [T]>::default()).collect());
    }
    Ok(data.chunks_exact_mut(size).collect())
}

/// Read-only counterpart of [`each`].
fn each_ref<'a, T>(
    what: &str,
    data: &'a [T],
    size: usize,
    count: usize,
) -> Result<Vec<&'a [T]>, KernelError> {
    if data.len() != size * count {
        return Err(KernelError::invalid(format!(
            "{what} holds {} elements, not {count} x {size}",
            data.len()
        )));
    }
    if size == 0 {
        return Ok(vec![&[][..]; count]);
    }
    Ok(data.chunks_exact(size).collect())
}

/// `getrf`: `(x) -> (lu, pivots, info)`, 1-based pivots as LAPACK gives them.
fn getrf<T: Scalar>(call: &Call) -> Result<(), KernelError> {
    let (count, m, n) = matrices(call.arg_dims(0)?)?;
    let k = m.min(n);
    let a = each("the matrices", call.result_from::<T>(0, 0)?, m * n, count)?;
    let pivots = each("the pivots", call.result::<i32>(1)?, k, count)?;
    let info = each("info", call.result::<i32>(2)?, 1, count)?;
    for ((a, pivots), info) in a.into_iter().zip(pivots).zip(info) {
        info[0] = lapack::getrf(m, n, a, pivots)?;
    }
    Ok(())
}

/// `trsm`: `(a, b) -> (x)`, attributes `side`, `uplo`, `trans_x`, `diag`.
fn trsm<T: Scalar>(call: &Call, one: T) -> Result<(), KernelError> {
    let side = call.attr_u8("side")?;
    let (uplo, trans, diag) = (
        call.attr_u8("uplo")?,
        call.attr_u8("trans_x")?,
        call.attr_u8("diag")?,
    );
    let (count, m, n) = matrices(call.arg_dims(1)?)?;
    let k = if side == b'L' { m } else { n };
    let a = each_ref(
        "the triangular matrices",
        call.operand::<T>(0)?,
        k * k,
        count,
    )?;
    let b = each(
        "the right-hand sides",
        call.result_from::<T>(0, 1)?,
        m * n,
        count,
    )?;
    for (a, b) in a.into_iter().zip(b) {
        lapack::trsm(side, uplo, trans, diag, m, n, a, b, one)?;
    }
    Ok(())
}

fn trsm_real<T: Scalar + From<f32>>(call: &Call) -> Result<(), KernelError> {
    trsm::<T>(call, T::from(1.0))
}

fn trsm_c64(call: &Call) -> Result<(), KernelError> {
    trsm(call, C32 { re: 1.0, im: 0.0 })
}

fn trsm_c128(call: &Call) -> Result<(), KernelError> {
    trsm(call, C64 { re: 1.0, im: 0.0 })
}

/// `potrf`: `(x) -> (factor, info)`, attribute `uplo`.
fn potrf<T: Scalar>(call: &Call) -> Result<(), KernelError> {
    let uplo = call.attr_u8("uplo")?;
    let (count, n, _) = matrices(call.arg_dims(0)?)?;
    let a = each("the matrices", call.result_from::<T>(0, 0)?, n * n, count)?;
    let info = each("info", call.result::<i32>(1)?, 1, count)?;
    for (a, info) in a.into_iter().zip(info) {
        info[0] = lapack::potrf(uplo, n, a)?;
    }
    Ok(())
}

/// `geqrf`: `(x) -> (qr, tau)`.
fn geqrf<T: Scalar>(call: &Call) -> Result<(), KernelError> {
    let (count, m, n) = matrices(call.arg_dims(0)?)?;
    let a = each("the matrices", call.result_from::<T>(0, 0)?, m * n, count)?;
    let tau = each("tau", call.result::<T>(1)?, m.min(n), count)?;
    for (a, tau) in a.into_iter().zip(tau) {
        lapack::geqrf(m, n, a, tau)?;
    }
    Ok(())
}

/// `orgqr` / `ungqr`: `(x, tau) -> (q)`.
fn orgqr<T: Scalar>(call: &Call) -> Result<(), KernelError> {
    let (count, m, n) = matrices(call.arg_dims(0)?)?;
    let k = call
        .arg_dims(1)?
        .last()
        .map_or(0, |&d| usize::try_from(d).unwrap_or(0));
    let tau = each_ref("tau", call.operand::<T>(1)?, k, count)?;
    let a = each("the matrices", call.result_from::<T>(0, 0)?, m * n, count)?;
    for (a, tau) in a.into_iter().zip(tau) {
        lapack::orgqr(m, n, k, a, tau)?;
    }
    Ok(())
}

/// `syevd` / `heevd`: `(x) -> (vectors, values, info)`, attributes `uplo`
/// and `mode` (`V`: vectors too, `N`: values only).
fn eigh<T: Scalar>(call: &Call) -> Result<(), KernelError> {
    let (uplo, mode) = (call.attr_u8("uplo")?, call.attr_u8("mode")?);
    let (count, n, _) = matrices(call.arg_dims(0)?)?;
    let a = each("the matrices", call.result_from::<T>(0, 0)?, n * n, count)?;
    let w = each("the eigenvalues", call.result::<T::Real>(1)?, n, count)?;
    let info = each("info", call.result::<i32>(2)?, 1, count)?;
    for ((a, w), info) in a.into_iter().zip(w).zip(info) {
        info[0] = lapack::eigh(mode, uplo, n, a, w)?;
    }
    Ok(())
}

/// `gesdd` / `gesvd`: `(x) -> (x, s, u, vt, info)`, attribute `mode`.
fn svd<T: Scalar>(call: &Call, driver: SvdDriver) -> Result<(), KernelError> {
    let mode = call.attr_u8("mode")?;
    let (count, m, n) = matrices(call.arg_dims(0)?)?;
    let (_, u_rows, u_cols) = matrices(call.ret_dims(2)?)?;
    let (_, vt_rows, vt_cols) = matrices(call.ret_dims(3)?)?;
    if u_rows != m || vt_cols != n {
        return Err(KernelError::invalid(format!(
            "U {u_rows}x{u_cols} and Vt {vt_rows}x{vt_cols} do not fit a {m}x{n} matrix"
        )));
    }
    let a = each("the matrices", call.result_from::<T>(0, 0)?, m * n, count)?;
    let s = each(
        "the singular values",
        call.result::<T::Real>(1)?,
        m.min(n),
        count,
    )?;
    let u = each("U", call.result::<T>(2)?, m * u_cols, count)?;
    let vt = each("Vt", call.result::<T>(3)?, vt_rows * n, count)?;
    let info = each("info", call.result::<i32>(4)?, 1, count)?;
    for ((((a, s), u), vt), info) in a.into_iter().zip(s).zip(u).zip(vt).zip(info) {
        let out = Svd {
            s,
            u,
            u_cols,
            vt,
            vt_rows,
        };
        info[0] = lapack::svd(driver, mode, m, n, a, out)?;
    }
    Ok(())
}

fn gesdd<T: Scalar>(call: &Call) -> Result<(), KernelError> {
    svd::<T>(call, SvdDriver::DivideAndConquer)
}

fn gesvd<T: Scalar>(call: &Call) -> Result<(), KernelError> {
    svd::<T>(call, SvdDriver::Qr)
}

/// `ormqr` / `unmqr`: `(a, tau, c) -> (q c)`, attributes `left` and
/// `transpose`.
fn ormqr<T: Scalar>(call: &Call) -> Result<(), KernelError> {
    let (left, transpose) = (call.attr_bool("left")?, call.attr_bool("transpose")?);
    let (count, m, n) = matrices(call.arg_dims(2)?)?;
    let (_, a_rows, a_cols) = matrices(call.arg_dims(0)?)?;
    let k = call
        .arg_dims(1)?
        .last()
        .map_or(0, |&d| usize::try_from(d).unwrap_or(0));
    let a = each_ref(
        "the reflectors",
        call.operand::<T>(0)?,
        a_rows * a_cols,
        count,
    )?;
    let tau = each_ref("tau", call.operand::<T>(1)?, k, count)?;
    let c = each("the matrices", call.result_from::<T>(0, 2)?, m * n, count)?;
    let side = if left { b'L' } else { b'R' };
    let trans = match (transpose, T::COMPLEX) {
        (false, _) => b'N',
        (true, false) => b'T',
        (true, true) => b'C',
    };
    for ((a, tau), c) in a.into_iter().zip(tau).zip(c) {
        lapack::ormqr(side, trans, m, n, k, a, a_rows, tau, c)?;
    }
    Ok(())
}

/// `geev` of a real type: `(x) -> (real parts, imaginary parts, left
/// vectors, right vectors, info)`, the vectors complex (a conjugate pair's
/// two packed real columns unpacked), attributes `compute_left` and
/// `compute_right` (`V` or `N`). A matrix that is not finite gets info -4
/// without reaching LAPACK, as jaxlib does.
fn geev_real<T: Scalar<Real = T>>(call: &Call) -> Result<(), KernelError> {
    let (jobvl, jobvr) = (
        call.attr_u8("compute_left")?,
        call.attr_u8("compute_right")?,
    );
    let (count, n, _) = matrices(call.arg_dims(0)?)?;
    let x = each_ref("the matrices", call.operand::<T>(0)?, n * n, count)?;
    let wr = each("the real parts", call.result::<T>(0)?, n, count)?;
    let wi = each("the imaginary parts", call.result::<T>(1)?, n, count)?;
    let vl = each(
        "the left vectors",
        call.result::<T::Complex>(2)?,
        n * n,
        count,
    )?;
    let vr = each(
        "the right vectors",
        call.result::<T::Complex>(3)?,
        n * n,
        count,
    )?;
    let info = each("info", call.result::<i32>(4)?, 1, count)?;
    let mut a = vec![T::default(); n * n];
    let (mut packed_l, mut packed_r) = (a.clone(), a.clone());
    let outputs = wr.into_iter().zip(wi).zip(vl).zip(vr).zip(info);
    for (x, ((((wr, wi), vl), vr), info)) in x.into_iter().zip(outputs) {
        a.copy_from_slice(x);
        if !a.iter().all(|v| v.finite()) {
            info[0] = -4;
            continue;
        }
        let out = Eig {
            w: wr,
            wi: &mut *wi,
            vl: &mut packed_l,
            vr: &mut packed_r,
        };
        info[0] = lapack::geev(jobvl, jobvr, n, &mut a, out)?;
        if info[0] == 0 {
            unpack_eigenvectors::<T>(n, wi, &packed_l, vl);
            unpack_eigenvectors::<T>(n, wi, &packed_r, vr);
        }
    }
    Ok(())
}

/// LAPACK's real eigenvectors as complex columns: a real eigenvalue's
/// column as it is; a conjugate pair `j, j+1` stored as the real and
/// imaginary parts `v_j ± i v_{j+1}`.
fn unpack_eigenvectors<T: Scalar>(
    n: usize,
    wi: &[T::Real],
    packed: &[T::Real],
    out: &mut [T::Complex],
) {
    let zero = T::Real::default();
    let mut j = 0;
    while j < n {
        if wi[j] == zero || j + 1 == n {
            for i in 0..n {
                out[j * n + i] = T::pair(packed[j * n + i], zero);
            }
            j += 1;
        } else {
            for i in 0..n {
                let (re, im) = (packed[j * n + i], packed[(j + 1) * n + i]);
                out[j * n + i] = T::pair(re, im);
                out[(j + 1) * n + i] = T::pair(re, -im);
            }
            j += 2;
        }
    }
}

/// `geev` of a complex type: `(x) -> (values, left vectors, right vectors,
/// info)`.
fn geev_complex<T: Scalar>(call: &Call) -> Result<(), KernelError> {
    let (jobvl, jobvr) = (
        call.attr_u8("compute_left")?,
        call.attr_u8("compute_right")?,
    );
    let (count, n, _) = matrices(call.arg_dims(0)?)?;
    let x = each_ref("the matrices", call.operand::<T>(0)?, n * n, count)?;
    let w = each("the eigenvalues", call.result::<T>(0)?, n, count)?;
    let vl = each("the left vectors", call.result::<T>(1)?, n * n, count)?;
    let vr = each("the right vectors", call.result::<T>(2)?, n * n, count)?;
    let info = each("info", call.result::<i32>(3)?, 1, count)?;
    let mut a = vec![T::default(); n * n];
    let outputs = w.into_iter().zip(vl).zip(vr).zip(info);
    for (x, (((w, vl), vr), info)) in x.into_iter().zip(outputs) {
        a.copy_from_slice(x);
        if !a.iter().all(|v| v.finite()) {
            info[0] = -4;
            continue;
        }
        let out = Eig {
            w,
            wi: &mut [],
            vl,
            vr,
        };
        info[0] = lapack::geev(jobvl, jobvr, n, &mut a, out)?;
    }
    Ok(())
}

/// The length of the last dimension of result `i` (a per-matrix vector).
fn vector_len(call: &Call, i: usize) -> Result<usize, KernelError> {
    Ok(call
        .ret_dims(i)?
        .last()
        .map_or(0, |&d| usize::try_from(d).unwrap_or(0)))
}

/// `gees` of a real type: `(x) -> (schur form, vectors, real parts,
/// imaginary parts, selected, info)`, attributes `mode` (`V`, `N`) and
/// `sort` (only `N`, as jaxlib).
fn gees_real<T: Scalar>(call: &Call) -> Result<(), KernelError> {
    schur::<T>(call, true)
}

/// `gees` of a complex type: `(x) -> (schur form, vectors, eigenvalues,
/// selected, info)`.
fn gees_complex<T: Scalar>(call: &Call) -> Result<(), KernelError> {
    schur::<T>(call, false)
}

fn schur<T: Scalar>(call: &Call, split_values: bool) -> Result<(), KernelError> {
    let (mode, sort) = (call.attr_u8("mode")?, call.attr_u8("sort")?);
    if sort != b'N' {
        return Err(KernelError::unimplemented(
            "ordering the eigenvalues of a Schur form (jaxlib does not either)",
        ));
    }
    let (count, n, _) = matrices(call.arg_dims(0)?)?;
    let a = each("the matrices", call.result_from::<T>(0, 0)?, n * n, count)?;
    let vs = each("the Schur vectors", call.result::<T>(1)?, n * n, count)?;
    let w = each("the eigenvalues", call.result::<T>(2)?, n, count)?;
    let tail = if split_values { 3 } else { 2 };
    let mut wi = if split_values {
        each("the imaginary parts", call.result::<T>(3)?, n, count)?
    } else {
        (0..count).map(|_| <&mut [T]>::default()).collect()
    };
    let selected = each("selected", call.result::<i32>(tail + 1)?, 1, count)?;
    let info = each("info", call.result::<i32>(tail + 2)?, 1, count)?;
    let outputs = vs
        .into_iter()
        .zip(w)
        .zip(wi.iter_mut())
        .zip(selected)
        .zip(info);
    for (a, ((((vs, w), wi), selected), info)) in a.into_iter().zip(outputs) {
        (info[0], selected[0]) = lapack::gees(mode, n, a, w, wi, vs)?;
    }
    Ok(())
}

/// `sytrd` / `hetrd`: `(x) -> (reflectors, diagonal, off-diagonal, tau,
/// info)`, attribute `uplo`.
fn sytrd<T: Scalar>(call: &Call) -> Result<(), KernelError> {
    let uplo = call.attr_u8("uplo")?;
    let (count, n, _) = matrices(call.arg_dims(0)?)?;
    let (e_len, tau_len) = (vector_len(call, 2)?, vector_len(call, 3)?);
    let a = each("the matrices", call.result_from::<T>(0, 0)?, n * n, count)?;
    let d = each("the diagonals", call.result::<T::Real>(1)?, n, count)?;
    let e = each(
        "the off-diagonals",
        call.result::<T::Real>(2)?,
        e_len,
        count,
    )?;
    let tau = each("tau", call.result::<T>(3)?, tau_len, count)?;
    let info = each("info", call.result::<i32>(4)?, 1, count)?;
    for ((((a, d), e), tau), info) in a.into_iter().zip(d).zip(e).zip(tau).zip(info) {
        info[0] = lapack::sytrd(uplo, n, a, d, e, tau)?;
    }
    Ok(())
}

/// `gehrd`: `(x) -> (reflectors, tau, info)`, attributes `low` and `high`
/// (1-based, LAPACK's `ilo` and `ihi`).
fn gehrd<T: Scalar>(call: &Call) -> Result<(), KernelError> {
    let (low, high) = (call.attr_i32("low")?, call.attr_i32("high")?);
    let (count, n, _) = matrices(call.arg_dims(0)?)?;
    let tau_len = vector_len(call, 1)?;
    let a = each("the matrices", call.result_from::<T>(0, 0)?, n * n, count)?;
    let tau = each("tau", call.result::<T>(1)?, tau_len, count)?;
    let info = each("info", call.result::<i32>(2)?, 1, count)?;
    for ((a, tau), info) in a.into_iter().zip(tau).zip(info) {
        info[0] = lapack::gehrd(n, low, high, a, tau)?;
    }
    Ok(())
}

/// `gtsv`: `(dl, d, du, b) -> (dl, d, du, x, info)`; the three diagonals
/// have `n` entries each, `dl[0]` and `du[n-1]` unused (JAX's convention).
fn gtsv<T: Scalar>(call: &Call) -> Result<(), KernelError> {
    let (count, n, nrhs) = matrices(call.arg_dims(3)?)?;
    let dl = each("the sub-diagonals", call.result_from::<T>(0, 0)?, n, count)?;
    let d = each("the diagonals", call.result_from::<T>(1, 1)?, n, count)?;
    let du = each(
        "the super-diagonals",
        call.result_from::<T>(2, 2)?,
        n,
        count,
    )?;
    let b = each(
        "the right-hand sides",
        call.result_from::<T>(3, 3)?,
        n * nrhs,
        count,
    )?;
    let info = each("info", call.result::<i32>(4)?, 1, count)?;
    for ((((dl, d), du), b), info) in dl.into_iter().zip(d).zip(du).zip(b).zip(info) {
        let dl = dl.get_mut(1..).unwrap_or_default();
        info[0] = lapack::gtsv(n, nrhs, dl, d, du, b)?;
    }
    Ok(())
}

/// `geqp3`: `(x, jpvt) -> (qr, jpvt, tau)`.
fn geqp3<T: Scalar>(call: &Call) -> Result<(), KernelError> {
    let (count, m, n) = matrices(call.arg_dims(0)?)?;
    let a = each("the matrices", call.result_from::<T>(0, 0)?, m * n, count)?;
    let jpvt = each("the pivots", call.result_from::<i32>(1, 1)?, n, count)?;
    let tau = each("tau", call.result::<T>(2)?, m.min(n), count)?;
    for ((a, jpvt), tau) in a.into_iter().zip(jpvt).zip(tau) {
        lapack::geqp3(m, n, a, jpvt, tau)?;
    }
    Ok(())
}

macro_rules! handlers {
    ($($name:literal => $kernel:expr;)*) => {
        /// Every custom-call target pw registers with a CPU plugin.
        pub(crate) const HANDLERS: &[(&str, sys::XLA_FFI_Handler)] = &[$(
            ($name, {
                unsafe extern "C" fn handler(
                    frame: *mut sys::XLA_FFI_CallFrame,
                ) -> *mut sys::XLA_FFI_Error {
                    // SAFETY: XLA calls a handler with its call frame.
                    unsafe { xla_ffi::handle(frame, $name, $kernel) }
                }
                handler
            }),
        )*];
    };
}

handlers! {
    "lapack_sgetrf_ffi" => getrf::<f32>;
    "lapack_dgetrf_ffi" => getrf::<f64>;
    "lapack_cgetrf_ffi" => getrf::<C32>;
    "lapack_zgetrf_ffi" => getrf::<C64>;
    "lapack_strsm_ffi" => trsm_real::<f32>;
    "lapack_dtrsm_ffi" => trsm_real::<f64>;
    "lapack_ctrsm_ffi" => trsm_c64;
    "lapack_ztrsm_ffi" => trsm_c128;
    "lapack_spotrf_ffi" => potrf::<f32>;
    "lapack_dpotrf_ffi" => potrf::<f64>;
    "lapack_cpotrf_ffi" => potrf::<C32>;
    "lapack_zpotrf_ffi" => potrf::<C64>;
    "lapack_sgeqrf_ffi" => geqrf::<f32>;
    "lapack_dgeqrf_ffi" => geqrf::<f64>;
    "lapack_cgeqrf_ffi" => geqrf::<C32>;
    "lapack_zgeqrf_ffi" => geqrf::<C64>;
    "lapack_sorgqr_ffi" => orgqr::<f32>;
    "lapack_dorgqr_ffi" => orgqr::<f64>;
    "lapack_cungqr_ffi" => orgqr::<C32>;
    "lapack_zungqr_ffi" => orgqr::<C64>;
    "lapack_ssyevd_ffi" => eigh::<f32>;
    "lapack_dsyevd_ffi" => eigh::<f64>;
    "lapack_cheevd_ffi" => eigh::<C32>;
    "lapack_zheevd_ffi" => eigh::<C64>;
    "lapack_sgesdd_ffi" => gesdd::<f32>;
    "lapack_dgesdd_ffi" => gesdd::<f64>;
    "lapack_cgesdd_ffi" => gesdd::<C32>;
    "lapack_zgesdd_ffi" => gesdd::<C64>;
    "lapack_sgesvd_ffi" => gesvd::<f32>;
    "lapack_dgesvd_ffi" => gesvd::<f64>;
    "lapack_cgesvd_ffi" => gesvd::<C32>;
    "lapack_zgesvd_ffi" => gesvd::<C64>;
    "lapack_sormqr_ffi" => ormqr::<f32>;
    "lapack_dormqr_ffi" => ormqr::<f64>;
    "lapack_cunmqr_ffi" => ormqr::<C32>;
    "lapack_zunmqr_ffi" => ormqr::<C64>;
    "lapack_sgeev_ffi" => geev_real::<f32>;
    "lapack_dgeev_ffi" => geev_real::<f64>;
    "lapack_cgeev_ffi" => geev_complex::<C32>;
    "lapack_zgeev_ffi" => geev_complex::<C64>;
    "lapack_sgees_ffi" => gees_real::<f32>;
    "lapack_dgees_ffi" => gees_real::<f64>;
    "lapack_cgees_ffi" => gees_complex::<C32>;
    "lapack_zgees_ffi" => gees_complex::<C64>;
    "lapack_ssytrd_ffi" => sytrd::<f32>;
    "lapack_dsytrd_ffi" => sytrd::<f64>;
    "lapack_chetrd_ffi" => sytrd::<C32>;
    "lapack_zhetrd_ffi" => sytrd::<C64>;
    "lapack_sgehrd_ffi" => gehrd::<f32>;
    "lapack_dgehrd_ffi" => gehrd::<f64>;
    "lapack_cgehrd_ffi" => gehrd::<C32>;
    "lapack_zgehrd_ffi" => gehrd::<C64>;
    "lapack_sgtsv_ffi" => gtsv::<f32>;
    "lapack_dgtsv_ffi" => gtsv::<f64>;
    "lapack_cgtsv_ffi" => gtsv::<C32>;
    "lapack_zgtsv_ffi" => gtsv::<C64>;
    "lapack_sgeqp3_ffi" => geqp3::<f32>;
    "lapack_dgeqp3_ffi" => geqp3::<f64>;
    "lapack_cgeqp3_ffi" => geqp3::<C32>;
    "lapack_zgeqp3_ffi" => geqp3::<C64>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_of_matrices() {
        assert_eq!(matrices(&[3, 2, 4, 5]).unwrap(), (6, 4, 5));
        assert_eq!(matrices(&[4, 5]).unwrap(), (1, 4, 5));
        assert_eq!(matrices(&[0, 4, 5]).unwrap(), (0, 4, 5));
        assert!(matrices(&[5]).is_err());
        let mut data = [0; 6];
        assert_eq!(each("x", &mut data, 3, 2).unwrap().len(), 2);
        assert!(each("x", &mut data, 4, 2).is_err());
        assert_eq!(each::<u8>("x", &mut [], 0, 3).unwrap().len(), 3);
    }

    #[test]
    fn every_target_is_named_once() {
        let mut names: Vec<_> = HANDLERS.iter().map(|(n, _)| *n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), HANDLERS.len());
    }
}
