//! A worker's receiver and object store after a run is released: what
//! arrives late for it (a piece, a destination, an output) is refused or
//! dropped at once, never held until a timeout.

use bytes::Bytes;
use pw_runtime::{dataplane::Receiver, exec::PieceKey, wire, worker::store::ObjectStore, DType};
use std::sync::Arc;

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
        // A destination made for it fails at once.
        let (transfer, buffer) = destination(&client, &device);
        let err = receiver.expect(key, 1, transfer).unwrap_err();
        assert!(err.contains("run 7 is over"), "{err}");
        let failed = buffer.wait_ready().unwrap_err().to_string();
        assert!(failed.contains("run 7 is over"), "{failed}");
        drop(buffer);
        // Once forgotten, the run's key works again (a new run with that id).
        receiver.forget(7);
        let (transfer, buffer) = destination(&client, &device);
        receiver.expect(key, 1, transfer).unwrap();
        for chunk in wire::chunks(data.clone()) {
            receiver.deliver(1, key, chunk).unwrap();
        }
        buffer.wait_ready().unwrap();
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

/// A destination buffer of 4 float32s and its transfer.
fn destination(
    client: &pw_runtime::pjrt::Client,
    device: &pw_runtime::pjrt::Device,
) -> (pw_runtime::pjrt::AsyncTransfer, pw_runtime::pjrt::Buffer) {
    client
        .buffer_for_async_transfer(device, DType::F32, &[4])
        .unwrap()
}

/// A peer the controller says is lost: what is expected of it fails, so
/// does what is expected of it later, and what it still sends is refused.
/// A piece its sender says will not come fails its buffer, whether it is
/// expected before or after.
fn lost_peers_and_failed_pieces(target: Target) {
    let client = target.client(1);
    let device = client.addressable_devices().remove(0);
    let key = |step| PieceKey {
        run: 9,
        step,
        piece: 0,
    };
    let failure = |b: &pw_runtime::pjrt::Buffer| b.wait_ready().unwrap_err().to_string();
    let receiver = Receiver::new(1 << 20);
    let (transfer, early) = destination(&client, &device);
    receiver.expect(key(0), 2, transfer).unwrap();
    receiver.peer_lost(2, "killed");
    let why = failure(&early);
    assert!(
        why.contains("worker 2 was lost") && why.contains("killed"),
        "{why}"
    );
    let (transfer, late) = destination(&client, &device);
    receiver.expect(key(1), 2, transfer).unwrap();
    assert!(failure(&late).contains("worker 2 was lost"));
    let chunk = wire::chunks(Bytes::from(vec![1u8; 16])).remove(0);
    let refused = receiver.deliver(2, key(2), chunk).unwrap_err();
    assert!(refused.0.contains("nothing more is taken"), "{refused:?}");
    // Worker 1 says two pieces will not come: one not expected yet, one
    // expected already.
    receiver.piece_failed(1, key(3), "its source failed");
    let (transfer, before) = destination(&client, &device);
    receiver.expect(key(3), 1, transfer).unwrap();
    let why = failure(&before);
    assert!(
        why.contains("will not come from worker 1: its source failed"),
        "{why}"
    );
    let (transfer, after) = destination(&client, &device);
    receiver.expect(key(4), 1, transfer).unwrap();
    receiver.piece_failed(1, key(4), "its source failed");
    assert!(failure(&after).contains("will not come"));
    drop((early, late, before, after));
    assert_no_leaks(&client);
}

on_both_plugins!(
    late_arrivals_of_a_released_run,
    lost_peers_and_failed_pieces
);
