<?php

declare(strict_types=1);

namespace OCA\Tamebi\Service;

use OCP\AppFramework\Utility\ITimeFactory;
use OCP\Http\Client\IClientService;
use OCP\ISession;
use Psr\Log\LoggerInterface;

/**
 * The user's OIDC access tokens, one per audience, kept in their Nextcloud
 * session and renewed before they expire (decision D5).
 *
 * Nextcloud's `oidc` app issues 15-minute tokens and no refresh token, so a
 * token is renewed by running the authorization-code flow again, server
 * side, on a loopback call that carries the user's own session cookies —
 * only the `nc_*` and `oc*` ones, and no header of the browser. Consent is
 * on record and the session is live, so the answer is a redirect with a
 * code; a redirect anywhere else (the login page) means the session is
 * gone, and there is no token. It is a workaround, to be dropped if the
 * `oidc` app ever issues refresh tokens.
 *
 * Storage: ISession, which is per session by construction, encrypted by
 * Nextcloud, and gone at logout. The session is closed before the loopback
 * (the loopback request opens the same session, and PHP's file sessions
 * lock), and closed again right after each write, which is when
 * Nextcloud's encrypted session data is written: so this request never
 * holds the session while it streams, and never writes it at the end.
 */
final class TokenRenewer {
	/** A token expiring sooner than this is renewed before use. */
	public const RENEW_BEFORE_SECONDS = 120;
	/** When the token endpoint omits `expires_in`: the oidc app's default. */
	public const EXPIRES_IN_DEFAULT_SECONDS = 900;
	public const SESSION_KEY_PREFIX = 'tamebi_token_';

	public function __construct(
		private IClientService $clientService,
		private ISession $session,
		private Settings $settings,
		private ITimeFactory $timeFactory,
		private LoggerInterface $logger,
	) {
	}

	/**
	 * Every token that can be had, renewed where needed.
	 *
	 * @param array<string, string> $cookies the browser's cookies, as PHP decoded them
	 * @return array<string, string> audience => access token
	 */
	public function tokens(array $cookies): array {
		$tokens = [];
		foreach (Settings::AUDIENCES as $audience) {
			$token = $this->token($audience, $cookies);
			if ($token !== null) {
				$tokens[$audience] = $token;
			}
		}
		return $tokens;
	}

	/** The audience's token, from the session or freshly minted; null when none can be had. */
	public function token(string $audience, array $cookies): ?string {
		$now = $this->timeFactory->getTime();
		$cached = $this->cached($audience);
		if ($cached !== null && $cached['expires'] - $now > self::RENEW_BEFORE_SECONDS) {
			return $cached['token'];
		}
		$outcome = $this->mint($audience, $cookies);
		if ($outcome === 'session-gone') {
			$this->session->remove(self::SESSION_KEY_PREFIX . $audience);
			$this->session->close();
			return null;
		}
		if (is_array($outcome)) {
			$expires = $now + $outcome['expires_in'];
			$this->session->set(self::SESSION_KEY_PREFIX . $audience, json_encode(['token' => $outcome['token'], 'expires' => $expires]));
			// Nextcloud's encrypted session writes on close: now, not when
			// the stream ends minutes later with this request's old copy.
			$this->session->close();
			return $outcome['token'];
		}
		// Renewal failed for another reason: a token that has not expired
		// yet still works for what is left of it.
		return $cached !== null && $cached['expires'] > $now ? $cached['token'] : null;
	}

	/**
	 * Only the session cookies: `nc_*` (session id, token, same-site
	 * markers) and `oc*` (the instance's session cookie, the passphrase).
	 *
	 * @param array<string, mixed> $cookies
	 * @return array<string, string>
	 */
	public static function sessionCookies(array $cookies): array {
		$kept = [];
		foreach ($cookies as $name => $value) {
			$name = (string)$name;
			if (!is_string($value)) {
				continue;
			}
			if (str_starts_with($name, 'nc_') || str_starts_with($name, 'oc')) {
				$kept[$name] = $value;
			}
		}
		return $kept;
	}

	/** The Cookie header for the loopback; values re-encoded as PHP decoded them. */
	public static function cookieHeader(array $cookies): string {
		$pairs = [];
		foreach (self::sessionCookies($cookies) as $name => $value) {
			$pairs[] = $name . '=' . rawurlencode($value);
		}
		return implode('; ', $pairs);
	}

	/** RFC 7636 S256: base64url(sha256(verifier)), no padding. */
	public static function challenge(string $verifier): string {
		return self::base64url(hash('sha256', $verifier, true));
	}

	/** A verifier of 64 unreserved characters (RFC 7636 allows 43–128). */
	public static function verifier(): string {
		return self::base64url(random_bytes(48));
	}

	private static function base64url(string $bytes): string {
		return rtrim(strtr(base64_encode($bytes), '+/', '-_'), '=');
	}

	/** @return array{token: string, expires: int}|null */
	private function cached(string $audience): ?array {
		$stored = $this->session->get(self::SESSION_KEY_PREFIX . $audience);
		if (!is_string($stored)) {
			return null;
		}
		$decoded = json_decode($stored, true);
		if (!is_array($decoded) || !is_string($decoded['token'] ?? null) || !is_int($decoded['expires'] ?? null)) {
			return null;
		}
		return ['token' => $decoded['token'], 'expires' => $decoded['expires']];
	}

	/**
	 * One authorization-code round trip on the loopback.
	 *
	 * @return array{token: string, expires_in: int}|'session-gone'|'failed'
	 */
	private function mint(string $audience, array $cookies): array|string {
		$client = $this->settings->client($audience);
		$internal = $this->settings->internalUrl();
		$redirectUri = $this->settings->redirectUri();
		if ($client === null || $internal === null || $redirectUri === null) {
			return 'failed';
		}
		$cookieHeader = self::cookieHeader($cookies);
		if ($cookieHeader === '') {
			return 'session-gone';
		}
		// The loopback request opens this same session: release it first.
		$this->session->close();

		$state = bin2hex(random_bytes(16));
		$verifier = self::verifier();
		$query = http_build_query([
			'response_type' => 'code',
			'client_id' => $client['id'],
			'redirect_uri' => $redirectUri,
			'scope' => 'openid profile',
			'state' => $state,
			'code_challenge' => self::challenge($verifier),
			'code_challenge_method' => 'S256',
		], '', '&', PHP_QUERY_RFC3986);
		$http = $this->clientService->newClient();
		try {
			$authorize = $http->get($internal . '/index.php/apps/oidc/authorize?' . $query, Loopback::options([
				'headers' => ['Cookie' => $cookieHeader],
			]));
		} catch (\Exception $e) {
			$this->logger->warning('tamebi: the OIDC authorize loopback failed', ['exception' => $e, 'audience' => $audience]);
			return 'failed';
		}
		$code = self::codeFrom($authorize->getStatusCode(), $authorize->getHeader('Location'), $redirectUri, $state);
		if ($code === null) {
			if (self::redirectsAway($authorize->getStatusCode(), $authorize->getHeader('Location'), $redirectUri)) {
				return 'session-gone';
			}
			$this->logger->warning('tamebi: the OIDC authorize loopback gave no code', ['status' => $authorize->getStatusCode(), 'audience' => $audience]);
			return 'failed';
		}
		try {
			$answer = $http->post($internal . '/index.php/apps/oidc/token', Loopback::options([
				'form_params' => [
					'grant_type' => 'authorization_code',
					'code' => $code,
					'redirect_uri' => $redirectUri,
					'client_id' => $client['id'],
					'client_secret' => $client['secret'],
					'code_verifier' => $verifier,
				],
			]));
		} catch (\Exception $e) {
			$this->logger->warning('tamebi: the OIDC token loopback failed', ['exception' => $e, 'audience' => $audience]);
			return 'failed';
		}
		$body = json_decode((string)$answer->getBody(), true);
		if ($answer->getStatusCode() !== 200 || !is_array($body) || !is_string($body['access_token'] ?? null) || $body['access_token'] === '') {
			$this->logger->warning('tamebi: the OIDC token endpoint gave no access token', ['status' => $answer->getStatusCode(), 'audience' => $audience]);
			return 'failed';
		}
		$expiresIn = $body['expires_in'] ?? self::EXPIRES_IN_DEFAULT_SECONDS;
		if (!is_int($expiresIn) || $expiresIn <= 0) {
			$expiresIn = self::EXPIRES_IN_DEFAULT_SECONDS;
		}
		return ['token' => $body['access_token'], 'expires_in' => $expiresIn];
	}

	/**
	 * Whether the authorize answer sends the browser somewhere other than
	 * our redirect URI: the login page, so the session is gone. (An
	 * `error=` redirect to our URI, or a page, is a failure of another kind.)
	 */
	public static function redirectsAway(int $status, string $location, string $redirectUri): bool {
		if ($status < 300 || $status > 399 || $location === '') {
			return false;
		}
		return explode('?', $location, 2)[0] !== explode('?', $redirectUri, 2)[0];
	}

	/**
	 * The code, when the authorize answer is a redirect to our redirect URI
	 * carrying our state; null for anything else (the login page, an
	 * `error=` redirect, a consent page).
	 */
	public static function codeFrom(int $status, string $location, string $redirectUri, string $state): ?string {
		if ($status < 300 || $status > 399 || $location === '') {
			return null;
		}
		$base = explode('?', $redirectUri, 2)[0];
		[$target, $query] = array_pad(explode('?', $location, 2), 2, '');
		if ($target !== $base) {
			return null;
		}
		parse_str(explode('#', $query, 2)[0], $params);
		if (($params['state'] ?? null) !== $state || !is_string($params['code'] ?? null) || $params['code'] === '') {
			return null;
		}
		return $params['code'];
	}
}
