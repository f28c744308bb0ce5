//! Loading a plugin, checking its version, and the result layer.

use std::collections::HashMap;
use std::ffi::c_char;
use std::fmt;
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use libloading::Library;

use super::client::NamedValue;
use super::sys::{self, Args as _};
use crate::error::{ApiVersion, Error, ErrorCode, Result};

/// Environment variable naming the plugin to load.
pub const PLUGIN_ENV: &str = "PW_PJRT_PLUGIN";

/// A loaded PJRT plugin: the shared object and its function table.
///
/// Cheap to clone (an `Arc`). Loading the same file twice returns the same
/// plugin, so `PJRT_Plugin_Initialize` runs once per file and process. Plugins
/// are never unloaded. `Send + Sync`: the function table is immutable and the
/// C API is thread-safe.
#[derive(Clone)]
pub struct Plugin {
    pub(crate) api: Arc<Api>,
}

/// The function table of one plugin, with the result layer on top of it.
pub(crate) struct Api {
    path: PathBuf,
    table: *const sys::PJRT_Api,
    version: ApiVersion,
    attributes: Vec<(String, NamedValue)>,
    /// The outcome of registering pw's custom calls, done once.
    custom_calls: OnceLock<std::result::Result<(), String>>,
    // Never dlclose'd: see the module doc of `pjrt`.
    _library: ManuallyDrop<Library>,
}

// SAFETY: the table is immutable after `GetPjrtApi` and the PJRT C API may be
// called from any thread.
unsafe impl Send for Api {}
// SAFETY: as above; `&Api` only reads the table.
unsafe impl Sync for Api {}

fn registry() -> &'static Mutex<HashMap<PathBuf, Plugin>> {
    static REGISTRY: OnceLock<Mutex<HashMap<PathBuf, Plugin>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(HashMap::new()))
}

fn unreported_errors() -> &'static Mutex<Vec<String>> {
    static ERRORS: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    ERRORS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Records an error no caller can receive: a failing `*_Destroy` in a
/// `Drop`, a failure inside a plugin callback.
pub(crate) fn record_unreported_error(error: Error) {
    unreported_errors()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(error.to_string());
}

/// Takes the errors met where no caller could receive them since the last
/// call: a failing `PJRT_Buffer_Destroy` in `Drop`, a panicking
/// [`Event::on_ready`](super::Event::on_ready) callback. Empty in a healthy
/// process.
pub fn take_unreported_errors() -> Vec<String> {
    std::mem::take(
        &mut *unreported_errors()
            .lock()
            .unwrap_or_else(|e| e.into_inner()),
    )
}

impl Plugin {
    /// Loads the plugin at `path`, checks its API version and initializes it.
    pub fn load(path: impl AsRef<Path>) -> Result<Plugin> {
        let path = path.as_ref();
        if !path.exists() {
            return Err(Error::PluginNotFound {
                path: path.to_path_buf(),
            });
        }
        let key = path.canonicalize()?;
        let mut registry = registry().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(plugin) = registry.get(&key) {
            return Ok(plugin.clone());
        }
        let plugin = Plugin {
            api: Arc::new(Api::open(&key)?),
        };
        registry.insert(key, plugin.clone());
        Ok(plugin)
    }

    /// Loads the plugin [`Plugin::discover_path`] finds.
    pub fn discover() -> Result<Plugin> {
        Plugin::load(Self::discover_path()?)
    }

    /// The plugin to use when none is named: `$PW_PJRT_PLUGIN`; else the
    /// path recorded by `scripts/setup.sh` in [`recorded_plugin_file`]
    /// (`~/.config/pw/pjrt-plugin`); else the CPU plugin of a project venv
    /// (`$PW_VENV`, or a `.venv` in the current directory or one of its
    /// parents).
    pub fn discover_path() -> Result<PathBuf> {
        if let Some(path) = std::env::var_os(PLUGIN_ENV) {
            return Ok(PathBuf::from(path));
        }
        let mut stale = String::new();
        if let Some(file) = recorded_plugin_file() {
            if let Ok(text) = std::fs::read_to_string(&file) {
                let recorded = PathBuf::from(text.trim());
                if recorded.is_file() {
                    return Ok(recorded);
                }
                stale = format!(
                    "; {} records {}, which no longer exists",
                    file.display(),
                    recorded.display()
                );
            }
        }
        let mut venvs = Vec::new();
        if let Some(venv) = std::env::var_os("PW_VENV") {
            venvs.push(PathBuf::from(venv));
        }
        if let Ok(cwd) = std::env::current_dir() {
            venvs.extend(cwd.ancestors().map(|dir| dir.join(".venv")));
        }
        for venv in &venvs {
            if let Some(path) = find_in_venv(venv, "lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so") {
                return Ok(path);
            }
        }
        Err(Error::PluginNotFound {
            path: PathBuf::from(format!(
                "<none: pass --plugin, set {PLUGIN_ENV}, or run scripts/setup.sh, which installs the CPU plugin and records its path{stale}>"
            )),
        })
    }

    /// The file the plugin was loaded from (canonical).
    pub fn path(&self) -> &Path {
        &self.api.path
    }

    /// The PJRT C API version the plugin implements.
    pub fn version(&self) -> ApiVersion {
        self.api.version
    }

    /// The plugin's attributes (`xla_version`, `stablehlo_current_version`...).
    pub fn attributes(&self) -> &[(String, NamedValue)] {
        &self.api.attributes
    }

    /// Whether the plugin's function table has `function` (a C name such as
    /// `"PJRT_Event_Create"`). Unknown names are `false`.
    pub fn provides(&self, function: &str) -> bool {
        self.api.provides(function)
    }
}

impl fmt::Debug for Plugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Plugin({}, C API {})",
            self.api.path.display(),
            self.api.version
        )
    }
}

/// Bytes of the function table up to the last entry every plugin must have.
const CORE_TABLE_BYTES: usize =
    std::mem::offset_of!(sys::PJRT_Api, PJRT_Client_BufferFromHostBuffer) + 8;

/// Returns an error unless this binding can drive a table of this version
/// and size.
fn check_version(
    path: &Path,
    version: ApiVersion,
    struct_size: usize,
    has_error_fns: bool,
) -> Result<()> {
    let (major, layout_minor) = sys::LAYOUT_VERSION;
    let incompatible = |reason: String| {
        Error::IncompatibleVersion {
        path: path.to_path_buf(),
        found: version,
        supported: format!(
            "{major}.{} or newer within major {major}; struct layouts follow {major}.{layout_minor}",
            sys::MIN_MINOR
        ),
        reason,
    }
    };
    if version.major != major {
        return Err(incompatible(format!(
            "major version {} breaks the ABI this binding implements (major {major})",
            version.major
        )));
    }
    if version.minor < sys::MIN_MINOR {
        return Err(incompatible(format!(
            "before {major}.{} the function table had another order",
            sys::MIN_MINOR
        )));
    }
    if struct_size < CORE_TABLE_BYTES {
        return Err(incompatible(format!(
            "its function table is {struct_size} bytes, shorter than the {CORE_TABLE_BYTES} bytes of the core entries"
        )));
    }
    if !has_error_fns {
        return Err(incompatible(
            "its table lacks PJRT_Error_Destroy or PJRT_Error_Message".into(),
        ));
    }
    Ok(())
}

/// The file in which `scripts/setup.sh` records the default plugin's path:
/// `$XDG_CONFIG_HOME/pw/pjrt-plugin`, or `~/.config/pw/pjrt-plugin`.
pub fn recorded_plugin_file() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|dir| dir.join("pw").join("pjrt-plugin"))
}

/// Finds `rel` under `<venv>/lib/python3*/site-packages/`.
pub(crate) fn find_in_venv(venv: &Path, rel: &str) -> Option<PathBuf> {
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    lib.flatten()
        .map(|entry| entry.path().join("site-packages").join(rel))
        .find(|candidate| candidate.is_file())
}

impl Api {
    fn open(path: &Path) -> Result<Api> {
        // SAFETY: loading a shared object runs its initializers; that is the
        // documented contract of a PJRT plugin.
        let library = unsafe { Library::new(path) }.map_err(|e| Error::PluginLoad {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let not_a_plugin = |reason: String| Error::NotAPlugin {
            path: path.to_path_buf(),
            reason,
        };
        // SAFETY: `GetPjrtApi` has this signature in every PJRT plugin.
        let get_api = unsafe { library.get::<sys::GetPjrtApiFn>(b"GetPjrtApi\0") }
            .map_err(|e| not_a_plugin(format!("it exports no `GetPjrtApi` ({e})")))?;
        // SAFETY: the symbol is a PJRT plugin's entry point.
        let table = unsafe { get_api() };
        if table.is_null() {
            return Err(not_a_plugin("`GetPjrtApi` returned null".into()));
        }
        // SAFETY: non-null; a plugin's table starts with `struct_size` and
        // the version struct, present in every API version.
        let (struct_size, major, minor) = unsafe {
            let t = &*table;
            (
                t.struct_size,
                t.pjrt_api_version.major_version,
                t.pjrt_api_version.minor_version,
            )
        };
        let version = ApiVersion { major, minor };
        let mut api = Api {
            path: path.to_path_buf(),
            table,
            version,
            attributes: Vec::new(),
            custom_calls: OnceLock::new(),
            _library: ManuallyDrop::new(library),
        };
        // SAFETY: only read if `struct_size` covers the core entries.
        let has_error_fns = struct_size >= CORE_TABLE_BYTES
            && unsafe {
                (*table).PJRT_Error_Destroy.is_some() && (*table).PJRT_Error_Message.is_some()
            };
        check_version(path, version, struct_size, has_error_fns)?;
        let mut args = sys::PJRT_Plugin_Initialize_Args::new();
        // SAFETY: args is a valid, correctly sized argument struct.
        unsafe { call!(&api, PJRT_Plugin_Initialize, &mut args)? };
        api.attributes = api.read_attributes()?;
        Ok(api)
    }

    /// Registers pw's custom-call handlers ([`crate::linalg`]) for the
    /// `cpu` platform through the plugin's FFI extension, once per plugin.
    /// A plugin without that extension gets none (its compiles then name
    /// the missing target themselves).
    pub(crate) fn register_custom_calls(&self) -> Result<()> {
        let outcome = self.custom_calls.get_or_init(|| {
            let Some(register) = self.ffi_register_handler() else {
                return Ok(());
            };
            const PLATFORM: &str = "cpu";
            for (name, handler) in crate::linalg::HANDLERS {
                let mut args = sys::PJRT_FFI_Register_Handler_Args::new();
                args.target_name = name.as_ptr().cast();
                args.target_name_size = name.len();
                args.handler = *handler as *mut std::ffi::c_void;
                args.platform_name = PLATFORM.as_ptr().cast();
                args.platform_name_size = PLATFORM.len();
                // SAFETY: valid args whose strings live through the call; the
                // handler is an `XLA_FFI_Handler` that lives as long as the process.
                let error = unsafe { register(&mut args) };
                // SAFETY: `error` is null or a fresh error we own.
                unsafe { self.check("PJRT_FFI_Register_Handler", error) }
                    .map_err(|e| format!("registering the custom call {name}: {e}"))?;
            }
            Ok(())
        });
        outcome.clone().map_err(Error::InvalidArgument)
    }

    /// The FFI extension's `register_handler`, if the plugin has one.
    fn ffi_register_handler(
        &self,
    ) -> Option<
        unsafe extern "C" fn(*mut sys::PJRT_FFI_Register_Handler_Args) -> *mut sys::PJRT_Error,
    > {
        // SAFETY: `table` is valid for the process lifetime.
        let mut next =
            unsafe { (*self.table).extension_start } as *const sys::PJRT_Extension_Header;
        let needed = std::mem::offset_of!(sys::PJRT_FFI_Extension, register_handler) + 8;
        while !next.is_null() {
            // SAFETY: every extension starts with this header; the chain is
            // the plugin's and lives as long as it.
            let header = unsafe { &*next };
            if header.type_ == sys::PJRT_Extension_Type_FFI {
                if header.struct_size < needed {
                    return None;
                }
                // SAFETY: an FFI extension at least `needed` bytes long.
                return unsafe { (*(next as *const sys::PJRT_FFI_Extension)).register_handler };
            }
            next = header.next;
        }
        None
    }

    fn read_attributes(&self) -> Result<Vec<(String, NamedValue)>> {
        let mut args = sys::PJRT_Plugin_Attributes_Args::new();
        // SAFETY: valid argument struct.
        match unsafe { call!(self, PJRT_Plugin_Attributes, &mut args) } {
            Ok(()) => {}
            // Attributes are informative only; a plugin without them still works.
            Err(Error::Unsupported { .. }) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        }
        // SAFETY: the plugin returned `num_attributes` values that live as
        // long as the process.
        Ok(unsafe { read_named_values(args.attributes, args.num_attributes) })
    }

    /// The table, if it is long enough to hold the entry at `offset`.
    pub(crate) fn entry(&self, offset: usize) -> Option<&sys::PJRT_Api> {
        // SAFETY: `table` is valid for the process lifetime (never unloaded).
        let table = unsafe { &*self.table };
        (offset + std::mem::size_of::<usize>() <= table.struct_size).then_some(table)
    }

    pub(crate) fn unsupported(&self, function: &'static str) -> Error {
        Error::Unsupported {
            function,
            version: self.version,
        }
    }

    fn provides(&self, function: &str) -> bool {
        macro_rules! lookup {
            ($($name:ident),*) => {
                match function {
                    $(stringify!($name) => self
                        .entry(std::mem::offset_of!(sys::PJRT_Api, $name))
                        .is_some_and(|t| t.$name.is_some()),)*
                    _ => false,
                }
            };
        }
        lookup!(
            PJRT_Event_Create,
            PJRT_Event_Set,
            PJRT_Client_CreateViewOfDeviceBuffer,
            PJRT_Buffer_CopyToMemory,
            PJRT_Executable_Fingerprint,
            PJRT_Executable_OutputElementTypes,
            PJRT_Executable_OutputDimensions,
            PJRT_Client_Compile,
            PJRT_LoadedExecutable_Execute,
            PJRT_Executable_Serialize,
            PJRT_Executable_DeserializeAndLoad,
            PJRT_Buffer_CopyToDevice
        )
    }

    /// Converts a returned `PJRT_Error*` into a `Result`, destroying it.
    ///
    /// # Safety
    /// `error` is null or a live error returned by this plugin, owned by the
    /// caller (it is freed here).
    pub(crate) unsafe fn check(
        &self,
        function: &'static str,
        error: *mut sys::PJRT_Error,
    ) -> Result<()> {
        if error.is_null() {
            return Ok(());
        }
        // SAFETY: forwarded contract.
        let (code, message) = unsafe { self.describe(error) };
        // SAFETY: forwarded contract: `error` is owned and not used again.
        unsafe { self.destroy_error(error) };
        Err(Error::Pjrt {
            function,
            code,
            message,
        })
    }

    /// # Safety
    /// `error` is a live error of this plugin.
    pub(crate) unsafe fn describe(&self, error: *mut sys::PJRT_Error) -> (ErrorCode, String) {
        // SAFETY: checked at load time; the table outlives the process.
        let table = unsafe { &*self.table };
        let mut msg = sys::PJRT_Error_Message_Args::new();
        msg.error = error;
        let message = match table.PJRT_Error_Message {
            Some(f) => {
                // SAFETY: valid args; `error` is live.
                unsafe { f(&mut msg) };
                // SAFETY: the plugin returned `message_size` bytes living as long as `error`.
                unsafe { lossy(msg.message, msg.message_size) }
            }
            None => String::from("<no message>"),
        };
        let mut get = sys::PJRT_Error_GetCode_Args::new();
        get.error = error;
        let code = match table.PJRT_Error_GetCode {
            Some(f) => {
                // SAFETY: valid args; `error` is live.
                let e = unsafe { f(&mut get) };
                if e.is_null() {
                    ErrorCode::from_raw(get.code)
                } else {
                    // SAFETY: `e` is a fresh error owned by us.
                    unsafe { self.destroy_error(e) };
                    ErrorCode::Other(-1)
                }
            }
            None => ErrorCode::Other(-1),
        };
        (code, message)
    }

    /// # Safety
    /// `error` is a live error of this plugin, owned by the caller.
    pub(crate) unsafe fn destroy_error(&self, error: *mut sys::PJRT_Error) {
        // SAFETY: checked at load time.
        let table = unsafe { &*self.table };
        if let Some(f) = table.PJRT_Error_Destroy {
            let mut args = sys::PJRT_Error_Destroy_Args::new();
            args.error = error;
            // SAFETY: valid args; ownership of `error` ends here.
            unsafe { f(&mut args) };
        }
    }
}

/// Copies a (pointer, length) string the plugin returned.
///
/// # Safety
/// `ptr` is null or valid for `len` bytes.
pub(crate) unsafe fn lossy(ptr: *const c_char, len: usize) -> String {
    if ptr.is_null() || len == 0 {
        return String::new();
    }
    // SAFETY: forwarded contract.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// The `n` named values at `values` (those of a type pw does not know are
/// left out).
///
/// # Safety
/// `values` is null or points to `n` named values returned by the plugin,
/// with valid pointers.
pub(crate) unsafe fn read_named_values(
    values: *const sys::PJRT_NamedValue,
    n: usize,
) -> Vec<(String, NamedValue)> {
    if values.is_null() {
        return Vec::new();
    }
    (0..n)
        // SAFETY: forwarded contract.
        .filter_map(|i| unsafe { read_named_value(&*values.add(i)) })
        .collect()
}

/// # Safety
/// `value` is a named value returned by the plugin, with valid pointers.
unsafe fn read_named_value(value: &sys::PJRT_NamedValue) -> Option<(String, NamedValue)> {
    // SAFETY: forwarded contract.
    let name = unsafe { lossy(value.name, value.name_size) };
    // SAFETY: the union member read is the one `type_` names.
    let parsed = unsafe {
        match value.type_ {
            sys::PJRT_NamedValue_kString => {
                NamedValue::String(lossy(value.value.string_value, value.value_size))
            }
            sys::PJRT_NamedValue_kInt64 => NamedValue::Int64(value.value.int64_value),
            sys::PJRT_NamedValue_kInt64List => {
                let ptr = value.value.int64_array_value;
                if ptr.is_null() {
                    NamedValue::Int64List(Vec::new())
                } else {
                    NamedValue::Int64List(
                        std::slice::from_raw_parts(ptr, value.value_size).to_vec(),
                    )
                }
            }
            sys::PJRT_NamedValue_kFloat => NamedValue::Float(value.value.float_value),
            sys::PJRT_NamedValue_kBool => NamedValue::Bool(value.value.bool_value),
            _ => return None,
        }
    };
    Some((name, parsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(major: i32, minor: i32, size: usize) -> Result<()> {
        check_version(Path::new("p.so"), ApiVersion { major, minor }, size, true)
    }

    #[test]
    fn version_window() {
        let full = std::mem::size_of::<sys::PJRT_Api>();
        assert!(check(0, 115, full).is_ok());
        assert!(check(0, 81, full).is_ok());
        assert!(check(0, 57, CORE_TABLE_BYTES).is_ok());
        let old = check(0, 54, full).unwrap_err().to_string();
        assert!(
            old.contains("C API 0.54") && old.contains("another order"),
            "{old}"
        );
        let major = check(1, 0, full).unwrap_err().to_string();
        assert!(major.contains("major version 1"), "{major}");
        let short = check(0, 90, 64).unwrap_err().to_string();
        assert!(short.contains("64 bytes"), "{short}");
        assert!(check_version(
            Path::new("p.so"),
            ApiVersion {
                major: 0,
                minor: 90
            },
            full,
            false
        )
        .is_err());
    }
}
