<?php

declare(strict_types=1);

namespace OCA\Tamebi\Service;

use OCA\Tamebi\AppInfo\Application;
use OCP\IConfig;
use OCP\Security\ICrypto;
use Psr\Log\LoggerInterface;

/**
 * The app password a user saved for app-password mode
 * (docs/app-contract.md), one per user, in their preferences (app
 * `tamebi`, key `app_password`), encrypted with Nextcloud's ICrypto — the
 * instance secret's key, so a database dump alone does not reveal it.
 * Nextcloud deletes a user's preferences with the user.
 *
 * The password is never logged, and never returned to the browser: only
 * the chat proxy reads it, to send it to the orchestrator.
 */
final class AppPasswordStore {
	public const KEY = 'app_password';

	/** The longest value the orchestrator accepts in `X-Tamebi-App-Password` (docs/identity.md). */
	public const BYTES_MAX = 256;

	/**
	 * 1 to 256 visible ASCII characters, no space: every app password
	 * Nextcloud makes has this shape, only such a value travels safely in a
	 * header (no line break, nothing a receiver would trim), and the
	 * orchestrator refuses a request whose header has any other.
	 */
	public static function hasTheShape(string $password): bool {
		return preg_match('/\A[\x21-\x7E]{1,' . self::BYTES_MAX . '}\z/', $password) === 1;
	}

	public function __construct(
		private IConfig $config,
		private ICrypto $crypto,
		private LoggerInterface $logger,
	) {
	}

	public function save(string $uid, string $password): void {
		$this->config->setUserValue($uid, Application::APP_ID, self::KEY, $this->crypto->encrypt($password));
	}

	/**
	 * The saved password, or null: none saved, or one that no longer
	 * decrypts (the instance secret changed, the value was altered) — that
	 * one is logged, without its value, and the user saves a new one.
	 */
	public function get(string $uid): ?string {
		$stored = (string)$this->config->getUserValue($uid, Application::APP_ID, self::KEY, '');
		if ($stored === '') {
			return null;
		}
		try {
			$password = $this->crypto->decrypt($stored);
		} catch (\Exception $e) {
			// The exception's class only: its message or trace could carry the value.
			$this->logger->warning('tamebi: a saved app password no longer decrypts; the user has to save it again', ['uid' => $uid, 'error' => get_class($e)]);
			return null;
		}
		return $password === '' ? null : $password;
	}

	public function has(string $uid): bool {
		return $this->get($uid) !== null;
	}

	public function remove(string $uid): void {
		$this->config->deleteUserValue($uid, Application::APP_ID, self::KEY);
	}
}
