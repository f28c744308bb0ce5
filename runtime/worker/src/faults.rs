//! Fault injection for tests, selected by `PW_WORKER_FAULTS` (a
//! comma-separated list):
//!
//! | fault | effect |
//! | --- | --- |
//! | `exit-at-step=N` | the process exits abruptly when it reaches plan step N |
//! | `delay-step=N:MS` | sleeps MS milliseconds before enqueuing plan step N |
//!
//! `N` may be `first`: the first step of every part the worker runs, or
//! `@K`: the step at position K of every part it runs. `delay-step=N:MS`
//! with `exit-at-step=N` kills the worker once what it could do before
//! step N is done (a worker dying mid-run; the recovery tests).
//! | `corrupt-pieces` | flips one byte of every piece it sends |
//! | `truncate-pieces` | sends only the first half of every piece it sends, then closes the stream |
//! | `exit-on-put` | refuses the first input shard the controller puts on it, then exits abruptly 200 ms later (a worker dying while a run's inputs are uploaded, its put failing before its loss is noticed) |
//!
//! Unknown or malformed entries are an error at start-up.

use std::time::Duration;

/// A step a fault applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtStep {
    /// The plan step with this index.
    Index(usize),
    /// The first step of every part.
    First,
    /// The step at this position of every part.
    Position(usize),
}

impl AtStep {
    fn parse(text: &str) -> Option<AtStep> {
        match text {
            "first" => Some(AtStep::First),
            n => match n.strip_prefix('@') {
                Some(k) => k.parse().ok().map(AtStep::Position),
                None => n.parse().ok().map(AtStep::Index),
            },
        }
    }

    fn matches(self, index: usize, position: usize) -> bool {
        match self {
            AtStep::Index(n) => n == index,
            AtStep::First => position == 0,
            AtStep::Position(k) => position == k,
        }
    }
}

/// The faults a worker injects (see the module doc).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    pub exit_at_step: Option<AtStep>,
    pub delay_step: Option<(AtStep, Duration)>,
    pub corrupt_pieces: bool,
    pub truncate_pieces: bool,
    pub exit_on_put: bool,
}

/// The environment variable read by [`Faults::from_env`].
pub const FAULTS_ENV: &str = "PW_WORKER_FAULTS";

impl Faults {
    /// Parses `PW_WORKER_FAULTS` (none when unset or empty).
    pub fn from_env() -> Result<Faults, String> {
        match std::env::var(FAULTS_ENV) {
            Ok(text) => Faults::parse(&text),
            Err(_) => Ok(Faults::default()),
        }
    }

    pub fn parse(text: &str) -> Result<Faults, String> {
        let mut faults = Faults::default();
        let bad =
            |entry: &str| format!("{FAULTS_ENV}: cannot read {entry:?} (see pw-worker --help)");
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (name, value) = entry.split_once('=').unwrap_or((entry, ""));
            match name {
                "exit-at-step" => {
                    faults.exit_at_step = Some(AtStep::parse(value).ok_or_else(|| bad(entry))?)
                }
                "delay-step" => {
                    let (step, ms) = value.split_once(':').ok_or_else(|| bad(entry))?;
                    faults.delay_step = Some((
                        AtStep::parse(step).ok_or_else(|| bad(entry))?,
                        Duration::from_millis(ms.parse().map_err(|_| bad(entry))?),
                    ));
                }
                "corrupt-pieces" if value.is_empty() => faults.corrupt_pieces = true,
                "truncate-pieces" if value.is_empty() => faults.truncate_pieces = true,
                "exit-on-put" if value.is_empty() => faults.exit_on_put = true,
                _ => return Err(bad(entry)),
            }
        }
        Ok(faults)
    }

    /// Applies `exit-on-put` as a put arrives: true if the put is to
    /// fail (the process exits soon after).
    pub fn on_put(&self) -> bool {
        if self.exit_on_put {
            tracing::error!("{FAULTS_ENV}: refusing a put, exiting in 200 ms");
            std::thread::spawn(|| {
                std::thread::sleep(Duration::from_millis(200));
                std::process::exit(86);
            });
        }
        self.exit_on_put
    }

    pub fn any_step_fault(&self) -> bool {
        self.exit_at_step.is_some() || self.delay_step.is_some()
    }

    /// Applies the step faults before plan step `index`, at `position` in
    /// its part.
    pub fn before_step(&self, index: usize, position: usize) {
        if let Some((step, delay)) = self.delay_step {
            if step.matches(index, position) {
                std::thread::sleep(delay);
            }
        }
        if self
            .exit_at_step
            .is_some_and(|s| s.matches(index, position))
        {
            tracing::error!("{FAULTS_ENV}: exiting at step {index}");
            std::process::exit(86);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_fault_and_refuses_typos() {
        let f = Faults::parse("exit-at-step=3, delay-step=first:150,corrupt-pieces").unwrap();
        assert_eq!(f.exit_at_step, Some(AtStep::Index(3)));
        assert_eq!(
            f.delay_step,
            Some((AtStep::First, Duration::from_millis(150)))
        );
        assert!(f.corrupt_pieces && !f.truncate_pieces && !f.exit_on_put);
        assert!(Faults::parse("exit-on-put").unwrap().exit_on_put);
        assert_eq!(Faults::parse("").unwrap(), Faults::default());
        assert!(Faults::parse("exit-at-stp=3").is_err());
        assert!(Faults::parse("delay-step=3").is_err());
        let f = Faults::parse("delay-step=@4:10,exit-at-step=@4").unwrap();
        assert_eq!(f.exit_at_step, Some(AtStep::Position(4)));
        assert!(f.exit_at_step.unwrap().matches(17, 4) && !f.exit_at_step.unwrap().matches(4, 3));
    }
}
