//! Checks on parsed arguments that several tools share. serde does not
//! enforce a schema's bounds, so a tool checks them and says what is
//! allowed, for the model to correct its call.

use std::fmt::Display;
use wire::ToolFailure;

/// An optional count (`limit`, `length`): `default` when omitted, else it
/// must lie in `1..=max`.
pub fn count<T>(name: &str, value: Option<T>, default: T, max: T) -> Result<T, ToolFailure>
where
    T: Copy + PartialOrd + From<u8> + Display,
{
    let value = value.unwrap_or(default);
    if value < T::from(1) || value > max {
        return Err(ToolFailure::invalid_arguments(format!("{name} must be between 1 and {max}.")));
    }
    Ok(value)
}

/// An optional free-text argument (a `query`, a `description`): what the
/// model wrote, trimmed, `""` when omitted; longer than `max` characters
/// fails with `advice`, a sentence on what to send instead.
pub fn text<'a>(
    name: &str,
    value: Option<&'a str>,
    max: usize,
    advice: &str,
) -> Result<&'a str, ToolFailure> {
    let value = value.unwrap_or("").trim();
    if value.chars().count() > max {
        return Err(ToolFailure::invalid_arguments(format!(
            "{name} is longer than {max} characters. {advice}"
        )));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_defaults_and_stays_within_its_bounds() {
        assert_eq!(count("limit", None, 20u32, 50).unwrap(), 20);
        assert_eq!(count("limit", Some(1u32), 20, 50).unwrap(), 1);
        assert_eq!(count("limit", Some(50u32), 20, 50).unwrap(), 50);
        for wrong in [0u32, 51] {
            let failure = count("limit", Some(wrong), 20, 50).unwrap_err();
            assert_eq!(failure.kind, wire::FailureKind::InvalidArguments);
            assert_eq!(failure.message, "limit must be between 1 and 50.");
        }
        assert_eq!(
            count("length", Some(0usize), 4, 8).unwrap_err().message,
            "length must be between 1 and 8."
        );
    }

    #[test]
    fn a_text_is_trimmed_and_bounded_in_characters() {
        assert_eq!(text("query", None, 5, "Shorten it.").unwrap(), "");
        assert_eq!(text("query", Some("  éèêëà \n"), 5, "Shorten it.").unwrap(), "éèêëà");
        let failure = text("query", Some("abcdef"), 5, "Search for a name.").unwrap_err();
        assert_eq!(failure.kind, wire::FailureKind::InvalidArguments);
        assert_eq!(failure.message, "query is longer than 5 characters. Search for a name.");
    }
}
