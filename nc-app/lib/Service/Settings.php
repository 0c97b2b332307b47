<?php

declare(strict_types=1);

namespace OCA\Tamebi\Service;

use OCA\Tamebi\AppInfo\Application;
use OCP\IAppConfig;

/**
 * The app's configuration, from IAppConfig (`occ config:app:set tamebi
 * <key> --value=…`; secrets with `--sensitive`). A missing or malformed
 * value reads as null: the caller decides what that costs (no tokens for
 * an audience; no chat at all without the orchestrator or the secret).
 */
final class Settings {
	/** The token audiences, in the order their headers are sent. */
	public const AUDIENCES = ['mcp-nextcloud', 'mcp-mail', 'nextcloud'];

	public const KEY_ORCHESTRATOR_URL = 'orchestrator_url';
	public const KEY_SHARED_SECRET = 'shared_secret';
	public const KEY_INTERNAL_URL = 'internal_url';
	public const KEY_REDIRECT_URI = 'redirect_uri';

	public function __construct(
		private IAppConfig $appConfig,
	) {
	}

	/** The orchestrator's base URL, e.g. `http://orchestrator:9100`, no trailing slash. */
	public function orchestratorUrl(): ?string {
		return $this->url(self::KEY_ORCHESTRATOR_URL);
	}

	/** The secret shared with the orchestrator, when it is long enough. */
	public function sharedSecret(): ?string {
		$secret = $this->appConfig->getValueString(Application::APP_ID, self::KEY_SHARED_SECRET);
		return strlen($secret) >= Signer::SECRET_BYTES_MIN ? $secret : null;
	}

	/** Where this Nextcloud answers itself for the loopback, e.g. `http://localhost`. */
	public function internalUrl(): ?string {
		return $this->url(self::KEY_INTERNAL_URL);
	}

	/** The redirect URI registered for the three OIDC clients. */
	public function redirectUri(): ?string {
		// Compared byte for byte by the oidc app: kept exactly as configured.
		$value = $this->appConfig->getValueString(Application::APP_ID, self::KEY_REDIRECT_URI);
		return preg_match('#\Ahttps?://[^\s/?\#]+[^\s\#]*\z#i', $value) === 1 ? $value : null;
	}

	/** @return array{id: string, secret: string}|null the OIDC client minting tokens for an audience */
	public function client(string $audience): ?array {
		if (!in_array($audience, self::AUDIENCES, true)) {
			throw new \InvalidArgumentException("unknown audience $audience");
		}
		$suffix = str_replace('-', '_', $audience);
		$id = $this->appConfig->getValueString(Application::APP_ID, 'client_id_' . $suffix);
		$secret = $this->appConfig->getValueString(Application::APP_ID, 'client_secret_' . $suffix);
		return $id !== '' && $secret !== '' ? ['id' => $id, 'secret' => $secret] : null;
	}

	private function url(string $key): ?string {
		$value = rtrim($this->appConfig->getValueString(Application::APP_ID, $key), '/');
		return preg_match('#\Ahttps?://[^\s/?\#]+#i', $value) === 1 ? $value : null;
	}
}
