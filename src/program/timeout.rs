//! The reply timeout of every exec session: `BLOOMLAB_EXEC_TIMEOUT`, read and checked like a
//! flag.

use std::time::Duration;

use super::{DEFAULT_EXEC_TIMEOUT, EXEC_TIMEOUT_VAR};
use crate::error::{Error, Result};

/// The longest timeout [`EXEC_TIMEOUT_VAR`] may ask for: a day.
pub const MAX_EXEC_TIMEOUT: f64 = 86_400.0;

/// The timeout from [`EXEC_TIMEOUT_VAR`], [`DEFAULT_EXEC_TIMEOUT`] when unset; refused like a
/// flag (exit 2, with its range) outside (0, [`MAX_EXEC_TIMEOUT`]] seconds.
pub fn exec_timeout() -> Result<Duration> {
    let Ok(text) = std::env::var(EXEC_TIMEOUT_VAR) else {
        return Ok(Duration::from_secs_f64(DEFAULT_EXEC_TIMEOUT));
    };
    let refuse = |reason: &str| Error::InvalidEnv {
        name: EXEC_TIMEOUT_VAR,
        value: text.clone(),
        reason: reason.into(),
        allowed: format!("seconds in (0, {MAX_EXEC_TIMEOUT}], such as 0.5"),
    };
    match text.trim().parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds <= MAX_EXEC_TIMEOUT => {
            Ok(Duration::from_secs_f64(seconds))
        }
        Ok(_) => Err(refuse("out of range")),
        Err(_) => Err(refuse("not a number of seconds")),
    }
}
