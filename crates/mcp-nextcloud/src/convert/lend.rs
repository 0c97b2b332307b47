//! One-shot loans: a document's bytes offered to the document server at
//! `GET /lend/{token}` on a listener of its own, once, for a short while.
//!
//! A token is 256 bits from the operating system's generator, base64url. The
//! map is keyed by the token's SHA-256, so the token itself is kept nowhere
//! but in the [`Loan`] its conversion holds, and a lookup's timing says
//! nothing about stored tokens. The first GET removes the loan whatever
//! happens next (a second GET is 404); an expired loan is 404 too and is
//! swept out whenever a new one is made; dropping the [`Loan`] (the
//! conversion ended, failed or was cancelled) removes it as well. The map is
//! bounded in count and in bytes, and a loan past either bound is refused
//! ([`LendError::Full`]) rather than queued: a burst of conversions must not
//! grow memory without limit.
//!
//! The listener is separate from the MCP one because its audience is the
//! document server alone: it binds a Compose-internal address, and it serves
//! nothing but loans. It logs no paths, since a path holds a token. HEAD is
//! refused rather than answered, as axum would answer it with the GET handler
//! and so spend the loan on a request that reads no bytes.

use axum::Router;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http::{Method, StatusCode, header};
use rand::RngCore as _;
use sha2::{Digest as _, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Random bytes in a token: 256 bits.
pub(super) const TOKEN_LENGTH_BYTES: usize = 32;

/// The outstanding loans.
pub(super) struct Loans {
    book: Mutex<Book>,
    lifetime: Duration,
    count_max: usize,
    length_max: usize,
}

#[derive(Default)]
struct Book {
    /// SHA-256 of the token → the loan.
    by_token_hash: HashMap<[u8; 32], Lent>,
    /// The bytes of every loan in `by_token_hash`, together.
    length: usize,
}

struct Lent {
    bytes: Bytes,
    expires_at: Instant,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LendError {
    /// As many loans or bytes are out as the bounds allow.
    Full,
}

/// A loan held by its conversion; dropping it ends the loan if nobody has
/// fetched it yet. Deliberately not `Debug`: it holds the token.
pub(super) struct Loan {
    loans: Arc<Loans>,
    token: String,
    token_hash: [u8; 32],
}

impl Loan {
    /// The token, for the loan's URL only: never log it.
    pub(super) fn token(&self) -> &str {
        &self.token
    }
}

impl Drop for Loan {
    fn drop(&mut self) {
        self.loans.book().remove(&self.token_hash);
    }
}

impl Loans {
    pub(super) fn new(lifetime: Duration, count_max: usize, length_max: usize) -> Loans {
        Loans { book: Mutex::new(Book::default()), lifetime, count_max, length_max }
    }

    /// Lends `bytes` until `now + lifetime`, or refuses when the bounds are
    /// reached (after sweeping out expired loans).
    pub(super) fn lend(self: &Arc<Self>, bytes: Bytes, now: Instant) -> Result<Loan, LendError> {
        let mut token_bytes = [0u8; TOKEN_LENGTH_BYTES];
        rand::rngs::OsRng.fill_bytes(&mut token_bytes);
        let token = URL_SAFE_NO_PAD.encode(token_bytes);
        let token_hash = hash(&token);
        let mut book = self.book();
        book.sweep(now);
        if book.by_token_hash.len() >= self.count_max {
            return Err(LendError::Full);
        }
        if book.length + bytes.len() > self.length_max {
            return Err(LendError::Full);
        }
        book.length += bytes.len();
        let previous =
            book.by_token_hash.insert(token_hash, Lent { bytes, expires_at: now + self.lifetime });
        assert!(previous.is_none(), "256 random bits do not collide");
        assert!(book.by_token_hash.len() <= self.count_max);
        assert!(book.length <= self.length_max);
        drop(book);
        Ok(Loan { loans: self.clone(), token, token_hash })
    }

    /// Spends the loan: its bytes when it exists and has not expired. Either
    /// way it is gone afterwards.
    pub(super) fn take(&self, token: &str, now: Instant) -> Option<Bytes> {
        let lent = self.book().remove(&hash(token))?;
        (now < lent.expires_at).then_some(lent.bytes)
    }

    /// How many loans are out (expired ones not yet swept included).
    #[cfg(test)]
    pub(super) fn outstanding(&self) -> usize {
        self.book().by_token_hash.len()
    }

    /// The bytes lent out, all loans together.
    #[cfg(test)]
    pub(super) fn outstanding_length(&self) -> usize {
        self.book().length
    }

    fn book(&self) -> MutexGuard<'_, Book> {
        // A panic elsewhere cannot leave the book half-written: each method
        // updates the map and the length together before unlocking.
        self.book.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Book {
    fn remove(&mut self, token_hash: &[u8; 32]) -> Option<Lent> {
        let lent = self.by_token_hash.remove(token_hash)?;
        self.length -= lent.bytes.len();
        Some(lent)
    }

    fn sweep(&mut self, now: Instant) {
        let mut freed = 0;
        self.by_token_hash.retain(|_, lent| {
            let alive = now < lent.expires_at;
            if !alive {
                freed += lent.bytes.len();
            }
            alive
        });
        self.length -= freed;
    }
}

fn hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// The lend listener's routes.
pub(super) fn router(loans: Arc<Loans>) -> Router {
    Router::new().route("/lend/{token}", get(serve_loan)).with_state(loans)
}

/// Serves the listener until `stop` is cancelled, its connections bounded
/// like every listener's (crates/http-serve): the document server is
/// trusted no more than any other client on the network.
pub(super) fn serve(
    listener: TcpListener,
    loans: Arc<Loans>,
    stop: CancellationToken,
    limits: http_serve::Limits,
) -> JoinHandle<()> {
    tokio::spawn(http_serve::serve(
        "converter lending",
        listener,
        router(loans),
        limits,
        async move { stop.cancelled().await },
    ))
}

async fn serve_loan(
    State(loans): State<Arc<Loans>>,
    method: Method,
    Path(token): Path<String>,
) -> Response {
    if method != Method::GET {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    match loans.take(&token, Instant::now()) {
        Some(bytes) => (
            [
                (header::CONTENT_TYPE, "application/octet-stream"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            bytes,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "Not found\n").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIFETIME: Duration = Duration::from_secs(60);

    fn loans(count_max: usize, length_max: usize) -> Arc<Loans> {
        Arc::new(Loans::new(LIFETIME, count_max, length_max))
    }

    #[test]
    fn a_token_is_256_random_bits_in_base64url() {
        let loans = loans(4, 1024);
        let now = Instant::now();
        let first = loans.lend(Bytes::from_static(b"a"), now).unwrap();
        let second = loans.lend(Bytes::from_static(b"b"), now).unwrap();
        assert_eq!(TOKEN_LENGTH_BYTES * 8, 256);
        assert_eq!(URL_SAFE_NO_PAD.decode(first.token()).unwrap().len(), TOKEN_LENGTH_BYTES);
        assert!(
            first
                .token()
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
        );
        assert_ne!(first.token(), second.token());
    }

    #[test]
    fn a_loan_is_taken_once() {
        let loans = loans(4, 1024);
        let now = Instant::now();
        let loan = loans.lend(Bytes::from_static(b"document"), now).unwrap();
        assert_eq!(loans.take(loan.token(), now), Some(Bytes::from_static(b"document")));
        assert_eq!(loans.take(loan.token(), now), None);
        assert_eq!(loans.outstanding(), 0);
        assert_eq!(loans.outstanding_length(), 0);
        drop(loan);
        assert_eq!(loans.outstanding_length(), 0, "dropping a spent loan frees nothing twice");
    }

    #[test]
    fn a_loan_expires_after_its_lifetime() {
        let loans = loans(4, 1024);
        let now = Instant::now();
        let loan = loans.lend(Bytes::from_static(b"document"), now).unwrap();
        let just_before = now + LIFETIME - Duration::from_millis(1);
        let at_expiry = now + LIFETIME;
        let other = loans.lend(Bytes::from_static(b"other"), now).unwrap();
        assert!(loans.take(other.token(), just_before).is_some());
        assert_eq!(loans.take(loan.token(), at_expiry), None);
        assert_eq!(loans.outstanding(), 0, "an expired loan is removed when asked for");
    }

    #[test]
    fn expired_loans_are_swept_when_lending() {
        let loans = loans(1, 1024);
        let now = Instant::now();
        let _old = loans.lend(Bytes::from_static(b"old"), now).unwrap();
        assert_eq!(loans.lend(Bytes::from_static(b"new"), now).err(), Some(LendError::Full));
        let later = now + LIFETIME;
        let new = loans.lend(Bytes::from_static(b"new"), later).unwrap();
        assert_eq!(loans.outstanding(), 1);
        assert_eq!(loans.outstanding_length(), 3);
        assert_eq!(loans.take(new.token(), later), Some(Bytes::from_static(b"new")));
    }

    #[test]
    fn dropping_a_loan_ends_it() {
        let loans = loans(4, 1024);
        let now = Instant::now();
        let loan = loans.lend(Bytes::from_static(b"document"), now).unwrap();
        let token = loan.token().to_string();
        drop(loan);
        assert_eq!(loans.outstanding(), 0);
        assert_eq!(loans.outstanding_length(), 0);
        assert_eq!(loans.take(&token, now), None);
    }

    #[test]
    fn the_book_is_bounded_in_count_and_bytes() {
        let now = Instant::now();
        let by_count = loans(2, 1024);
        let _first = by_count.lend(Bytes::from_static(b"1"), now).unwrap();
        let second = by_count.lend(Bytes::from_static(b"2"), now).unwrap();
        assert_eq!(by_count.lend(Bytes::from_static(b"3"), now).err(), Some(LendError::Full));
        drop(second);
        assert!(by_count.lend(Bytes::from_static(b"3"), now).is_ok(), "room again");

        let by_length = loans(10, 10);
        let _six = by_length.lend(Bytes::from(vec![0; 6]), now).unwrap();
        assert_eq!(by_length.lend(Bytes::from(vec![0; 5]), now).err(), Some(LendError::Full));
        let _four = by_length.lend(Bytes::from(vec![0; 4]), now).unwrap();
        assert_eq!(by_length.outstanding_length(), 10);
    }

    #[test]
    fn an_unknown_token_is_nothing() {
        let loans = loans(4, 1024);
        let _loan = loans.lend(Bytes::from_static(b"document"), Instant::now()).unwrap();
        assert_eq!(loans.take("not-a-token", Instant::now()), None);
        assert_eq!(loans.outstanding(), 1, "a wrong guess spends nothing");
    }
}
