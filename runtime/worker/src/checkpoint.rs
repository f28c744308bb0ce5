//! Shards of a session's checkpoint, written to storage and read from it
//! here, where they lie on devices (`SaveShard`, `LoadShard`; the
//! controller's `sessions::checkpoints` says what a checkpoint is). Each is
//! answered by `Stored` on the report link.

use crate::State;
use pw_core::geometry::Region;
use pw_exec::zarr::{self, ArrayMeta};
use pw_wire::proto;
use std::{
    io::Read,
    path::{Component, Path, PathBuf},
    sync::Arc,
};

/// `path` when it is absolute and has no `..` (the controller names every
/// file under its checkpoint directory).
fn checked(path: &str) -> Result<PathBuf, String> {
    let p = Path::new(path);
    if p.is_absolute() && p.components().all(|c| !matches!(c, Component::ParentDir)) {
        Ok(p.to_path_buf())
    } else {
        Err(format!("{path:?} is not an absolute path without `..`"))
    }
}

/// Writes shard `s.position` of array `s.value`, once it is ready, to
/// `s.file` (synced unless `s.unsynced`).
pub async fn save(state: Arc<State>, s: proto::SaveShard) {
    let done = async {
        let file = checked(&s.file)?;
        let durable = !s.unsynced;
        let value = usize::try_from(s.value).map_err(|_| format!("no array {}", s.value))?;
        let buffer = state
            .store
            .wait_for(s.owner, value, s.position as usize, state.patience)
            .await?;
        tokio::task::spawn_blocking(move || {
            buffer
                .wait_ready()
                .map_err(|e| format!("the shard failed: {e}"))?;
            // Written from where the bytes lie when they are in host
            // memory (no copy), else from a copy.
            let write = |bytes: &[u8]| zarr::write_file(&file, bytes, durable);
            let failed = |e: pw_pjrt::Error| e.to_string();
            let written = match buffer.read_in_place(write).map_err(failed)? {
                Some(written) => written,
                None => write(&buffer.to_host_copy().map_err(failed)?),
            };
            written.map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| e.to_string())?
    };
    let error = done.await.err().unwrap_or_default();
    if !error.is_empty() {
        tracing::warn!("saving a shard to {} failed: {error}", s.file);
    }
    answer(&state, s.id, error);
}

/// Reads the box `l` names from the zarr array in `l.array_dir` onto the
/// device, into the store.
pub async fn load(state: Arc<State>, l: proto::LoadShard) {
    let id = l.id;
    let worker = state.clone();
    let done = tokio::task::spawn_blocking(move || load_now(&worker, &l))
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r);
    answer(&state, id, done.err().unwrap_or_default());
}

fn load_now(state: &State, l: &proto::LoadShard) -> Result<(), String> {
    let (dtype, dims, _) = l
        .r#type
        .as_ref()
        .ok_or("a load without a type")?
        .read(crate::service::MAX_SHARD_BYTES)
        .map_err(|e| e.to_string())?;
    if l.start.len() != dims.len() {
        return Err(format!("a box at {:?} of {dims:?}", l.start));
    }
    let dir = checked(&l.array_dir)?;
    let meta = ArrayMeta::read(&dir).map_err(|e| e.to_string())?;
    if meta.dtype != dtype {
        return Err(format!(
            "{} holds {}, not {dtype}",
            dir.display(),
            meta.dtype
        ));
    }
    let offsets = l
        .start
        .iter()
        .map(|&s| i64::try_from(s).map_err(|_| format!("an offset of {s}")))
        .collect::<Result<Vec<i64>, String>>()?;
    let region = Region {
        offsets,
        sizes: dims.iter().map(|&d| d as i64).collect(),
    };
    let device = state.device(l.local_device)?;
    let streamed = match meta.raw_chunk_file(&dir, &region) {
        Some((file, size)) => stream_chunk(state, &device, &file, size, (dtype, &dims))?,
        None => None,
    };
    let buffer = match streamed {
        Some(buffer) => buffer,
        None => meta
            .read_region(&dir, &region)
            .and_then(|host| host.to_device(&state.client, &device))
            .map_err(|e| e.to_string())?,
    };
    state.store.put(
        l.owner,
        l.value as usize,
        l.position as usize,
        Arc::new(buffer),
    )
}

/// A box that is one raw chunk file (a shard read back onto the layout
/// that wrote it), put onto the device piece by piece as it is read, each
/// piece still in the cache when it is copied; None when the file is
/// missing or not of the chunk's size (the general path says why).
fn stream_chunk(
    state: &State,
    device: &pw_pjrt::Device,
    file: &Path,
    size: u64,
    (dtype, dims): (pw_core::DType, &[usize]),
) -> Result<Option<pw_pjrt::Buffer>, String> {
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", file.display());
    let mut f = match std::fs::File::open(file) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(cannot(e)),
    };
    if f.metadata().map_err(cannot)?.len() != size {
        return Ok(None);
    }
    let size = usize::try_from(size).map_err(|_| format!("a chunk of {size} bytes"))?;
    let (mut transfer, buffer) = state
        .client
        .buffer_for_async_transfer(device, dtype, dims)
        .map_err(|e| e.to_string())?;
    while transfer.written() < size {
        let len = (size - transfer.written()).min(crate::bulk::PUT_CHUNK);
        let mut piece = Vec::with_capacity(len);
        // A failure drops the transfer unfinished, which fails the buffer.
        let got = Read::by_ref(&mut f)
            .take(len as u64)
            .read_to_end(&mut piece)
            .map_err(cannot)?;
        if got != len {
            return Err(format!("{} ended early", file.display()));
        }
        let last = transfer.written() + len == size;
        transfer.write(piece, last).map_err(|e| e.to_string())?;
    }
    Ok(Some(buffer))
}

fn answer(state: &State, id: u64, error: String) {
    state.report(proto::worker_event::Event::Stored(proto::Stored {
        id,
        error,
    }));
}
