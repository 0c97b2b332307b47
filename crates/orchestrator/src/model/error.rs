//! The detail of a [`ModelError`](super::ModelError) as this client writes
//! it: what the provider answered, truncated (the API key is cut out of
//! every detail in `client.rs`, in case a provider echoes it).

/// Characters of provider text kept in a detail.
pub(super) const DETAIL_CHARS_MAX: usize = 500;

/// `text` cut to [`DETAIL_CHARS_MAX`] characters, on a character boundary.
pub(super) fn truncate(text: &str) -> String {
    match text.char_indices().nth(DETAIL_CHARS_MAX) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}
