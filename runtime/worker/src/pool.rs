//! Threads that wait: a job (waiting for a part's devices, then reporting
//! it) goes to an idle thread, or to a new one; a thread idle for
//! [`IDLE`] ends. Starting a thread per part would put its start-up on
//! the path of every small call.

use std::{
    sync::{mpsc, Arc, Mutex},
    time::Duration,
};

/// How long an idle thread waits for another job before it ends.
pub const IDLE: Duration = Duration::from_secs(30);

pub type Job = Box<dyn FnOnce() + Send>;

/// See the module doc.
#[derive(Default)]
pub struct Pool {
    /// The idle threads, by id, each with the channel it waits on.
    idle: Mutex<Vec<(u64, mpsc::Sender<Job>)>>,
    next: std::sync::atomic::AtomicU64,
}

impl Pool {
    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<(u64, mpsc::Sender<Job>)>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `job` on a thread of the pool; the job back when no thread can
    /// be started.
    pub fn run(self: &Arc<Self>, job: Job) -> Result<(), Job> {
        // Popped under the lock: a thread that is listed has not ended.
        let idle = self.idle().pop();
        let job = match idle {
            Some((_, tx)) => match tx.send(job) {
                Ok(()) => return Ok(()),
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pool = self.clone();
        let (tx, rx) = mpsc::channel::<Job>();
        let first = Arc::new(Mutex::new(Some(job)));
        let handed = first.clone();
        let started = std::thread::Builder::new()
            .name("pw-settle".into())
            .spawn(move || {
                let job = handed.lock().unwrap_or_else(|e| e.into_inner()).take();
                let Some(mut job) = job else { return };
                loop {
                    job();
                    pool.idle().push((id, tx.clone()));
                    job = match rx.recv_timeout(IDLE) {
                        Ok(next) => next,
                        Err(_) => {
                            let mut idle = pool.idle();
                            match idle.iter().position(|(i, _)| *i == id) {
                                // Still listed: nobody can send it a job now.
                                Some(at) => {
                                    idle.swap_remove(at);
                                    return;
                                }
                                // Taken off the list: a job is on its way.
                                None => {
                                    drop(idle);
                                    match rx.recv() {
                                        Ok(next) => next,
                                        Err(_) => return,
                                    }
                                }
                            }
                        }
                    };
                }
            });
        match started {
            Ok(_) => Ok(()),
            Err(_) => {
                let job = first.lock().unwrap_or_else(|e| e.into_inner()).take();
                job.map_or(Ok(()), Err)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Pool;
    use std::sync::{mpsc, Arc};

    /// Jobs run, also many at once and one after another on the same
    /// threads.
    #[test]
    fn every_job_runs() {
        let pool = Arc::new(Pool::default());
        let (tx, rx) = mpsc::channel();
        for round in 0..3 {
            for i in 0..20 {
                let tx = tx.clone();
                let job: super::Job = Box::new(move || tx.send((round, i)).unwrap());
                assert!(pool.run(job).is_ok());
            }
            let mut got: Vec<_> = (0..20).map(|_| rx.recv().unwrap()).collect();
            got.sort();
            assert_eq!(got, (0..20).map(|i| (round, i)).collect::<Vec<_>>());
        }
    }
}
