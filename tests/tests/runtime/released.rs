//! A worker's receiver and object store after a run is released: what
//! arrives late for it (a piece, a destination, an output) is refused or
//! dropped at once, never held until a timeout.

use bytes::Bytes;
use pw_core::DType;
use pw_dataplane::{Destination, Receiver};
use pw_exec::{Completion, PieceKey};
use pw_wire as wire;
use pw_worker::store::ObjectStore;
use std::{sync::Arc, time::Duration};

use crate::common::{assert_no_leaks, Target};

fn late_arrivals_of_a_released_run(target: Target) {
    let client = target.client(1);
    let device = client.addressable_devices().remove(0);
    let key = PieceKey {
        run: 7,
        step: 0,
        piece: 0,
    };
    let data = Bytes::from(vec![1u8; 16]);
    {
        let receiver = Receiver::new(1 << 20);
        receiver.end_run(7, "released");
        // A chunk of it is dropped without ending the sender's stream.
        for chunk in wire::chunks(data.clone()) {
            receiver
                .deliver(1, key, chunk)
                .expect("dropped, not an error");
        }
        // A destination made for it fails at once; its buffer holds zeros,
        // so nothing that reads it waits.
        let (buffer, landed, dest) = destination(&client, &device);
        let err = receiver.expect(key, 1, dest).unwrap_err();
        assert!(
            matches!(err, pw_dataplane::Error::RunOver { run: 7 }),
            "{err}"
        );
        let failed = landed.wait(Duration::from_secs(5)).unwrap_err();
        assert!(failed.contains("run 7 is over"), "{failed}");
        buffer.wait_ready().unwrap();
        assert_eq!(buffer.to_host().unwrap(), vec![0u8; 16]);
        drop(buffer);
        // Once forgotten, the run's key works again (a new run with that id).
        receiver.forget(7);
        let (buffer, landed, dest) = destination(&client, &device);
        receiver.expect(key, 1, dest).unwrap();
        for chunk in wire::chunks(data.clone()) {
            receiver.deliver(1, key, chunk).unwrap();
        }
        buffer.wait_ready().unwrap();
        landed.wait(Duration::from_secs(5)).unwrap();
        assert_eq!(buffer.to_host().unwrap(), data.to_vec());
    }
    {
        let store = ObjectStore::default();
        let buffer = client
            .buffer_from_host(&data, DType::F32, &[4], &device)
            .unwrap();
        store.end_run(7, "released");
        let err = store.put(7, 0, 0, Arc::new(buffer)).unwrap_err();
        assert_eq!(err, "run 7 is over: released");
        assert!(store.is_empty());
        assert_eq!(store.ended(7).as_deref(), Some("released"));
    }
    assert_no_leaks(&client);
}

/// A paused session's owner: dropping what it held leaves no mark that it
/// ended (a resume's shards are taken), and an array moved under a
/// temporary id takes its own id back, its old shards dropped.
fn an_owner_that_lives_on_and_a_renamed_array(target: Target) {
    let client = target.client(1);
    let device = client.addressable_devices().remove(0);
    let buffer = |v: f32| {
        let data: Vec<u8> = [v; 4].iter().flat_map(|x| x.to_le_bytes()).collect();
        Arc::new(
            client
                .buffer_from_host(&data, DType::F32, &[4], &device)
                .unwrap(),
        )
    };
    {
        let store = ObjectStore::default();
        let (old, moved) = (buffer(1.0), buffer(2.0));
        store.put(5, 10, 0, old).unwrap();
        store.put(5, 10, 1, buffer(1.0)).unwrap();
        store.put(5, 11, 0, moved.clone()).unwrap();
        store.rename(5, 11, 10);
        let now = store
            .get(5, 10, 0)
            .expect("the moved shard under its own id");
        assert!(Arc::ptr_eq(&now, &moved));
        assert!(store.get(5, 10, 1).is_none(), "an old shard was kept");
        assert!(store.get(5, 11, 0).is_none());
        drop(now);
        store.drop_owner(5);
        assert!(store.is_empty());
        assert_eq!(store.ended(5), None);
        store
            .put(5, 10, 0, buffer(3.0))
            .expect("the owner lives on");
    }
    assert_no_leaks(&client);
}

/// A destination buffer of 4 float32s, what completes when it landed, and
/// the destination to hand the receiver.
fn destination(
    client: &pw_pjrt::Client,
    device: &pw_pjrt::Device,
) -> (pw_pjrt::Buffer, Completion, Destination) {
    let (transfer, buffer) = client
        .buffer_for_async_transfer(device, DType::F32, &[4])
        .unwrap();
    let landed = Completion::new();
    (buffer, landed.clone(), Destination { transfer, landed })
}

/// A peer the controller says is lost: what is expected of it fails (its
/// buffers hold zeros, so their readers finish), so does what is expected
/// of it later, and what it still sends is refused. A piece its sender
/// says will not come fails its step, before or after it is expected. In
/// both cases the run is spoiled: this worker sends nothing more of it.
fn lost_peers_and_failed_pieces(target: Target) {
    let client = target.client(1);
    let device = client.addressable_devices().remove(0);
    let key = |step| PieceKey {
        run: 9,
        step,
        piece: 0,
    };
    let receiver = Receiver::new(1 << 20);
    let spoiled = receiver.spoiled();
    let (early, early_landed, dest) = destination(&client, &device);
    receiver.expect(key(0), 2, dest).unwrap();
    assert!(!spoiled.contains(9));
    receiver.peer_lost(2, "killed");
    let why = early_landed.wait(Duration::from_secs(5)).unwrap_err();
    assert!(
        why.contains("worker 2 was lost") && why.contains("killed"),
        "{why}"
    );
    early.wait_ready().unwrap();
    assert!(spoiled.contains(9));
    let (late, late_landed, dest) = destination(&client, &device);
    receiver.expect(key(1), 2, dest).unwrap();
    assert!(late_landed.wait(Duration::from_secs(5)).is_err());
    late.wait_ready().unwrap();
    let chunk = wire::chunks(Bytes::from(vec![1u8; 16])).remove(0);
    let refused = receiver.deliver(2, key(2), chunk).unwrap_err();
    assert!(
        refused.to_string().contains("nothing more is taken"),
        "{refused:?}"
    );
    // Worker 1 says two pieces will not come: one not expected yet, one
    // expected already.
    receiver
        .piece_failed(1, key(3), "its source failed")
        .unwrap();
    let (before, before_landed, dest) = destination(&client, &device);
    receiver.expect(key(3), 1, dest).unwrap();
    let why = before_landed.wait(Duration::from_secs(5)).unwrap_err();
    assert!(
        why.contains("will not come from worker 1: its source failed"),
        "{why}"
    );
    let (after, after_landed, dest) = destination(&client, &device);
    receiver.expect(key(4), 1, dest).unwrap();
    receiver
        .piece_failed(1, key(4), "its source failed")
        .unwrap();
    assert!(after_landed.wait(Duration::from_secs(5)).is_err());
    for b in [before, after] {
        b.wait_ready().unwrap();
    }
    receiver.forget(9);
    assert!(!spoiled.contains(9));
    drop((early, late));
    assert_no_leaks(&client);
}

/// Pieces a peer makes up, failures of pieces no step expects and small
/// early chunks, count against the receiver's early budget (each slot
/// beyond its bytes): past it the peer's stream is refused, and ending the
/// run gives the budget back.
#[test]
fn made_up_pieces_are_bounded_by_the_early_budget() {
    let receiver = Receiver::new(64 << 10);
    let key = |run, piece| PieceKey {
        run,
        step: 0,
        piece,
    };
    let refused_after = |run: u64, send: &dyn Fn(PieceKey) -> pw_dataplane::Result<()>| {
        (0..100_000u32)
            .position(|piece| send(key(run, piece)).is_err())
            .expect("the early budget refuses made-up pieces")
    };
    let fail = |k| receiver.piece_failed(1, k, "made up");
    let n = refused_after(5, &fail);
    assert!(n > 0 && n < 1_000, "{n} made-up failures were kept");
    let chunk = wire::chunks(Bytes::from(vec![1u8; 16])).remove(0);
    let deliver = |k| receiver.deliver(1, k, chunk.clone());
    let err = deliver(key(6, 0)).unwrap_err();
    assert!(
        matches!(err, pw_dataplane::Error::EarlyLimit { .. }),
        "{err}"
    );
    receiver.end_run(5, "released");
    receiver.forget(5);
    let m = refused_after(6, &deliver);
    assert!(m > 0 && m < 1_000, "{m} made-up early pieces were kept");
    receiver.end_run(6, "released");
    receiver.forget(6);
    fail(key(7, 0)).expect("the budget is back once the runs ended");
}

on_both_plugins!(
    late_arrivals_of_a_released_run,
    lost_peers_and_failed_pieces,
    an_owner_that_lives_on_and_a_renamed_array
);
