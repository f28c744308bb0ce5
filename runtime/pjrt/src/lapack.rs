//! The LAPACK library behind pw's linear-algebra kernels: opened at first
//! use (`$PW_LAPACK_LIBRARY`, else the system's `liblapack.so.3`, which
//! `scripts/setup.sh` installs), each routine looked up by its Fortran name
//! and wrapped in a safe function over slices whose lengths are checked
//! against the matrix sizes before LAPACK sees a pointer.
//!
//! LAPACK's integers are 32-bit here (the LP64 interface of Debian's
//! `liblapack3` and of OpenBLAS's default build). Character options are
//! passed with their hidden Fortran lengths.

use std::ffi::{c_char, c_void};
use std::sync::OnceLock;

use libloading::Library;

use crate::xla_ffi::{Element, KernelError, C32, C64};

/// Environment variable naming the LAPACK shared library to use.
pub const LAPACK_ENV: &str = "PW_LAPACK_LIBRARY";
const DEFAULT_LIBRARY: &str = "liblapack.so.3";

/// LAPACK's integer.
type Int = i32;

/// The element types LAPACK works on: `s`, `d`, `c`, `z`.
pub(crate) trait Scalar: Element {
    /// The type of singular values and eigenvalues.
    type Real: Element + Into<f64> + PartialEq + std::ops::Neg<Output = Self::Real>;
    /// The complex type of the same precision.
    type Complex: Element;
    const PREFIX: &'static str;
    const COMPLEX: bool;
    /// The workspace size a query returned in this element.
    fn len(self) -> f64;
    /// Whether the value (both parts of a complex one) is finite.
    fn finite(self) -> bool;
    /// The complex number `re + i im` of this precision.
    fn pair(re: Self::Real, im: Self::Real) -> Self::Complex;
}

impl Scalar for f32 {
    type Complex = C32;
    type Real = f32;
    const PREFIX: &'static str = "s";
    const COMPLEX: bool = false;
    fn len(self) -> f64 {
        self.into()
    }
    fn finite(self) -> bool {
        self.is_finite()
    }
    fn pair(re: Self::Real, im: Self::Real) -> Self::Complex {
        C32 { re, im }
    }
}

impl Scalar for f64 {
    type Complex = C64;
    type Real = f64;
    const PREFIX: &'static str = "d";
    const COMPLEX: bool = false;
    fn len(self) -> f64 {
        self
    }
    fn finite(self) -> bool {
        self.is_finite()
    }
    fn pair(re: Self::Real, im: Self::Real) -> Self::Complex {
        C64 { re, im }
    }
}

impl Scalar for C32 {
    type Complex = C32;
    type Real = f32;
    const PREFIX: &'static str = "c";
    const COMPLEX: bool = true;
    fn len(self) -> f64 {
        self.re.into()
    }
    fn finite(self) -> bool {
        self.re.is_finite() && self.im.is_finite()
    }
    fn pair(re: Self::Real, im: Self::Real) -> Self::Complex {
        C32 { re, im }
    }
}

impl Scalar for C64 {
    type Complex = C64;
    type Real = f64;
    const PREFIX: &'static str = "z";
    const COMPLEX: bool = true;
    fn len(self) -> f64 {
        self.re
    }
    fn finite(self) -> bool {
        self.re.is_finite() && self.im.is_finite()
    }
    fn pair(re: Self::Real, im: Self::Real) -> Self::Complex {
        C64 { re, im }
    }
}

struct Lapack {
    library: Library,
    name: String,
}

fn lapack() -> Result<&'static Lapack, KernelError> {
    static LAPACK: OnceLock<Result<Lapack, String>> = OnceLock::new();
    LAPACK
        .get_or_init(|| {
            let name = std::env::var(LAPACK_ENV).unwrap_or_else(|_| DEFAULT_LIBRARY.to_string());
            // SAFETY: loading a shared library runs its initializers; LAPACK's
            // have no preconditions.
            match unsafe { Library::new(&name) } {
                Ok(library) => Ok(Lapack { library, name }),
                Err(e) => Err(format!(
                    "pw's linear-algebra kernels need a LAPACK library and {name} could not be \
                     loaded ({e}); install Debian's liblapack3 (scripts/setup.sh does) or set \
                     ${LAPACK_ENV} to a LAPACK shared library"
                )),
            }
        })
        .as_ref()
        .map_err(|e| KernelError::unavailable(e.clone()))
}

impl Lapack {
    /// The routine `name` (its Fortran symbol, such as `sgetrf_`).
    ///
    /// # Safety
    /// `F` is the routine's C signature.
    unsafe fn routine<F: Copy>(&self, name: &str) -> Result<F, KernelError> {
        // SAFETY: forwarded contract.
        let symbol = unsafe { self.library.get::<F>(name.as_bytes()) }
            .map_err(|e| KernelError::unavailable(format!("{} has no {name} ({e})", self.name)))?;
        Ok(*symbol)
    }
}

/// `T`'s routine `base` (`getrf` is `sgetrf_` for f32).
///
/// # Safety
/// `F` is the routine's C signature for `T`.
unsafe fn routine<T: Scalar, F: Copy>(base: &str) -> Result<F, KernelError> {
    // SAFETY: forwarded contract.
    unsafe { lapack()?.routine(&format!("{}{base}_", T::PREFIX)) }
}

fn int(value: usize, what: &str) -> Result<Int, KernelError> {
    Int::try_from(value).map_err(|_| {
        KernelError::unimplemented(format!("{what} = {value} exceeds LAPACK's 32-bit integers"))
    })
}

/// A leading dimension: LAPACK wants at least 1.
fn lead(rows: usize) -> Result<Int, KernelError> {
    int(rows.max(1), "a leading dimension")
}

fn fits(what: &str, len: usize, need: usize) -> Result<(), KernelError> {
    if len < need {
        return Err(KernelError::invalid(format!(
            "{what} holds {len} elements where {need} are needed"
        )));
    }
    Ok(())
}

/// A workspace of the size a query reported (at least `floor`).
fn workspace<T: Element>(reported: f64, floor: usize) -> Result<(Vec<T>, Int), KernelError> {
    let len = (reported.max(0.0) as usize).max(floor).max(1);
    Ok((vec![T::default(); len], int(len, "a workspace")?))
}

/// Refuses LAPACK's report of a bad argument (a bug in the caller, never data).
fn argument_error(routine: &str, info: Int) -> Result<Int, KernelError> {
    if info < 0 {
        return Err(KernelError::invalid(format!(
            "{routine} rejected its argument {}",
            -info
        )));
    }
    Ok(info)
}

const ONE: usize = 1;

/// LU factorization with partial pivoting of the `m`×`n` column-major `a`.
/// Returns LAPACK's `info` (`> 0`: a zero pivot).
pub(crate) fn getrf<T: Scalar>(
    m: usize,
    n: usize,
    a: &mut [T],
    pivots: &mut [Int],
) -> Result<Int, KernelError> {
    type F<T> =
        unsafe extern "C" fn(*const Int, *const Int, *mut T, *const Int, *mut Int, *mut Int);
    fits("the matrix", a.len(), m * n)?;
    fits("the pivots", pivots.len(), m.min(n))?;
    // SAFETY: the signature of ?getrf.
    let f: F<T> = unsafe { routine::<T, _>("getrf")? };
    let (mi, ni, lda) = (int(m, "m")?, int(n, "n")?, lead(m)?);
    let mut info = 0;
    // SAFETY: `a` holds lda*n elements and `pivots` min(m, n) (checked).
    unsafe {
        f(
            &mi,
            &ni,
            a.as_mut_ptr(),
            &lda,
            pivots.as_mut_ptr(),
            &mut info,
        )
    };
    argument_error("getrf", info)
}

/// Solves a triangular system in place: `op(a) x = b` (`side` `L`) or
/// `x op(a) = b` (`R`), `b` being `m`×`n` and `a` square.
#[allow(clippy::too_many_arguments)]
pub(crate) fn trsm<T: Scalar>(
    side: u8,
    uplo: u8,
    trans: u8,
    diag: u8,
    m: usize,
    n: usize,
    a: &[T],
    b: &mut [T],
    one: T,
) -> Result<(), KernelError> {
    type F<T> = unsafe extern "C" fn(
        *const c_char,
        *const c_char,
        *const c_char,
        *const c_char,
        *const Int,
        *const Int,
        *const T,
        *const T,
        *const Int,
        *mut T,
        *const Int,
        usize,
        usize,
        usize,
        usize,
    );
    let k = if side == b'L' { m } else { n };
    fits("the triangular matrix", a.len(), k * k)?;
    fits("the right-hand side", b.len(), m * n)?;
    // SAFETY: the signature of ?trsm (BLAS).
    let f: F<T> = unsafe { routine::<T, _>("trsm")? };
    let (mi, ni, lda, ldb) = (int(m, "m")?, int(n, "n")?, lead(k)?, lead(m)?);
    let opts = [side, uplo, trans, diag].map(|c| c as c_char);
    // SAFETY: sizes checked above; the options are single characters.
    unsafe {
        f(
            &opts[0],
            &opts[1],
            &opts[2],
            &opts[3],
            &mi,
            &ni,
            &one,
            a.as_ptr(),
            &lda,
            b.as_mut_ptr(),
            &ldb,
            ONE,
            ONE,
            ONE,
            ONE,
        )
    };
    Ok(())
}

/// Cholesky factorization of the `n`×`n` `a` (`uplo` half). Returns `info`
/// (`> 0`: not positive definite).
pub(crate) fn potrf<T: Scalar>(uplo: u8, n: usize, a: &mut [T]) -> Result<Int, KernelError> {
    type F<T> =
        unsafe extern "C" fn(*const c_char, *const Int, *mut T, *const Int, *mut Int, usize);
    fits("the matrix", a.len(), n * n)?;
    // SAFETY: the signature of ?potrf.
    let f: F<T> = unsafe { routine::<T, _>("potrf")? };
    let (ni, lda) = (int(n, "n")?, lead(n)?);
    let mut info = 0;
    // SAFETY: `a` holds n*n elements.
    unsafe { f(&(uplo as c_char), &ni, a.as_mut_ptr(), &lda, &mut info, ONE) };
    argument_error("potrf", info)
}

/// QR factorization of the `m`×`n` `a`: R above the diagonal, the
/// Householder vectors below, their scales in `tau`.
pub(crate) fn geqrf<T: Scalar>(
    m: usize,
    n: usize,
    a: &mut [T],
    tau: &mut [T],
) -> Result<(), KernelError> {
    type F<T> = unsafe extern "C" fn(
        *const Int,
        *const Int,
        *mut T,
        *const Int,
        *mut T,
        *mut T,
        *const Int,
        *mut Int,
    );
    fits("the matrix", a.len(), m * n)?;
    fits("tau", tau.len(), m.min(n))?;
    // SAFETY: the signature of ?geqrf.
    let f: F<T> = unsafe { routine::<T, _>("geqrf")? };
    let (mi, ni, lda) = (int(m, "m")?, int(n, "n")?, lead(m)?);
    let mut info = 0;
    let mut size = T::default();
    // SAFETY: a workspace query (lwork = -1) writes only `size`.
    unsafe {
        f(
            &mi,
            &ni,
            a.as_mut_ptr(),
            &lda,
            tau.as_mut_ptr(),
            &mut size,
            &-1,
            &mut info,
        )
    };
    argument_error("geqrf", info)?;
    let (mut work, lwork) = workspace::<T>(size.len(), n)?;
    // SAFETY: sizes checked above; `work` holds `lwork` elements.
    unsafe {
        f(
            &mi,
            &ni,
            a.as_mut_ptr(),
            &lda,
            tau.as_mut_ptr(),
            work.as_mut_ptr(),
            &lwork,
            &mut info,
        )
    };
    argument_error("geqrf", info).map(drop)
}

/// The `m`×`n` matrix Q with orthonormal columns from the first `k`
/// Householder reflectors in `a` and `tau` (`?orgqr`, `?ungqr`).
pub(crate) fn orgqr<T: Scalar>(
    m: usize,
    n: usize,
    k: usize,
    a: &mut [T],
    tau: &[T],
) -> Result<(), KernelError> {
    type F<T> = unsafe extern "C" fn(
        *const Int,
        *const Int,
        *const Int,
        *mut T,
        *const Int,
        *const T,
        *mut T,
        *const Int,
        *mut Int,
    );
    fits("the matrix", a.len(), m * n)?;
    fits("tau", tau.len(), k)?;
    if k > n || n > m {
        return Err(KernelError::invalid(format!(
            "Q of {m}x{n} from {k} reflectors needs k <= n <= m"
        )));
    }
    // SAFETY: the signature of ?orgqr / ?ungqr.
    let f: F<T> = unsafe { routine::<T, _>(if T::COMPLEX { "ungqr" } else { "orgqr" })? };
    let (mi, ni, ki, lda) = (int(m, "m")?, int(n, "n")?, int(k, "k")?, lead(m)?);
    let mut info = 0;
    let mut size = T::default();
    // SAFETY: a workspace query.
    unsafe {
        f(
            &mi,
            &ni,
            &ki,
            a.as_mut_ptr(),
            &lda,
            tau.as_ptr(),
            &mut size,
            &-1,
            &mut info,
        )
    };
    argument_error("orgqr", info)?;
    let (mut work, lwork) = workspace::<T>(size.len(), n)?;
    // SAFETY: sizes checked above.
    unsafe {
        f(
            &mi,
            &ni,
            &ki,
            a.as_mut_ptr(),
            &lda,
            tau.as_ptr(),
            work.as_mut_ptr(),
            &lwork,
            &mut info,
        )
    };
    argument_error("orgqr", info).map(drop)
}

/// Eigenvalues (ascending, into `w`) and, with `jobz` `V`, eigenvectors (over
/// `a`) of the symmetric or Hermitian `n`×`n` `a` (`?syevd`, `?heevd`).
/// Returns `info` (`> 0`: no convergence).
pub(crate) fn eigh<T: Scalar>(
    jobz: u8,
    uplo: u8,
    n: usize,
    a: &mut [T],
    w: &mut [T::Real],
) -> Result<Int, KernelError> {
    type Real<T, R> = unsafe extern "C" fn(
        *const c_char,
        *const c_char,
        *const Int,
        *mut T,
        *const Int,
        *mut R,
        *mut T,
        *const Int,
        *mut Int,
        *const Int,
        *mut Int,
        usize,
        usize,
    );
    type Complex<T, R> = unsafe extern "C" fn(
        *const c_char,
        *const c_char,
        *const Int,
        *mut T,
        *const Int,
        *mut R,
        *mut T,
        *const Int,
        *mut R,
        *const Int,
        *mut Int,
        *const Int,
        *mut Int,
        usize,
        usize,
    );
    fits("the matrix", a.len(), n * n)?;
    fits("the eigenvalues", w.len(), n)?;
    let (jobz, uplo) = (jobz as c_char, uplo as c_char);
    let (ni, lda) = (int(n, "n")?, lead(n)?);
    let (mut info, mut size, mut isize) = (0, T::default(), 0);
    let a = a.as_mut_ptr();
    let w = w.as_mut_ptr();
    if T::COMPLEX {
        // SAFETY: the signature of ?heevd.
        let f: Complex<T, T::Real> = unsafe { routine::<T, _>("heevd")? };
        let mut rsize = T::Real::default();
        // SAFETY: a workspace query.
        unsafe {
            f(
                &jobz, &uplo, &ni, a, &lda, w, &mut size, &-1, &mut rsize, &-1, &mut isize, &-1,
                &mut info, ONE, ONE,
            )
        };
        argument_error("heevd", info)?;
        let (mut work, lwork) = workspace::<T>(size.len(), 1)?;
        let (mut rwork, lrwork) = workspace::<T::Real>(rsize.into(), 1)?;
        let (mut iwork, liwork) = workspace::<Int>(isize.into(), 1)?;
        // SAFETY: sizes checked above; workspaces as queried.
        unsafe {
            f(
                &jobz,
                &uplo,
                &ni,
                a,
                &lda,
                w,
                work.as_mut_ptr(),
                &lwork,
                rwork.as_mut_ptr(),
                &lrwork,
                iwork.as_mut_ptr(),
                &liwork,
                &mut info,
                ONE,
                ONE,
            )
        };
        argument_error("heevd", info)
    } else {
        // SAFETY: the signature of ?syevd.
        let f: Real<T, T::Real> = unsafe { routine::<T, _>("syevd")? };
        // SAFETY: a workspace query.
        unsafe {
            f(
                &jobz, &uplo, &ni, a, &lda, w, &mut size, &-1, &mut isize, &-1, &mut info, ONE, ONE,
            )
        };
        argument_error("syevd", info)?;
        let (mut work, lwork) = workspace::<T>(size.len(), 1)?;
        let (mut iwork, liwork) = workspace::<Int>(isize.into(), 1)?;
        // SAFETY: sizes checked above; workspaces as queried.
        unsafe {
            f(
                &jobz,
                &uplo,
                &ni,
                a,
                &lda,
                w,
                work.as_mut_ptr(),
                &lwork,
                iwork.as_mut_ptr(),
                &liwork,
                &mut info,
                ONE,
                ONE,
            )
        };
        argument_error("syevd", info)
    }
}

/// The SVD's outputs for one `m`×`n` matrix: singular values, `u`
/// (`m`×`u_cols`, leading dimension `m`) and `vt` (`vt_rows`×`n`).
pub(crate) struct Svd<'a, T: Scalar> {
    pub s: &'a mut [T::Real],
    pub u: &'a mut [T],
    pub u_cols: usize,
    pub vt: &'a mut [T],
    pub vt_rows: usize,
}

/// Which LAPACK SVD driver.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SvdDriver {
    /// `?gesdd`, divide and conquer (JAX's default).
    DivideAndConquer,
    /// `?gesvd`, QR iteration.
    Qr,
}

/// The SVD of the `m`×`n` `a` (destroyed), `mode` `A` (full U and Vᵀ), `S`
/// (thin) or `N` (values only). Returns `info` (`> 0`: no convergence).
pub(crate) fn svd<T: Scalar>(
    driver: SvdDriver,
    mode: u8,
    m: usize,
    n: usize,
    a: &mut [T],
    out: Svd<'_, T>,
) -> Result<Int, KernelError> {
    let k = m.min(n);
    if !matches!(mode, b'A' | b'S' | b'N') {
        return Err(KernelError::unimplemented(format!(
            "SVD mode {} (pw computes A, S and N)",
            mode as char
        )));
    }
    fits("the matrix", a.len(), m * n)?;
    fits("the singular values", out.s.len(), k)?;
    if mode != b'N' {
        let (u_cols, vt_rows) = if mode == b'A' { (m, n) } else { (k, k) };
        if out.u_cols < u_cols || out.vt_rows < vt_rows {
            return Err(KernelError::invalid(format!(
                "U {m}x{} and Vt {}x{n} are too small for SVD mode {}",
                out.u_cols, out.vt_rows, mode as char
            )));
        }
        fits("U", out.u.len(), m * out.u_cols)?;
        fits("Vt", out.vt.len(), out.vt_rows * n)?;
    }
    let (mi, ni, lda) = (int(m, "m")?, int(n, "n")?, lead(m)?);
    let (ldu, ldvt) = (lead(m)?, lead(out.vt_rows)?);
    let job = mode as c_char;
    let ptrs = SvdPointers {
        a: a.as_mut_ptr(),
        s: out.s.as_mut_ptr(),
        u: out.u.as_mut_ptr(),
        vt: out.vt.as_mut_ptr(),
    };
    let dims = [mi, ni, lda, ldu, ldvt];
    match driver {
        SvdDriver::DivideAndConquer => gesdd::<T>(job, dims, ptrs, k, m.max(n)),
        SvdDriver::Qr => gesvd::<T>(job, dims, ptrs, k),
    }
}

struct SvdPointers<T: Scalar> {
    a: *mut T,
    s: *mut T::Real,
    u: *mut T,
    vt: *mut T,
}

/// `?gesdd`, over buffers whose sizes [`svd`] checked.
fn gesdd<T: Scalar>(
    job: c_char,
    [m, n, lda, ldu, ldvt]: [Int; 5],
    p: SvdPointers<T>,
    k: usize,
    big: usize,
) -> Result<Int, KernelError> {
    type Real<T, R> = unsafe extern "C" fn(
        *const c_char,
        *const Int,
        *const Int,
        *mut T,
        *const Int,
        *mut R,
        *mut T,
        *const Int,
        *mut T,
        *const Int,
        *mut T,
        *const Int,
        *mut Int,
        *mut Int,
        usize,
    );
    type Complex<T, R> = unsafe extern "C" fn(
        *const c_char,
        *const Int,
        *const Int,
        *mut T,
        *const Int,
        *mut R,
        *mut T,
        *const Int,
        *mut T,
        *const Int,
        *mut T,
        *const Int,
        *mut R,
        *mut Int,
        *mut Int,
        usize,
    );
    let mut iwork = vec![0 as Int; (8 * k).max(1)];
    let (mut info, mut size) = (0, T::default());
    if T::COMPLEX {
        // LAPACK 3.7's bound on the real workspace.
        let rwork_len = if job == b'N' as c_char {
            7 * k
        } else {
            (5 * k * k + 5 * k).max(2 * big * k + 2 * k * k + k)
        };
        let mut rwork = vec![T::Real::default(); rwork_len.max(1)];
        // SAFETY: the signature of ?gesdd for complex types.
        let f: Complex<T, T::Real> = unsafe { routine::<T, _>("gesdd")? };
        let mut call = |work: *mut T, lwork: Int, info: &mut Int| {
            // SAFETY: buffers checked by `svd`; workspaces sized as LAPACK asks.
            unsafe {
                f(
                    &job,
                    &m,
                    &n,
                    p.a,
                    &lda,
                    p.s,
                    p.u,
                    &ldu,
                    p.vt,
                    &ldvt,
                    work,
                    &lwork,
                    rwork.as_mut_ptr(),
                    iwork.as_mut_ptr(),
                    info,
                    ONE,
                )
            }
        };
        call(&mut size, -1, &mut info);
        argument_error("gesdd", info)?;
        let (mut work, lwork) = workspace::<T>(size.len(), 1)?;
        call(work.as_mut_ptr(), lwork, &mut info);
    } else {
        // SAFETY: the signature of ?gesdd for real types.
        let f: Real<T, T::Real> = unsafe { routine::<T, _>("gesdd")? };
        let mut call = |work: *mut T, lwork: Int, info: &mut Int| {
            // SAFETY: as above.
            unsafe {
                f(
                    &job,
                    &m,
                    &n,
                    p.a,
                    &lda,
                    p.s,
                    p.u,
                    &ldu,
                    p.vt,
                    &ldvt,
                    work,
                    &lwork,
                    iwork.as_mut_ptr(),
                    info,
                    ONE,
                )
            }
        };
        call(&mut size, -1, &mut info);
        argument_error("gesdd", info)?;
        let (mut work, lwork) = workspace::<T>(size.len(), 1)?;
        call(work.as_mut_ptr(), lwork, &mut info);
    }
    argument_error("gesdd", info)
}

/// `?gesvd`, over buffers whose sizes [`svd`] checked.
fn gesvd<T: Scalar>(
    job: c_char,
    [m, n, lda, ldu, ldvt]: [Int; 5],
    p: SvdPointers<T>,
    k: usize,
) -> Result<Int, KernelError> {
    type Real<T, R> = unsafe extern "C" fn(
        *const c_char,
        *const c_char,
        *const Int,
        *const Int,
        *mut T,
        *const Int,
        *mut R,
        *mut T,
        *const Int,
        *mut T,
        *const Int,
        *mut T,
        *const Int,
        *mut Int,
        usize,
        usize,
    );
    type Complex<T, R> = unsafe extern "C" fn(
        *const c_char,
        *const c_char,
        *const Int,
        *const Int,
        *mut T,
        *const Int,
        *mut R,
        *mut T,
        *const Int,
        *mut T,
        *const Int,
        *mut T,
        *const Int,
        *mut R,
        *mut Int,
        usize,
        usize,
    );
    let (mut info, mut size) = (0, T::default());
    if T::COMPLEX {
        let mut rwork = vec![T::Real::default(); (5 * k).max(1)];
        // SAFETY: the signature of ?gesvd for complex types.
        let f: Complex<T, T::Real> = unsafe { routine::<T, _>("gesvd")? };
        let mut call = |work: *mut T, lwork: Int, info: &mut Int| {
            // SAFETY: buffers checked by `svd`; workspaces sized as LAPACK asks.
            unsafe {
                f(
                    &job,
                    &job,
                    &m,
                    &n,
                    p.a,
                    &lda,
                    p.s,
                    p.u,
                    &ldu,
                    p.vt,
                    &ldvt,
                    work,
                    &lwork,
                    rwork.as_mut_ptr(),
                    info,
                    ONE,
                    ONE,
                )
            }
        };
        call(&mut size, -1, &mut info);
        argument_error("gesvd", info)?;
        let (mut work, lwork) = workspace::<T>(size.len(), 1)?;
        call(work.as_mut_ptr(), lwork, &mut info);
    } else {
        // SAFETY: the signature of ?gesvd for real types.
        let f: Real<T, T::Real> = unsafe { routine::<T, _>("gesvd")? };
        let call = |work: *mut T, lwork: Int, info: &mut Int| {
            // SAFETY: as above.
            unsafe {
                f(
                    &job, &job, &m, &n, p.a, &lda, p.s, p.u, &ldu, p.vt, &ldvt, work, &lwork, info,
                    ONE, ONE,
                )
            }
        };
        call(&mut size, -1, &mut info);
        argument_error("gesvd", info)?;
        let (mut work, lwork) = workspace::<T>(size.len(), 1)?;
        call(work.as_mut_ptr(), lwork, &mut info);
    }
    argument_error("gesvd", info)
}

/// Applies Q from `k` Householder reflectors (`a`, `tau`, as `geqrf` left
/// them) to the `m`×`n` `c`: `side` `L` (Q C) or `R` (C Q), `trans` `N`,
/// `T` or `C` (`?ormqr`, `?unmqr`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn ormqr<T: Scalar>(
    side: u8,
    trans: u8,
    m: usize,
    n: usize,
    k: usize,
    a: &[T],
    a_rows: usize,
    tau: &[T],
    c: &mut [T],
) -> Result<(), KernelError> {
    type F<T> = unsafe extern "C" fn(
        *const c_char,
        *const c_char,
        *const Int,
        *const Int,
        *const Int,
        *const T,
        *const Int,
        *const T,
        *mut T,
        *const Int,
        *mut T,
        *const Int,
        *mut Int,
        usize,
        usize,
    );
    let q_order = if side == b'L' { m } else { n };
    if a_rows != q_order || k > q_order {
        return Err(KernelError::invalid(format!(
            "{k} reflectors of length {a_rows} cannot multiply a {m}x{n} matrix on side {}",
            side as char
        )));
    }
    fits("the reflectors", a.len(), a_rows * k)?;
    fits("tau", tau.len(), k)?;
    fits("the matrix", c.len(), m * n)?;
    // SAFETY: the signature of ?ormqr / ?unmqr.
    let f: F<T> = unsafe { routine::<T, _>(if T::COMPLEX { "unmqr" } else { "ormqr" })? };
    let (mi, ni, ki) = (int(m, "m")?, int(n, "n")?, int(k, "k")?);
    let (lda, ldc) = (lead(a_rows)?, lead(m)?);
    let (side, trans) = (side as c_char, trans as c_char);
    let (mut info, mut size) = (0, T::default());
    let mut call = |work: *mut T, lwork: Int, info: &mut Int| {
        // SAFETY: sizes checked above; `work` holds `lwork` elements.
        unsafe {
            f(
                &side,
                &trans,
                &mi,
                &ni,
                &ki,
                a.as_ptr(),
                &lda,
                tau.as_ptr(),
                c.as_mut_ptr(),
                &ldc,
                work,
                &lwork,
                info,
                ONE,
                ONE,
            )
        }
    };
    call(&mut size, -1, &mut info);
    argument_error("ormqr", info)?;
    let (mut work, lwork) = workspace::<T>(size.len(), 1)?;
    call(work.as_mut_ptr(), lwork, &mut info);
    argument_error("ormqr", info).map(drop)
}

/// The eigen decomposition of a general `n`×`n` matrix (`a`, destroyed):
/// eigenvalues into `w` (real LAPACK routines give real and imaginary
/// parts, the complex ones complex values) and, where `jobvl` / `jobvr` is
/// `V`, left / right eigenvectors into `vl` / `vr` in LAPACK's own form
/// (for real types, a conjugate pair shares two real columns).
pub(crate) struct Eig<'a, T: Scalar> {
    pub w: &'a mut [T],
    /// The imaginary parts, for real types; unused for complex ones.
    pub wi: &'a mut [T],
    pub vl: &'a mut [T],
    pub vr: &'a mut [T],
}

/// `?geev`. Returns `info` (`> 0`: no convergence).
pub(crate) fn geev<T: Scalar>(
    jobvl: u8,
    jobvr: u8,
    n: usize,
    a: &mut [T],
    out: Eig<'_, T>,
) -> Result<Int, KernelError> {
    type Real<T> = unsafe extern "C" fn(
        *const c_char,
        *const c_char,
        *const Int,
        *mut T,
        *const Int,
        *mut T,
        *mut T,
        *mut T,
        *const Int,
        *mut T,
        *const Int,
        *mut T,
        *const Int,
        *mut Int,
        usize,
        usize,
    );
    type Complex<T, R> = unsafe extern "C" fn(
        *const c_char,
        *const c_char,
        *const Int,
        *mut T,
        *const Int,
        *mut T,
        *mut T,
        *const Int,
        *mut T,
        *const Int,
        *mut T,
        *const Int,
        *mut R,
        *mut Int,
        usize,
        usize,
    );
    fits("the matrix", a.len(), n * n)?;
    fits("the eigenvalues", out.w.len(), n)?;
    fits("the left eigenvectors", out.vl.len(), n * n)?;
    fits("the right eigenvectors", out.vr.len(), n * n)?;
    let (jobvl, jobvr) = (jobvl as c_char, jobvr as c_char);
    let (ni, ld) = (int(n, "n")?, lead(n)?);
    let (mut info, mut size) = (0, T::default());
    let (a, w, vl, vr) = (
        a.as_mut_ptr(),
        out.w.as_mut_ptr(),
        out.vl.as_mut_ptr(),
        out.vr.as_mut_ptr(),
    );
    if T::COMPLEX {
        let mut rwork = vec![T::Real::default(); (2 * n).max(1)];
        // SAFETY: the signature of ?geev for complex types.
        let f: Complex<T, T::Real> = unsafe { routine::<T, _>("geev")? };
        let mut call = |work: *mut T, lwork: Int, info: &mut Int| {
            // SAFETY: sizes checked above; `work` holds `lwork` elements.
            unsafe {
                f(
                    &jobvl,
                    &jobvr,
                    &ni,
                    a,
                    &ld,
                    w,
                    vl,
                    &ld,
                    vr,
                    &ld,
                    work,
                    &lwork,
                    rwork.as_mut_ptr(),
                    info,
                    ONE,
                    ONE,
                )
            }
        };
        call(&mut size, -1, &mut info);
        argument_error("geev", info)?;
        let (mut work, lwork) = workspace::<T>(size.len(), 1)?;
        call(work.as_mut_ptr(), lwork, &mut info);
    } else {
        fits("the imaginary parts", out.wi.len(), n)?;
        let wi = out.wi.as_mut_ptr();
        // SAFETY: the signature of ?geev for real types.
        let f: Real<T> = unsafe { routine::<T, _>("geev")? };
        let call = |work: *mut T, lwork: Int, info: &mut Int| {
            // SAFETY: as above.
            unsafe {
                f(
                    &jobvl, &jobvr, &ni, a, &ld, w, wi, vl, &ld, vr, &ld, work, &lwork, info, ONE,
                    ONE,
                )
            }
        };
        call(&mut size, -1, &mut info);
        argument_error("geev", info)?;
        let (mut work, lwork) = workspace::<T>(size.len(), 1)?;
        call(work.as_mut_ptr(), lwork, &mut info);
    }
    argument_error("geev", info)
}

/// The Schur form of the `n`×`n` `a` (over `a`) with, for `jobvs` `V`, the
/// Schur vectors in `vs`; eigenvalues into `w` (and `wi` for real types).
/// No reordering (`sort` `N`, as jaxlib). Returns `(info, sdim)`.
pub(crate) fn gees<T: Scalar>(
    jobvs: u8,
    n: usize,
    a: &mut [T],
    w: &mut [T],
    wi: &mut [T],
    vs: &mut [T],
) -> Result<(Int, Int), KernelError> {
    type Real<T> = unsafe extern "C" fn(
        *const c_char,
        *const c_char,
        *const c_void,
        *const Int,
        *mut T,
        *const Int,
        *mut Int,
        *mut T,
        *mut T,
        *mut T,
        *const Int,
        *mut T,
        *const Int,
        *mut Int,
        *mut Int,
        usize,
        usize,
    );
    type Complex<T, R> = unsafe extern "C" fn(
        *const c_char,
        *const c_char,
        *const c_void,
        *const Int,
        *mut T,
        *const Int,
        *mut Int,
        *mut T,
        *mut T,
        *const Int,
        *mut T,
        *const Int,
        *mut R,
        *mut Int,
        *mut Int,
        usize,
        usize,
    );
    fits("the matrix", a.len(), n * n)?;
    fits("the eigenvalues", w.len(), n)?;
    fits("the Schur vectors", vs.len(), n * n)?;
    let (jobvs, sort) = (jobvs as c_char, b'N' as c_char);
    let (ni, ld) = (int(n, "n")?, lead(n)?);
    let select = std::ptr::null::<c_void>();
    let mut bwork = vec![0 as Int; n.max(1)];
    let (mut info, mut sdim, mut size) = (0, 0, T::default());
    let (a, w, vs) = (a.as_mut_ptr(), w.as_mut_ptr(), vs.as_mut_ptr());
    if T::COMPLEX {
        let mut rwork = vec![T::Real::default(); n.max(1)];
        // SAFETY: the signature of ?gees for complex types.
        let f: Complex<T, T::Real> = unsafe { routine::<T, _>("gees")? };
        let mut call = |work: *mut T, lwork: Int, info: &mut Int, sdim: &mut Int| {
            // SAFETY: sizes checked above; `work` holds `lwork` elements.
            unsafe {
                f(
                    &jobvs,
                    &sort,
                    select,
                    &ni,
                    a,
                    &ld,
                    sdim,
                    w,
                    vs,
                    &ld,
                    work,
                    &lwork,
                    rwork.as_mut_ptr(),
                    bwork.as_mut_ptr(),
                    info,
                    ONE,
                    ONE,
                )
            }
        };
        call(&mut size, -1, &mut info, &mut sdim);
        argument_error("gees", info)?;
        let (mut work, lwork) = workspace::<T>(size.len(), 1)?;
        call(work.as_mut_ptr(), lwork, &mut info, &mut sdim);
    } else {
        fits("the imaginary parts", wi.len(), n)?;
        let wi = wi.as_mut_ptr();
        // SAFETY: the signature of ?gees for real types.
        let f: Real<T> = unsafe { routine::<T, _>("gees")? };
        let mut call = |work: *mut T, lwork: Int, info: &mut Int, sdim: &mut Int| {
            // SAFETY: as above.
            unsafe {
                f(
                    &jobvs,
                    &sort,
                    select,
                    &ni,
                    a,
                    &ld,
                    sdim,
                    w,
                    wi,
                    vs,
                    &ld,
                    work,
                    &lwork,
                    bwork.as_mut_ptr(),
                    info,
                    ONE,
                    ONE,
                )
            }
        };
        call(&mut size, -1, &mut info, &mut sdim);
        argument_error("gees", info)?;
        let (mut work, lwork) = workspace::<T>(size.len(), 1)?;
        call(work.as_mut_ptr(), lwork, &mut info, &mut sdim);
    }
    Ok((argument_error("gees", info)?, sdim))
}

/// Reduces the symmetric or Hermitian `n`×`n` `a` to tridiagonal form:
/// diagonal `d`, off-diagonal `e`, reflectors over `a` and in `tau`
/// (`?sytrd`, `?hetrd`).
pub(crate) fn sytrd<T: Scalar>(
    uplo: u8,
    n: usize,
    a: &mut [T],
    d: &mut [T::Real],
    e: &mut [T::Real],
    tau: &mut [T],
) -> Result<Int, KernelError> {
    type F<T, R> = unsafe extern "C" fn(
        *const c_char,
        *const Int,
        *mut T,
        *const Int,
        *mut R,
        *mut R,
        *mut T,
        *mut T,
        *const Int,
        *mut Int,
        usize,
    );
    let off = n.saturating_sub(1);
    fits("the matrix", a.len(), n * n)?;
    fits("the diagonal", d.len(), n)?;
    fits("the off-diagonal", e.len(), off)?;
    fits("tau", tau.len(), off)?;
    // SAFETY: the signature of ?sytrd / ?hetrd.
    let f: F<T, T::Real> = unsafe { routine::<T, _>(if T::COMPLEX { "hetrd" } else { "sytrd" })? };
    let uplo = uplo as c_char;
    let (ni, lda) = (int(n, "n")?, lead(n)?);
    let (mut info, mut size) = (0, T::default());
    let (a, d, e, tau) = (
        a.as_mut_ptr(),
        d.as_mut_ptr(),
        e.as_mut_ptr(),
        tau.as_mut_ptr(),
    );
    let call = |work: *mut T, lwork: Int, info: &mut Int| {
        // SAFETY: sizes checked above; `work` holds `lwork` elements.
        unsafe { f(&uplo, &ni, a, &lda, d, e, tau, work, &lwork, info, ONE) }
    };
    call(&mut size, -1, &mut info);
    argument_error("sytrd", info)?;
    let (mut work, lwork) = workspace::<T>(size.len(), 1)?;
    call(work.as_mut_ptr(), lwork, &mut info);
    argument_error("sytrd", info)
}

/// Reduces rows and columns `ilo..=ihi` (1-based) of the `n`×`n` `a` to
/// upper Hessenberg form, reflectors below and in `tau` (`?gehrd`).
pub(crate) fn gehrd<T: Scalar>(
    n: usize,
    ilo: Int,
    ihi: Int,
    a: &mut [T],
    tau: &mut [T],
) -> Result<Int, KernelError> {
    type F<T> = unsafe extern "C" fn(
        *const Int,
        *const Int,
        *const Int,
        *mut T,
        *const Int,
        *mut T,
        *mut T,
        *const Int,
        *mut Int,
    );
    fits("the matrix", a.len(), n * n)?;
    fits("tau", tau.len(), n.saturating_sub(1))?;
    // SAFETY: the signature of ?gehrd.
    let f: F<T> = unsafe { routine::<T, _>("gehrd")? };
    let (ni, lda) = (int(n, "n")?, lead(n)?);
    let (mut info, mut size) = (0, T::default());
    let (a, tau) = (a.as_mut_ptr(), tau.as_mut_ptr());
    let call = |work: *mut T, lwork: Int, info: &mut Int| {
        // SAFETY: sizes checked above (LAPACK checks ilo, ihi against n).
        unsafe { f(&ni, &ilo, &ihi, a, &lda, tau, work, &lwork, info) }
    };
    call(&mut size, -1, &mut info);
    argument_error("gehrd", info)?;
    let (mut work, lwork) = workspace::<T>(size.len(), 1)?;
    call(work.as_mut_ptr(), lwork, &mut info);
    argument_error("gehrd", info)
}

/// Solves the tridiagonal system (`dl` below, `d` on, `du` above the
/// diagonal) for the `n`×`nrhs` right-hand sides `b`, in place (`?gtsv`).
pub(crate) fn gtsv<T: Scalar>(
    n: usize,
    nrhs: usize,
    dl: &mut [T],
    d: &mut [T],
    du: &mut [T],
    b: &mut [T],
) -> Result<Int, KernelError> {
    type F<T> = unsafe extern "C" fn(
        *const Int,
        *const Int,
        *mut T,
        *mut T,
        *mut T,
        *mut T,
        *const Int,
        *mut Int,
    );
    let off = n.saturating_sub(1);
    fits("the sub-diagonal", dl.len(), off)?;
    fits("the diagonal", d.len(), n)?;
    fits("the super-diagonal", du.len(), off)?;
    fits("the right-hand sides", b.len(), n * nrhs)?;
    // SAFETY: the signature of ?gtsv.
    let f: F<T> = unsafe { routine::<T, _>("gtsv")? };
    let (ni, nr, ldb) = (int(n, "n")?, int(nrhs, "nrhs")?, lead(n)?);
    let mut info = 0;
    // SAFETY: sizes checked above.
    unsafe {
        f(
            &ni,
            &nr,
            dl.as_mut_ptr(),
            d.as_mut_ptr(),
            du.as_mut_ptr(),
            b.as_mut_ptr(),
            &ldb,
            &mut info,
        )
    };
    argument_error("gtsv", info)
}

/// QR with column pivoting of the `m`×`n` `a`: `jpvt` in (columns to put
/// first, 1-based; 0 free) and out (the permutation), `tau` as `geqrf`'s.
pub(crate) fn geqp3<T: Scalar>(
    m: usize,
    n: usize,
    a: &mut [T],
    jpvt: &mut [Int],
    tau: &mut [T],
) -> Result<Int, KernelError> {
    type Real<T> = unsafe extern "C" fn(
        *const Int,
        *const Int,
        *mut T,
        *const Int,
        *mut Int,
        *mut T,
        *mut T,
        *const Int,
        *mut Int,
    );
    type Complex<T, R> = unsafe extern "C" fn(
        *const Int,
        *const Int,
        *mut T,
        *const Int,
        *mut Int,
        *mut T,
        *mut T,
        *const Int,
        *mut R,
        *mut Int,
    );
    fits("the matrix", a.len(), m * n)?;
    fits("the pivots", jpvt.len(), n)?;
    fits("tau", tau.len(), m.min(n))?;
    let (mi, ni, lda) = (int(m, "m")?, int(n, "n")?, lead(m)?);
    let (mut info, mut size) = (0, T::default());
    let (a, jpvt, tau) = (a.as_mut_ptr(), jpvt.as_mut_ptr(), tau.as_mut_ptr());
    if T::COMPLEX {
        let mut rwork = vec![T::Real::default(); (2 * n).max(1)];
        // SAFETY: the signature of ?geqp3 for complex types.
        let f: Complex<T, T::Real> = unsafe { routine::<T, _>("geqp3")? };
        let mut call = |work: *mut T, lwork: Int, info: &mut Int| {
            // SAFETY: sizes checked above; `work` holds `lwork` elements.
            unsafe {
                f(
                    &mi,
                    &ni,
                    a,
                    &lda,
                    jpvt,
                    tau,
                    work,
                    &lwork,
                    rwork.as_mut_ptr(),
                    info,
                )
            }
        };
        call(&mut size, -1, &mut info);
        argument_error("geqp3", info)?;
        let (mut work, lwork) = workspace::<T>(size.len(), 1)?;
        call(work.as_mut_ptr(), lwork, &mut info);
    } else {
        // SAFETY: the signature of ?geqp3 for real types.
        let f: Real<T> = unsafe { routine::<T, _>("geqp3")? };
        let call = |work: *mut T, lwork: Int, info: &mut Int| {
            // SAFETY: as above.
            unsafe { f(&mi, &ni, a, &lda, jpvt, tau, work, &lwork, info) }
        };
        call(&mut size, -1, &mut info);
        argument_error("geqp3", info)?;
        let (mut work, lwork) = workspace::<T>(size.len(), 1)?;
        call(work.as_mut_ptr(), lwork, &mut info);
    }
    argument_error("geqp3", info)
}
