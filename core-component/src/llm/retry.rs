//! Retries of transient LLM failures with exponential backoff and jitter (section 6.6 of the
//! unified LLM spec). Waiting goes through the host (`session-host.sleep`), so an
//! interruption cuts a backoff short.

use super::error::{ErrorKind, LlmError};

/// How often and how patiently to retry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    pub base_delay_ms: u64,
    pub max_delay_ms: u64,
    pub backoff_multiplier: f64,
    pub jitter: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self::from_settings(&agent_protocol::config::RetrySettings::default())
    }
}

impl RetryPolicy {
    /// The configured attempts and delays, doubling with jitter.
    pub fn from_settings(settings: &agent_protocol::config::RetrySettings) -> Self {
        Self {
            max_retries: settings.max_retries,
            base_delay_ms: settings.base_delay_ms,
            max_delay_ms: settings.max_delay_ms,
            backoff_multiplier: 2.0,
            jitter: true,
        }
    }

    /// The wait before retry number `attempt` (0-based), or `None` when the error must not
    /// be retried: not a transient class, no retries left, or a provider asking for a wait
    /// longer than `max_delay_ms` (better to report than to hang for minutes).
    /// `unit_random` is uniform in [0, 1).
    pub fn delay_ms(&self, error: &LlmError, attempt: u32, unit_random: f64) -> Option<u64> {
        if !error.kind.retryable() || attempt >= self.max_retries {
            return None;
        }
        if let Some(hint) = error.retry_after_ms {
            return (hint <= self.max_delay_ms).then_some(hint);
        }
        let exponent = i32::try_from(attempt).unwrap_or(i32::MAX);
        let base = (self.base_delay_ms as f64 * self.backoff_multiplier.powi(exponent))
            .min(self.max_delay_ms as f64);
        let factor = if self.jitter {
            0.5 + unit_random.clamp(0.0, 1.0)
        } else {
            1.0
        };
        // The cap holds after the jitter too: it is what a configuration promises.
        Some(((base * factor).round() as u64).min(self.max_delay_ms))
    }
}

/// What a retry loop needs from its surroundings.
pub trait RetryHost {
    /// Waits; returns true if an interruption cut the wait short.
    fn pause(&mut self, ms: u64) -> bool;
    /// Uniform in [0, 1).
    fn unit_random(&mut self) -> f64;
    /// Told before each retry (to emit a warning).
    fn retrying(&mut self, error: &LlmError, attempt: u32, delay_ms: u64);
}

/// Runs `attempt` until it succeeds, fails for good, or the policy gives up. `attempt`
/// returns, with its error, whether any of the response had already been delivered: such a
/// failure is never retried, so nothing is shown twice.
pub fn run<T>(
    policy: &RetryPolicy,
    host: &mut dyn RetryHost,
    mut attempt: impl FnMut() -> Result<T, (LlmError, bool)>,
) -> Result<T, LlmError> {
    let mut retries = 0;
    loop {
        let (error, delivered) = match attempt() {
            Ok(value) => return Ok(value),
            Err(failure) => failure,
        };
        let random = host.unit_random();
        let delay = match policy.delay_ms(&error, retries, random) {
            Some(delay) if !delivered => delay,
            _ => return Err(error),
        };
        host.retrying(&error, retries + 1, delay);
        if host.pause(delay) {
            return Err(LlmError::new(
                ErrorKind::Cancelled,
                "interrupted while waiting to retry",
            ));
        }
        retries += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(kind: ErrorKind, retry_after_ms: Option<u64>) -> LlmError {
        LlmError {
            retry_after_ms,
            ..LlmError::new(kind, "x")
        }
    }

    #[test]
    fn delays_grow_exponentially_within_the_jitter_band() {
        let policy = RetryPolicy::default();
        let e = error(ErrorKind::Server, None);
        assert_eq!(policy.delay_ms(&e, 0, 0.5), Some(1_000));
        assert_eq!(policy.delay_ms(&e, 1, 0.5), Some(2_000));
        assert_eq!(policy.delay_ms(&e, 0, 0.0), Some(500));
        assert_eq!(policy.delay_ms(&e, 1, 0.999_999), Some(3_000));
        assert_eq!(policy.delay_ms(&e, 2, 0.5), None, "only two retries");
    }

    #[test]
    fn the_configured_cap_holds_after_the_jitter_too() {
        let policy = RetryPolicy::from_settings(&agent_protocol::config::RetrySettings {
            max_retries: 5,
            base_delay_ms: 100,
            max_delay_ms: 300,
        });
        let e = error(ErrorKind::Server, None);
        assert_eq!(policy.delay_ms(&e, 0, 0.999), Some(150));
        // 400 ms doubled, then capped at 300 before and after the jitter's +50 %.
        assert_eq!(policy.delay_ms(&e, 2, 0.999), Some(300));
        assert_eq!(policy.delay_ms(&e, 4, 0.999), Some(300));
        assert_eq!(policy.delay_ms(&e, 5, 0.0), None, "five retries");
    }

    #[test]
    fn retry_after_is_honoured_unless_it_exceeds_the_maximum() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.delay_ms(&error(ErrorKind::RateLimit, Some(1_500)), 0, 0.9),
            Some(1_500)
        );
        assert_eq!(
            policy.delay_ms(&error(ErrorKind::RateLimit, Some(120_000)), 0, 0.5),
            None
        );
    }

    #[test]
    fn permanent_errors_are_not_retried() {
        let policy = RetryPolicy::default();
        for kind in [
            ErrorKind::Authentication,
            ErrorKind::InvalidRequest,
            ErrorKind::ContextLength,
        ] {
            assert_eq!(policy.delay_ms(&error(kind, None), 0, 0.5), None);
        }
    }

    struct Recorder {
        pauses: Vec<u64>,
        interrupt: bool,
    }

    impl RetryHost for Recorder {
        fn pause(&mut self, ms: u64) -> bool {
            self.pauses.push(ms);
            self.interrupt
        }
        fn unit_random(&mut self) -> f64 {
            0.5
        }
        fn retrying(&mut self, _: &LlmError, _: u32, _: u64) {}
    }

    #[test]
    fn run_retries_transient_failures_then_succeeds() {
        let mut host = Recorder {
            pauses: vec![],
            interrupt: false,
        };
        let mut calls = 0;
        let result = run(&RetryPolicy::default(), &mut host, || {
            calls += 1;
            if calls < 3 {
                Err((error(ErrorKind::Overloaded, None), false))
            } else {
                Ok(calls)
            }
        });
        assert_eq!(result, Ok(3));
        assert_eq!(host.pauses, vec![1_000, 2_000]);
    }

    #[test]
    fn a_failure_after_delivery_or_an_interrupted_wait_is_final() {
        let mut host = Recorder {
            pauses: vec![],
            interrupt: false,
        };
        let delivered: Result<(), _> = run(&RetryPolicy::default(), &mut host, || {
            Err((error(ErrorKind::Network, None), true))
        });
        assert_eq!(delivered.map_err(|e| e.kind), Err(ErrorKind::Network));
        assert!(host.pauses.is_empty());

        host.interrupt = true;
        let interrupted: Result<(), _> = run(&RetryPolicy::default(), &mut host, || {
            Err((error(ErrorKind::Network, None), false))
        });
        assert_eq!(interrupted.map_err(|e| e.kind), Err(ErrorKind::Cancelled));
    }
}
