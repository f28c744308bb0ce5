//! A session's checkpoints: arrays saved to storage, and arrays loaded
//! from it, by the workers that hold their shards (the bytes pass through
//! neither the client nor the controller).
//!
//! A checkpoint is a directory under [`crate::Config::checkpoint_dir`]: a
//! zarr v3 group (`zarr.json`, its attributes list the arrays pw saved)
//! with one zarr v3 array per name ([`pw_exec::zarr`]): a regular chunk
//! grid whose chunk is the array's shard, one file per distinct shard;
//! and Orbax's tree metadata (`_METADATA`), so that Orbax's restore opens
//! it (the names `params.w` and `step` are the tree `{params: {w}, step}`).
//!
//! * **Save**: the arrays are waited for; the checkpoint is written into a
//!   hidden sibling directory (`.NAME.partial-RANDOM`): the metadata here,
//!   each distinct shard by one worker holding it (`SaveShard`), every
//!   file synced. Only then does it replace the checkpoint of that path
//!   (renames: the old one moves aside, the new one in, the old one is
//!   removed). A failure (a worker lost, a full disk) removes the partial
//!   directory and leaves the old checkpoint as it was.
//! * **Load**: the array's `zarr.json` is read and checked against the
//!   layout the client asks for (an input of one of its executables);
//!   each position's worker reads the chunks its box meets (`LoadShard`),
//!   whatever the chunks of the writer, and puts the box on its device.
//!   The array is the session's once every shard is there; a failure
//!   frees what was put.

use super::{
    arrays::{ArrayState, SessionArray},
    executables::Executable,
    Sessions,
};
use crate::error::{Error, Kind, Result};
use pw_core::{geometry::Region, plan::ValueId};
use pw_exec::zarr::{self, ArrayMeta};
use pw_wire::proto;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use tokio::sync::watch;

/// The most arrays one save names.
pub const MAX_SAVED_ARRAYS: usize = 1 << 14;

fn bad(path: &str, why: impl Into<String>) -> Error {
    Error::Checkpoint {
        path: path.to_owned(),
        why: why.into(),
    }
}

impl Sessions<'_> {
    /// Where checkpoint `path` lies: under the server's checkpoint
    /// directory, by relative components that are plain names.
    fn checkpoint(&self, path: &str) -> Result<PathBuf> {
        let root = self.c.inner.config.checkpoint_dir.as_ref().ok_or_else(|| {
            bad(
                path,
                "this pw-server keeps no checkpoints (start it with --checkpoint-dir)",
            )
        })?;
        let relative = Path::new(path);
        let plain = relative
            .components()
            .all(|c| matches!(c, Component::Normal(n) if n.to_str().is_some_and(zarr::valid_name)));
        if path.is_empty() || path.len() > 1024 || !plain {
            return Err(bad(
                path,
                "a checkpoint is named by a relative path of names (letters, digits, `_`, `-`, \
                 `.`; no `..`, no leading `.`)",
            ));
        }
        Ok(root.join(relative))
    }

    /// Saves arrays of session `id` as checkpoint `s.path` (see the module
    /// doc).
    pub async fn save(&self, id: u64, s: &proto::SessionSave) -> Result<()> {
        let dest = self.checkpoint(&s.path)?;
        if s.arrays.is_empty() || s.arrays.len() > MAX_SAVED_ARRAYS {
            return Err(bad(
                &s.path,
                format!(
                    "a save names 1 to {MAX_SAVED_ARRAYS} arrays, not {}",
                    s.arrays.len()
                ),
            ));
        }
        let mut names = std::collections::BTreeSet::new();
        for a in &s.arrays {
            if !zarr::valid_name(&a.name) || a.name == zarr::METADATA || !names.insert(&a.name) {
                return Err(bad(
                    &s.path,
                    format!(
                        "array name {:?} is not a plain name, or is given twice",
                        a.name
                    ),
                ));
            }
        }
        let mut arrays = Vec::with_capacity(s.arrays.len());
        for a in &s.arrays {
            let r = proto::ArrayRef {
                session: id,
                array: a.array,
            };
            arrays.push((a.name.as_str(), a.array, self.ready(&r, Kind::Array).await?));
        }
        let (parent, leaf) = split(&dest, &s.path)?;
        let partial = parent.join(format!(
            ".{leaf}.partial-{:016x}",
            pw_wire::auth::random_id()
        ));
        let written = self
            .write_checkpoint(id, &s.path, &partial, &arrays, true)
            .await;
        let placed = written.and_then(|()| replace(&s.path, &partial, &dest, &parent, &leaf));
        if placed.is_err() {
            let _ = std::fs::remove_dir_all(&partial);
        }
        placed
    }

    /// Writes `arrays` (each with its name and id in session `id`) as a
    /// checkpoint in directory `dir`, every file synced when `durable`.
    pub(super) async fn write_checkpoint(
        &self,
        id: u64,
        path: &str,
        dir: &Path,
        arrays: &[(&str, u64, SessionArray)],
        durable: bool,
    ) -> Result<()> {
        let file_error = |source| Error::CheckpointFile {
            path: path.to_owned(),
            source,
        };
        let mut shards = Vec::new();
        for (name, array_id, array) in arrays {
            let info = array.info();
            if !zarr::storable(info.dtype) {
                return Err(bad(
                    path,
                    format!("{name}: pw does not save {} arrays", info.dtype),
                ));
            }
            let shape: Vec<u64> = info.shape.iter().map(|&d| d.max(0) as u64).collect();
            let meta = ArrayMeta::raw(info.dtype, &shape, &chunk_of(info));
            let attributes =
                serde_json::json!({"pw": {"sharding": info.sharding, "devices": info.devices}});
            let text = meta.to_json(attributes).map_err(file_error)?;
            let array_dir = zarr::array_dir(dir, name);
            zarr::write_file(&array_dir.join(zarr::METADATA), text.as_bytes(), durable)
                .map_err(file_error)?;
            let mut seen: Vec<Region> = Vec::new();
            for position in 0..info.devices.len() {
                let region = info.region(position);
                if seen.contains(&region) {
                    continue;
                }
                let index = meta.chunk_at(&region.offsets).ok_or_else(|| {
                    bad(
                        path,
                        format!(
                            "{name}: its shard at {:?} is not on a regular grid",
                            region.offsets
                        ),
                    )
                })?;
                let file = array_dir.join(meta.chunk_key(&index));
                let addr = array.exe.prepared.addr(info.devices[position])?;
                seen.push(region);
                let owner = id;
                let save = move |command| {
                    proto::controller_event::Event::Save(proto::SaveShard {
                        id: command,
                        owner,
                        value: *array_id,
                        position: position as u32,
                        file: file.display().to_string(),
                        unsynced: !durable,
                    })
                };
                shards.push((addr.worker, format!("save {name}"), save));
            }
        }
        self.stored(path, shards).await?;
        let group = serde_json::json!({
            "zarr_format": 3,
            "node_type": "group",
            "attributes": {"pw": {"arrays": arrays.iter().map(|(n, _, _)| n).collect::<Vec<_>>()}},
        });
        let text = serde_json::to_string_pretty(&group).unwrap_or_default();
        zarr::write_file(&dir.join(zarr::METADATA), text.as_bytes(), durable)
            .map_err(file_error)?;
        let chunks: Vec<Vec<u64>> = arrays.iter().map(|(_, _, a)| chunk_of(a.info())).collect();
        let leaves = arrays
            .iter()
            .zip(&chunks)
            .map(|((n, _, _), c)| (*n, &c[..]));
        match zarr::orbax_tree(leaves) {
            Some(tree) => zarr::write_file(&dir.join(zarr::ORBAX_TREE), tree.as_bytes(), durable)
                .map_err(file_error),
            None => Ok(()),
        }
    }

    /// Sends every command of `shards` (a worker, what it does, the
    /// command) at once and waits for all of them to end (so that none
    /// writes into a partial checkpoint after a failure removed it); the
    /// first failure.
    async fn stored(
        &self,
        path: &str,
        shards: Vec<(
            u32,
            String,
            impl FnOnce(u64) -> proto::controller_event::Event,
        )>,
    ) -> Result<()> {
        let stores = &self.c.inner.stores;
        let asks = shards.into_iter().map(|(worker, what, event)| async move {
            // A worker gone before it was asked fails the same way as one
            // lost while it works: the array is named either way.
            let why = match stores.ask(self.c, worker, event).await {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(why)) => why,
                Err(e) => e.to_string(),
            };
            Err(Error::CheckpointShard {
                path: path.to_owned(),
                worker,
                what,
                why,
            })
        });
        let ended = futures::future::join_all(asks).await;
        ended.into_iter().collect()
    }

    /// Loads array `l.name` of checkpoint `l.path` as array `l.array` of
    /// session `id` (see the module doc).
    pub async fn load(&self, id: u64, l: &proto::SessionLoad) -> Result<()> {
        self.active(id, "a load")?;
        let dir = self.checkpoint(&l.path)?;
        if !zarr::valid_name(&l.name) {
            return Err(bad(
                &l.path,
                format!("array name {:?} is not a plain name", l.name),
            ));
        }
        let array_dir = zarr::array_dir(&dir, &l.name);
        let meta = ArrayMeta::read(&array_dir).map_err(|source| Error::CheckpointFile {
            path: l.path.clone(),
            source,
        })?;
        let exe = self.current(id, l.executable).await?;
        let plan = &exe.prepared.plan;
        let value = *plan.inputs.get(l.input as usize).ok_or(Error::Argument {
            index: l.input as usize,
            what: "the executable has no such input",
        })?;
        let info = &plan.values[value];
        let shape: Vec<u64> = info.shape.iter().map(|&d| d.max(0) as u64).collect();
        if meta.dtype != info.dtype || meta.shape != shape {
            return Err(bad(
                &l.path,
                format!(
                    "{} is {}{:?}; input {} of {} is {}",
                    l.name,
                    meta.dtype,
                    meta.shape,
                    l.input,
                    exe.name,
                    info.describe()
                ),
            ));
        }
        let state = Arc::new(watch::Sender::new(ArrayState::Pending));
        {
            let limits = &self.c.inner.config.limits;
            let mut sessions = self.lock();
            let session = sessions.get(id)?;
            if l.array < super::stream::CLIENT_ARRAYS || session.arrays.contains_key(&l.array) {
                return Err(Error::OutputHandles {
                    name: exe.name.clone(),
                    session: id,
                    why: format!("array {} cannot be loaded (below 2^62, or in use)", l.array),
                });
            }
            let what = format!("an argument of {}", exe.name);
            super::call::room_for(id, session, (std::iter::once(info), &what), &[], limits)?;
            session.arrays.insert(
                l.array,
                SessionArray {
                    exe: exe.clone(),
                    value,
                    state: state.clone(),
                    lineage: None,
                },
            );
        }
        let read = self
            .read_shards((id, l.array), (&exe, value), (&l.path, &array_dir, &l.name))
            .await;
        match read {
            Ok(()) => {
                state.send_replace(ArrayState::Ready);
                Ok(())
            }
            Err(e) => {
                state.send_replace(ArrayState::Failed(e.to_string()));
                let _ = self.delete(&proto::ArrayRefs {
                    session: id,
                    arrays: vec![l.array],
                });
                Err(e)
            }
        }
    }
}

impl Sessions<'_> {
    /// Has each position's worker read its box of zarr array `array_dir`
    /// (named `name` in checkpoint `path`) onto its device as array
    /// `array` of session `id`, laid out as value `value` of `exe`.
    pub(super) async fn read_shards(
        &self,
        (id, array): (u64, u64),
        (exe, value): (&Executable, ValueId),
        (path, array_dir, name): (&str, &Path, &str),
    ) -> Result<()> {
        let info = &exe.prepared.plan.values[value];
        let shard_shape: Vec<usize> = info
            .layout
            .shard_shape
            .iter()
            .map(|&d| d.max(0) as usize)
            .collect();
        let t = proto::ArrayType::of(info.dtype, &shard_shape);
        let mut shards = Vec::with_capacity(info.devices.len());
        for (position, &device) in info.devices.iter().enumerate() {
            let addr = exe.prepared.addr(device)?;
            let load = LoadOf {
                owner: id,
                value: array,
                position: position as u32,
                local_device: addr.local,
                r#type: t.clone(),
                start: info
                    .region(position)
                    .offsets
                    .iter()
                    .map(|&o| o.max(0) as u64)
                    .collect(),
                array_dir: array_dir.display().to_string(),
            };
            shards.push((
                addr.worker,
                format!("load {name} onto device {device}"),
                load.event(),
            ));
        }
        self.stored(path, shards).await
    }
}

/// One position's `LoadShard`, before it has an id.
struct LoadOf {
    owner: u64,
    value: u64,
    position: u32,
    local_device: u32,
    r#type: proto::ArrayType,
    start: Vec<u64>,
    array_dir: String,
}

impl LoadOf {
    fn event(self) -> impl FnOnce(u64) -> proto::controller_event::Event {
        move |command| {
            proto::controller_event::Event::Load(proto::LoadShard {
                id: command,
                owner: self.owner,
                value: self.value,
                position: self.position,
                local_device: self.local_device,
                r#type: Some(self.r#type),
                start: self.start,
                array_dir: self.array_dir,
            })
        }
    }
}

/// The chunk of a value's array in a checkpoint: its shard.
fn chunk_of(info: &pw_core::plan::ValueInfo) -> Vec<u64> {
    info.layout
        .shard_shape
        .iter()
        .map(|&d| d.max(1) as u64)
        .collect()
}

/// `dest`'s parent directory (made when missing) and last name.
fn split(dest: &Path, path: &str) -> Result<(PathBuf, String)> {
    let parent = dest.parent().map(Path::to_path_buf).unwrap_or_default();
    let leaf = dest
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| bad(path, "no name"))?
        .to_owned();
    std::fs::create_dir_all(&parent)
        .map_err(|e| bad(path, format!("cannot make {}: {e}", parent.display())))?;
    Ok((parent, leaf))
}

/// Puts the complete checkpoint `partial` in the place of `dest` (whose
/// old checkpoint, if any, moves aside first and is removed after).
fn replace(path: &str, partial: &Path, dest: &Path, parent: &Path, leaf: &str) -> Result<()> {
    let moved = |e: std::io::Error| bad(path, format!("cannot put the checkpoint in place: {e}"));
    let old = parent.join(format!(".{leaf}.old-{:016x}", pw_wire::auth::random_id()));
    let had = match std::fs::rename(dest, &old) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(moved(e)),
    };
    if let Err(e) = std::fs::rename(partial, dest) {
        if had {
            let _ = std::fs::rename(&old, dest);
        }
        return Err(moved(e));
    }
    zarr::sync_dir(parent).map_err(|source| Error::CheckpointFile {
        path: path.to_owned(),
        source,
    })?;
    if had {
        let _ = std::fs::remove_dir_all(&old);
    }
    Ok(())
}
