//! `GET …/card.vcf?photo`: a contact's picture, as Nextcloud's
//! `ImageExportPlugin` and `PhotoCache` serve it.
//!
//! The picture is the card's `PHOTO`: binary data (vCard 3.0's
//! `ENCODING=b` with a `TYPE`) or a `data:` URI (vCard 4.0). A link to
//! elsewhere, a type outside the allowed image types, or no `PHOTO` at all
//! is a bare 404, as the plugin answers. One difference: `?size=` asks
//! Nextcloud for a scaled copy; the fake serves the original at every size
//! (docs/fake-vs-real.md).

use super::{CardDav, vcard};
use crate::dav::DavError;
use crate::dav::collection::Kind as _;
use crate::world::World;
use axum::response::{IntoResponse, Response};
use calcard::vcard::VCardValue;
use http::{StatusCode, header};

/// `PhotoCache::ALLOWED_CONTENT_TYPES`: the types served, and the file
/// extension the download is named with.
const ALLOWED: [(&str, &str); 6] = [
    ("image/png", "png"),
    ("image/jpeg", "jpg"),
    ("image/gif", "gif"),
    ("image/vnd.microsoft.icon", "ico"),
    ("image/webp", "webp"),
    ("image/avif", "avif"),
];

/// Whether a request asks for the picture: a GET with a `photo` query
/// parameter, whatever its value.
pub fn is_export(request: &crate::dav::DavRequest) -> bool {
    request.method == http::Method::GET
        && request.query.as_deref().is_some_and(|query| {
            url::form_urlencoded::parse(query.as_bytes()).any(|(key, _)| key == "photo")
        })
}

/// The picture of `card` in the caller's address book `book`.
pub fn export(world: &World, uid: &str, book: &str, card: &str) -> Result<Response, DavError> {
    let member = CardDav::homes(world)
        .get(uid, book)
        .and_then(|collection| collection.members.get(card))
        .ok_or_else(DavError::not_found)?;
    let Some((content_type, bytes)) = picture(&member.data) else {
        return Ok(StatusCode::NOT_FOUND.into_response());
    };
    let Some((_, extension)) = ALLOWED.iter().find(|(allowed, _)| *allowed == content_type) else {
        return Ok(StatusCode::NOT_FOUND.into_response());
    };
    Ok((
        StatusCode::OK,
        [
            (header::CACHE_CONTROL, "private, max-age=3600, must-revalidate".to_string()),
            (header::ETAG, member.etag.clone()),
            (header::PRAGMA, "public".to_string()),
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_DISPOSITION, format!("attachment; filename={card}.{extension}")),
        ],
        bytes,
    )
        .into_response())
}

/// `PhotoCache::getPhotoFromVObject`: the declared type and the bytes of
/// the first `PHOTO`, when it holds data rather than a link.
fn picture(card: &vcard::CardData) -> Option<(String, Vec<u8>)> {
    let entry = vcard::entries_named(&card.vcard, "PHOTO").next()?;
    let VCardValue::Binary(data) = entry.values.first()? else { return None };
    let content_type = match &data.content_type {
        // A data URI names its type.
        Some(declared) => declared.to_ascii_lowercase(),
        // Binary data names it in TYPE (or MEDIATYPE): "JPEG" or "image/jpeg".
        None => {
            let declared = vcard::parameter_values(entry, "TYPE")
                .or_else(|| vcard::parameter_values(entry, "MEDIATYPE"))?
                .into_iter()
                .next()?;
            if declared.starts_with("image/") {
                declared
            } else {
                format!("image/{}", declared.to_ascii_lowercase())
            }
        }
    };
    Some((content_type, data.data.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(photo_line: &str) -> vcard::CardData {
        let text = format!(
            "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:u1\r\nFN:Bjoern\r\n{photo_line}\r\nEND:VCARD\r\n"
        );
        vcard::parse_card_data(&text).expect("a valid card")
    }

    #[test]
    fn binary_photos_take_their_type_from_the_type_parameter() {
        // FF D8 FF E0: a JPEG's first bytes, not UTF-8.
        let (content_type, bytes) = picture(&card("PHOTO;ENCODING=b;TYPE=JPEG:/9j/4A==")).unwrap();
        assert_eq!(content_type, "image/jpeg");
        assert_eq!(bytes, vec![0xFF, 0xD8, 0xFF, 0xE0]);
    }

    #[test]
    fn data_uris_name_their_own_type() {
        let (content_type, bytes) =
            picture(&card("PHOTO;VALUE=URI:data:image/png;base64,iVBORw==")).unwrap();
        assert_eq!(content_type, "image/png");
        assert_eq!(bytes, vec![0x89, 0x50, 0x4E, 0x47]);
    }

    #[test]
    fn links_and_missing_photos_have_no_picture() {
        assert!(picture(&card("PHOTO;VALUE=URI:https://example.org/me.jpg")).is_none());
        assert!(picture(&card("NOTE:no photo here")).is_none());
    }
}
