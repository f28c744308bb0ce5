//! Compiling each executable once: in memory for a process, on disk across
//! processes.
//!
//! An executable is named by a [`Key`]: the SHA-256 of its StableHLO text,
//! its serialized compile options (which hold the device assignment) and the
//! identity of the plugin that compiles it ([`plugin_identity`]). The disk
//! cache ([`DiskCache`]) keeps serialized executables in one file per key,
//! holding the key's inputs too, so a hit is checked byte for byte (a hash
//! collision or a corrupt file is a miss, never a wrong executable).
//!
//! [`Executables`] is the cache of one PJRT client: memory, then disk (load
//! the serialized executable), then compile (and store it).

use crate::sidecar::Program;
use crate::{
    error::{Error, Result},
    trace::{Span, Track},
    work::Need,
};
use pw_core::python::Function;
use pw_pjrt::{Client, CompileOptions, LoadedExecutable, NamedValue};
use sha2::{Digest, Sha256};
use std::{
    collections::HashMap,
    fmt,
    io::Write,
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, Instant},
};

/// Names an executable: SHA-256 of (text, compile options, plugin identity).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(pub [u8; 32]);

impl Key {
    pub fn of(module: &[u8], options: &[u8], plugin: &str) -> Key {
        let mut h = Sha256::new();
        for part in [module, options, plugin.as_bytes()] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
        Key(h.finalize().into())
    }

    /// Lower-case hex.
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Parses [`Key::hex`].
    pub fn from_hex(text: &str) -> Option<Key> {
        if text.len() != 64 || !text.is_ascii() {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Key(out))
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex()[..16])
    }
}

/// What identifies the compiler behind a client: platform and version,
/// PJRT C API version, the plugin's XLA version and its file's name and
/// size. Executables are only shared between clients with equal
/// identities.
pub fn plugin_identity(client: &Client) -> String {
    let plugin = client.plugin();
    let xla = plugin
        .attributes()
        .iter()
        .find(|(name, _)| name == "xla_version")
        .map(|(_, v)| match v {
            NamedValue::String(s) => s.clone(),
            NamedValue::Int64(n) => n.to_string(),
            other => format!("{other:?}"),
        })
        .unwrap_or_else(|| "?".into());
    let file = plugin
        .path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let size = std::fs::metadata(plugin.path()).map_or(0, |m| m.len());
    format!(
        "{} {}; PJRT C API {}; xla {xla}; {file} ({size} bytes)",
        client.platform_name(),
        client.platform_version(),
        plugin.version()
    )
}

/// The compile options of a need: its device assignment, SPMD or not.
pub fn compile_options(need: &Need) -> pw_pjrt::Result<CompileOptions> {
    CompileOptions::for_device_ids(&need.local_devices, need.spmd)
}

/// The key of `need` when compiled by a plugin of identity `plugin`.
pub fn key_of(need: &Need, plugin: &str) -> Result<Key> {
    Ok(Key::of(
        &need.module,
        &compile_options(need)?.to_proto_bytes()?,
        plugin,
    ))
}

const MAGIC: &[u8; 8] = b"PWEXEC01";

/// Serialized executables on disk, one file per key (see the module doc).
#[derive(Debug, Clone)]
pub struct DiskCache {
    dir: PathBuf,
}

impl DiskCache {
    /// The cache in `dir`, else `$PW_COMPILE_CACHE`, else the user's cache
    /// directory (`$XDG_CACHE_HOME/pw/executables` or
    /// `~/.cache/pw/executables`). `None` when there is no such directory.
    pub fn open(dir: Option<&Path>) -> Option<DiskCache> {
        let dir = match dir {
            Some(d) => d.to_path_buf(),
            None => match std::env::var_os("PW_COMPILE_CACHE") {
                Some(d) => PathBuf::from(d),
                None => std::env::var_os("XDG_CACHE_HOME")
                    .map(PathBuf::from)
                    .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?
                    .join("pw")
                    .join("executables"),
            },
        };
        Some(DiskCache { dir })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &Key) -> PathBuf {
        self.dir.join(format!("{}.pwx", key.hex()))
    }

    /// The serialized executable stored for exactly these inputs.
    pub fn load(&self, key: &Key, module: &[u8], options: &[u8], plugin: &str) -> Option<Vec<u8>> {
        let data = std::fs::read(self.path(key)).ok()?;
        let (body, digest) = data.split_at_checked(data.len().checked_sub(32)?)?;
        if Sha256::digest(body).as_slice() != digest {
            tracing::warn!(key = %key.hex(), "corrupt compile-cache entry ignored");
            return None;
        }
        let mut rest = body.strip_prefix(MAGIC.as_slice())?;
        let mut field = || -> Option<&[u8]> {
            let (len, tail) = rest.split_at_checked(8)?;
            let len = usize::try_from(u64::from_le_bytes(len.try_into().ok()?)).ok()?;
            let (value, tail) = tail.split_at_checked(len)?;
            rest = tail;
            Some(value)
        };
        let same = field()? == module && field()? == options && field()? == plugin.as_bytes();
        let payload = field()?;
        same.then(|| payload.to_vec())
    }

    /// Stores `bytes` for these inputs (atomically: a reader sees the whole
    /// file or none).
    pub fn store(
        &self,
        key: &Key,
        module: &[u8],
        options: &[u8],
        plugin: &str,
        bytes: &[u8],
    ) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let mut body = MAGIC.to_vec();
        for field in [module, options, plugin.as_bytes(), bytes] {
            body.extend_from_slice(&(field.len() as u64).to_le_bytes());
            body.extend_from_slice(field);
        }
        let digest = Sha256::digest(&body);
        let tmp = self
            .dir
            .join(format!(".{}.{}.tmp", key.hex(), std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&body)?;
            f.write_all(&digest)?;
            f.sync_all()?;
            std::fs::rename(&tmp, self.path(key))
        };
        let result = write();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }
}

/// How a client's executables were obtained.
#[derive(Debug, Clone, Default)]
pub struct CompileStats {
    /// Compiled here.
    pub compiled: usize,
    /// Loaded from the disk cache.
    pub from_disk: usize,
    /// Served from memory.
    pub hits: usize,
    /// Seconds spent compiling and loading.
    pub seconds: f64,
    /// One span per compilation or load, for the trace.
    pub spans: Vec<Span>,
}

/// What a step's computation runs: a PJRT executable, or a Python
/// function for the session's sidecar.
#[derive(Clone)]
pub enum Executable {
    Xla(Arc<LoadedExecutable>),
    Python(Arc<Program>),
}

/// The executables of one client (see the module doc).
pub struct Executables {
    client: Client,
    plugin: String,
    disk: Option<DiskCache>,
    loaded: HashMap<Key, Executable>,
    pub stats: CompileStats,
}

impl Executables {
    pub fn new(client: &Client, disk: Option<DiskCache>) -> Executables {
        Executables {
            client: client.clone(),
            plugin: plugin_identity(client),
            disk,
            loaded: HashMap::new(),
            stats: CompileStats::default(),
        }
    }

    /// This client's plugin identity.
    pub fn plugin(&self) -> &str {
        &self.plugin
    }

    pub fn disk(&self) -> Option<&DiskCache> {
        self.disk.as_ref()
    }

    /// The executable of `need`: from memory, the disk cache, or compiled
    /// here (a Python function is read as it is). `progress` hears of each
    /// compilation as it starts.
    pub fn get(&mut self, need: &Need, progress: &mut dyn FnMut(&str)) -> Result<Executable> {
        if Function::is_encoded(&need.module) {
            return Ok(Executable::Python(Arc::new(Program::decode(&need.module)?)));
        }
        let failed = |source: pw_pjrt::Error| Error::Compile {
            what: need.what.clone(),
            devices: need.devices.clone(),
            source: Box::new(source.into()),
        };
        let options = compile_options(need).map_err(failed)?;
        let options_bytes = options.to_proto_bytes().map_err(failed)?;
        let key = Key::of(&need.module, &options_bytes, &self.plugin);
        if let Some(hit) = self.loaded.get(&key) {
            self.stats.hits += 1;
            return Ok(hit.clone());
        }
        let start = Instant::now();
        let cached = self
            .disk
            .as_ref()
            .and_then(|d| d.load(&key, &need.module, &options_bytes, &self.plugin));
        let (executable, how) = match cached
            .map(|bytes| self.client.deserialize_executable(&bytes, None))
        {
            Some(Ok(executable)) => {
                self.stats.from_disk += 1;
                (executable, "load")
            }
            other => {
                if let Some(Err(e)) = other {
                    tracing::warn!(what = %need.what, error = %e, "a cached executable did not load; compiling");
                }
                progress(&format!(
                    "compiling {} for devices {:?}",
                    need.what, need.devices
                ));
                let executable = self
                    .client
                    .compile(&pw_pjrt::Program::mlir(need.module.to_vec()), &options)
                    .map_err(failed)?;
                self.stats.compiled += 1;
                if let Some(disk) = &self.disk {
                    let stored =
                        executable
                            .serialize()
                            .map_err(|e| e.to_string())
                            .and_then(|bytes| {
                                disk.store(&key, &need.module, &options_bytes, &self.plugin, &bytes)
                                    .map_err(|e| e.to_string())
                            });
                    if let Err(e) = stored {
                        tracing::warn!(dir = %disk.dir().display(), error = %e, "cannot store in the compile cache");
                    }
                }
                (executable, "compile")
            }
        };
        let elapsed = start.elapsed();
        tracing::debug!(what = %need.what, devices = ?need.devices, how, seconds = elapsed.as_secs_f64(), "executable ready");
        self.stats.seconds += elapsed.as_secs_f64();
        self.stats.spans.push(Span {
            name: format!("{how} {}", need.what),
            category: "compile",
            track: Track::Compiler,
            start: Duration::ZERO,
            end: elapsed,
        });
        let executable = Executable::Xla(Arc::new(executable));
        self.loaded.insert(key, executable.clone());
        Ok(executable)
    }

    /// Loads a serialized executable (or a Python function) shipped under
    /// `key`.
    pub fn insert_serialized(&mut self, key: Key, bytes: &[u8]) -> Result<()> {
        if self.loaded.contains_key(&key) {
            return Ok(());
        }
        let executable = if Function::is_encoded(bytes) {
            Executable::Python(Arc::new(Program::decode(bytes)?))
        } else {
            let start = Instant::now();
            let executable = self.client.deserialize_executable(bytes, None)?;
            self.stats.seconds += start.elapsed().as_secs_f64();
            Executable::Xla(Arc::new(executable))
        };
        self.loaded.insert(key, executable);
        Ok(())
    }

    /// The executable loaded under `key`.
    pub fn loaded(&self, key: &Key) -> Option<Executable> {
        self.loaded.get(key).cloned()
    }

    /// How many executables are loaded.
    pub fn len(&self) -> usize {
        self.loaded.len()
    }

    pub fn is_empty(&self) -> bool {
        self.loaded.is_empty()
    }

    /// Drops every executable.
    pub fn clear(&mut self) {
        self.loaded.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_hex_round_trips_and_separate_fields() {
        let k = Key::of(b"ab", b"c", "p");
        assert_eq!(Key::from_hex(&k.hex()), Some(k));
        // Moving a byte between fields changes the key.
        assert_ne!(k, Key::of(b"a", b"bc", "p"));
        assert_eq!(Key::from_hex("zz"), None);
    }

    #[test]
    fn disk_entries_are_checked() {
        let dir = std::env::temp_dir().join(format!("pw-cache-test-{}", std::process::id()));
        let disk = DiskCache::open(Some(&dir)).unwrap();
        let key = Key::of(b"text", b"opts", "plugin");
        disk.store(&key, b"text", b"opts", "plugin", b"payload")
            .unwrap();
        assert_eq!(
            disk.load(&key, b"text", b"opts", "plugin").as_deref(),
            Some(&b"payload"[..])
        );
        // Other inputs under the same key (a collision) are a miss.
        assert_eq!(disk.load(&key, b"other", b"opts", "plugin"), None);
        // A corrupt file is a miss.
        let path = disk.path(&key);
        let mut bytes = std::fs::read(&path).unwrap();
        let n = bytes.len();
        bytes[n / 2] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(disk.load(&key, b"text", b"opts", "plugin"), None);
        // A truncated one too.
        std::fs::write(&path, &bytes[..10]).unwrap();
        assert_eq!(disk.load(&key, b"text", b"opts", "plugin"), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
