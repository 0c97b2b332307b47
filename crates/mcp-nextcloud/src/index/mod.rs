//! The `files_grep` passage index lives here: the card catalogue of passages
//! (extracted text cut by structure, each with its heading and byte offset)
//! that proposes candidate files, while Nextcloud, asked as the user, decides
//! which of them the user may see. It holds no user column and no credential.
//!
//! So far it has the chunker; the store, the filling passes and the search
//! come with the rest of the issue.

pub mod chunk;
