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
        let (transfer, buffer) = client
            .buffer_for_async_transfer(&device, DType::F32, &[4])
            .unwrap();
        let err = receiver.expect(key, 1, transfer).unwrap_err();
        assert!(err.contains("run 7 is over"), "{err}");
        let failed = buffer.wait_ready().unwrap_err().to_string();
        assert!(failed.contains("run 7 is over"), "{failed}");
        drop(buffer);
        // Once forgotten, the run's key works again (a new run with that id).
        receiver.forget(7);
        let (transfer, buffer) = client
            .buffer_for_async_transfer(&device, DType::F32, &[4])
            .unwrap();
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

on_both_plugins!(late_arrivals_of_a_released_run);
