<?php

declare(strict_types=1);

namespace OCA\Tamebi\Service;

use OCA\Tamebi\Http\StreamResponse;
use OCP\AppFramework\Http\JSONResponse;
use OCP\AppFramework\Http\Response;
use OCP\AppFramework\Utility\ITimeFactory;
use OCP\IConfig;
use OCP\IRequest;
use OCP\IUser;
use Psr\Log\LoggerInterface;

/**
 * The chat proxy's last steps (contract steps 3–6): sign the session's uid
 * over the exact body, attach the request id, the user's tokens, display
 * name, time zone and language, and answer with a response that streams the
 * orchestrator's answer through as it comes. In app-password mode the
 * user's saved app password rides along in `X-Tamebi-App-Password`.
 */
final class OrchestratorProxy {
	public const BODY_BYTES_MAX = 4 * 1024 * 1024;

	public const HEADER_REQUEST_ID = 'X-Request-Id';
	public const HEADER_DISPLAY_NAME = 'X-Tamebi-Display-Name';
	public const HEADER_TIME_ZONE = 'X-Tamebi-Time-Zone';
	public const HEADER_LANGUAGE = 'X-Tamebi-Language';
	public const HEADER_TOKEN_PREFIX = 'X-Tamebi-Token-';
	public const HEADER_APP_PASSWORD = 'X-Tamebi-App-Password';

	public function __construct(
		private Settings $settings,
		private TokenRenewer $tokenRenewer,
		private AppPasswordStore $appPasswords,
		private IConfig $config,
		private ITimeFactory $timeFactory,
		private IRequest $request,
		private LoggerInterface $logger,
	) {
	}

	/**
	 * Forward one request for the signed-in user.
	 *
	 * @param string $path the orchestrator's route, e.g. `/api/chat`
	 * @param array<string, string> $cookies the browser's cookies (for token renewal only)
	 */
	public function forward(IUser $user, string $method, string $path, string $body, array $cookies): Response {
		$base = $this->settings->orchestratorUrl();
		$secret = $this->settings->sharedSecret();
		if ($base === null || $secret === null) {
			$this->logger->error('tamebi: orchestrator_url or shared_secret (at least 32 bytes) is not configured');
			return Envelope::response(503, Envelope::NOT_CONFIGURED, $this->request);
		}
		$uid = $user->getUID();
		if (!Signer::uidIsValid($uid)) {
			return Envelope::response(403, 'Your account name cannot be used with the assistant. Ask your administrator.', $this->request);
		}
		$tokens = $this->tokenRenewer->tokens($cookies);
		// Signed last, after the loopback calls, so the timestamp is fresh.
		$headers = self::headers(
			new Signer($secret),
			$uid,
			$this->timeFactory->getTime(),
			Signer::nonce(),
			$method,
			$path,
			$body,
			$this->request->getId(),
			$tokens,
			(string)$user->getDisplayName(),
			(string)$this->config->getUserValue($uid, 'core', 'timezone', ''),
			// The user's language setting (what IFactory::findLanguage
			// reads first); unset, none is sent and the prompt names none.
			(string)$this->config->getUserValue($uid, 'core', 'lang', ''),
			$this->appPasswords->get($uid),
		);
		$contentType = $this->request->getHeader('Content-Type');
		if ($contentType !== '') {
			$headers['Content-Type'] = $contentType;
		}
		return new StreamResponse($base . $path, $method, $headers, $body, $this->request->getId(), $this->logger);
	}

	/**
	 * Every header the orchestrator reads, for one request. Pure.
	 *
	 * @param array<string, string> $tokens audience => token; an audience without one sends no header
	 * @param ?string $appPassword the user's saved app password (app-password mode); null: no header
	 * @return array<string, string>
	 */
	public static function headers(Signer $signer, string $uid, int $now, string $nonce, string $method, string $path, string $body, string $requestId, array $tokens, string $displayName, string $timeZone, string $language, ?string $appPassword = null): array {
		$headers = $signer->headers($uid, $now, $nonce, $method, $path, $body);
		$headers[self::HEADER_REQUEST_ID] = $requestId;
		foreach ($tokens as $audience => $token) {
			$headers[self::tokenHeader($audience)] = $token;
		}
		if ($displayName !== '') {
			$headers[self::HEADER_DISPLAY_NAME] = rawurlencode($displayName);
		}
		if (preg_match('#\A[A-Za-z0-9_+\-]+(?:/[A-Za-z0-9_+\-]+)*\z#', $timeZone) === 1) {
			$headers[self::HEADER_TIME_ZONE] = $timeZone;
		}
		// A short language tag (`fr`, `de_DE`, `pt-BR`), as the
		// orchestrator accepts it; anything else is left out.
		if (self::isLanguageTag($language)) {
			$headers[self::HEADER_LANGUAGE] = $language;
		}
		// The shape the save route accepts: a header never breaks.
		if ($appPassword !== null && AppPasswordStore::hasTheShape($appPassword)) {
			$headers[self::HEADER_APP_PASSWORD] = $appPassword;
		}
		return $headers;
	}

	/** 2–3 letters, then at most four subtags of 1–8 letters or digits after `-` or `_`; at most 35 bytes. */
	public static function isLanguageTag(string $language): bool {
		return strlen($language) <= 35
			&& preg_match('#\A[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8}){0,4}\z#', $language) === 1;
	}

	/** `mcp-nextcloud` → `X-Tamebi-Token-Mcp-Nextcloud`. */
	public static function tokenHeader(string $audience): string {
		return self::HEADER_TOKEN_PREFIX . implode('-', array_map('ucfirst', explode('-', $audience)));
	}
}
