<?php

declare(strict_types=1);

namespace OCA\Tamebi\Service;

/**
 * The signed identity of docs/identity.md: who the user is, decided here
 * from the Nextcloud session and nothing the client sent, signed with the
 * secret shared with the orchestrator. Pure: the caller supplies the uid,
 * the clock and the body.
 */
final class Signer {
	/** The orchestrator refuses to start with a shorter secret. */
	public const SECRET_BYTES_MIN = 32;
	public const UID_BYTES_MAX = 64;

	public const HEADER_UID = 'X-Tamebi-Uid';
	public const HEADER_TIMESTAMP = 'X-Tamebi-Timestamp';
	public const HEADER_SIGNATURE = 'X-Tamebi-Signature';
	public const HEADER_NONCE = 'X-Tamebi-Nonce';

	private string $secret;

	public function __construct(string $secret) {
		if (strlen($secret) < self::SECRET_BYTES_MIN) {
			throw new \InvalidArgumentException('the shared secret must be at least ' . self::SECRET_BYTES_MIN . ' bytes');
		}
		$this->secret = $secret;
	}

	/**
	 * `uid \n timestamp \n nonce \n METHOD \n path \n lowercase_hex(sha256(body))`:
	 * the path is the orchestrator route's, percent-encoded as sent, no query.
	 */
	public static function canonical(string $uid, string $timestamp, string $nonce, string $method, string $path, string $body): string {
		return implode("\n", [$uid, $timestamp, $nonce, $method, $path, hash('sha256', $body)]);
	}

	/** Lowercase hex HMAC-SHA256 of the canonical string. */
	public function signature(string $uid, string $timestamp, string $nonce, string $method, string $path, string $body): string {
		return hash_hmac('sha256', self::canonical($uid, $timestamp, $nonce, $method, $path, $body), $this->secret);
	}

	/** A fresh nonce: 16 random bytes as 32 hex digits. */
	public static function nonce(): string {
		return bin2hex(random_bytes(16));
	}

	/**
	 * The four signed headers for one request. The timestamp is the
	 * decimal text of `$now`, the one spelling the orchestrator accepts.
	 *
	 * @return array<string, string>
	 */
	public function headers(string $uid, int $now, string $nonce, string $method, string $path, string $body): array {
		if (preg_match('/\A[A-Za-z0-9_-]{16,64}\z/', $nonce) !== 1) {
			throw new \InvalidArgumentException('a nonce is 16 to 64 letters, digits, - or _');
		}
		if (!self::uidIsValid($uid)) {
			throw new \InvalidArgumentException('not a Nextcloud uid');
		}
		if ($now <= 0) {
			throw new \InvalidArgumentException('the clock is before 1970');
		}
		$timestamp = (string)$now;
		return [
			self::HEADER_UID => $uid,
			self::HEADER_TIMESTAMP => $timestamp,
			self::HEADER_NONCE => $nonce,
			self::HEADER_SIGNATURE => $this->signature($uid, $timestamp, $nonce, $method, $path, $body),
		];
	}

	/**
	 * Nextcloud's own rule for a uid (`validateUserId`): 1–64 bytes of
	 * letters, digits, space and `_.@-'`, no leading or trailing space, not
	 * `.` or `..`. The orchestrator refuses anything else, so a uid that
	 * fails here is refused before a request is signed.
	 */
	public static function uidIsValid(string $uid): bool {
		if ($uid === '' || strlen($uid) > self::UID_BYTES_MAX) {
			return false;
		}
		if ($uid === '.' || $uid === '..') {
			return false;
		}
		if (trim($uid, ' ') !== $uid) {
			return false;
		}
		return preg_match("/\\A[a-zA-Z0-9 _.@\\-']+\\z/", $uid) === 1;
	}
}
