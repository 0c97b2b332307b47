//! Reading parts out of the zip packages DOCX and ODF documents are, with
//! every length bounded by us rather than by what the archive claims.

use std::io::{Cursor, Read};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::{ExtractError, Limits};

/// An opened package: its central directory has been read and counted.
pub(crate) struct Package<'a> {
    archive: zip::ZipArchive<Cursor<&'a [u8]>>,
    entry_length_max: usize,
}

impl<'a> Package<'a> {
    pub(crate) fn open(bytes: &'a [u8], limits: &Limits) -> Result<Package<'a>, ExtractError> {
        // The zip crate is well fuzzed, but a panic on hostile input would
        // take the caller's thread with it; it becomes "malformed" here.
        let archive = catch_unwind(|| zip::ZipArchive::new(Cursor::new(bytes)))
            .map_err(|_| malformed_archive())?
            .map_err(|error| ExtractError::Malformed(format!("not a zip package: {error}")))?;
        if archive.len() > limits.zip_entry_count_max {
            return Err(ExtractError::TooLarge);
        }
        Ok(Package { archive, entry_length_max: limits.zip_entry_length_max })
    }

    /// A part as UTF-8 text, `None` when the package has no such part.
    pub(crate) fn read(&mut self, name: &str) -> Result<Option<String>, ExtractError> {
        let entry_length_max = self.entry_length_max;
        let archive = &mut self.archive;
        let read = catch_unwind(AssertUnwindSafe(|| -> Result<Option<Vec<u8>>, ExtractError> {
            let entry = match archive.by_name(name) {
                Ok(entry) => entry,
                Err(zip::result::ZipError::FileNotFound) => return Ok(None),
                Err(error) => {
                    return Err(ExtractError::Malformed(format!("cannot read {name}: {error}")));
                }
            };
            // One byte past the limit tells "exactly at the limit" from
            // "over it" without trusting the declared size.
            let mut bytes = Vec::new();
            let take_length = u64::try_from(entry_length_max).unwrap_or(u64::MAX).saturating_add(1);
            entry
                .take(take_length)
                .read_to_end(&mut bytes)
                .map_err(|error| ExtractError::Malformed(format!("cannot read {name}: {error}")))?;
            if bytes.len() > entry_length_max {
                return Err(ExtractError::TooLarge);
            }
            Ok(Some(bytes))
        }))
        .map_err(|_| malformed_archive())??;
        let Some(bytes) = read else {
            return Ok(None);
        };
        let text = String::from_utf8(bytes)
            .map_err(|_| ExtractError::Malformed(format!("{name} is not UTF-8")))?;
        Ok(Some(text))
    }

    /// A part that must be there.
    pub(crate) fn read_required(&mut self, name: &str) -> Result<String, ExtractError> {
        self.read(name)?
            .ok_or_else(|| ExtractError::Malformed(format!("the package has no {name}")))
    }
}

fn malformed_archive() -> ExtractError {
    ExtractError::Malformed("the zip package could not be read".into())
}
