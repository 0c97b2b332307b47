<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Doubles;

use OCP\App\IAppManager;
use OCP\AppFramework\Utility\ITimeFactory;
use OCP\IAppConfig;
use OCP\IConfig;
use OCP\ISession;
use OCP\IUser;
use OCP\IUserSession;
use Psr\Log\LoggerInterface;

final class FakeUser implements IUser {
	public function __construct(
		private string $uid,
		private string $displayName = '',
	) {
	}

	public function getUID() {
		return $this->uid;
	}

	public function getDisplayName() {
		return $this->displayName === '' ? $this->uid : $this->displayName;
	}
}

final class FakeUserSession implements IUserSession {
	public function __construct(
		public ?IUser $user = null,
	) {
	}

	public function getUser() {
		return $this->user;
	}

	public function isLoggedIn() {
		return $this->user !== null;
	}
}

/** A Nextcloud session: values, and whether it is open (PHP's lock). */
final class FakeSession implements ISession {
	public array $values = [];
	public bool $open = true;
	/** @var list<string> */
	public array $log = [];

	public function set(string $key, $value) {
		$this->values[$key] = $value;
		$this->log[] = "set $key";
	}

	public function get(string $key) {
		return $this->values[$key] ?? null;
	}

	public function exists(string $key): bool {
		return array_key_exists($key, $this->values);
	}

	public function remove(string $key) {
		unset($this->values[$key]);
		$this->log[] = "remove $key";
	}

	public function close() {
		$this->open = false;
		$this->log[] = 'close';
	}

	public function reopen(): bool {
		$this->open = true;
		return true;
	}

	public function getId(): string {
		return 'session-1';
	}
}

final class FakeAppConfig implements IAppConfig {
	public function __construct(
		public array $values = [],
	) {
	}

	public function getValueString(string $app, string $key, string $default = '', bool $lazy = false): string {
		return $app === 'tamebi' ? ($this->values[$key] ?? $default) : $default;
	}

	/** A configuration where everything is set. */
	public static function complete(array $overrides = []): self {
		return new self(array_merge([
			'orchestrator_url' => 'http://orchestrator.test:9100',
			'shared_secret' => 'tamebi-test-vector-secret-0123456789abcdef',
			'internal_url' => 'http://nextcloud.internal',
			'redirect_uri' => 'http://cloud.test/index.php/apps/tamebi/oauth/callback',
			'client_id_mcp_nextcloud' => 'client-mcp-nextcloud',
			'client_secret_mcp_nextcloud' => 'secret-mcp-nextcloud',
			'client_id_mcp_mail' => 'client-mcp-mail',
			'client_secret_mcp_mail' => 'secret-mcp-mail',
			'client_id_nextcloud' => 'client-nextcloud',
			'client_secret_nextcloud' => 'secret-nextcloud',
		], $overrides));
	}
}

final class FakeConfig implements IConfig {
	public function __construct(
		public array $userValues = [],
	) {
	}

	public function setUserValue($userId, $appName, $key, $value, $preCondition = null) {
		$this->userValues["$userId/$appName/$key"] = (string)$value;
	}

	public function getUserValue($userId, $appName, $key, $default = '') {
		return $this->userValues["$userId/$appName/$key"] ?? $default;
	}

	public function deleteUserValue($userId, $appName, $key) {
		unset($this->userValues["$userId/$appName/$key"]);
	}
}

final class FakeAppManager implements IAppManager {
	public function __construct(
		public bool $enabled = true,
	) {
	}

	public function isEnabledForUser($appId, $user = null) {
		return $this->enabled;
	}
}

final class FakeTime implements ITimeFactory {
	public function __construct(
		public int $now = 1767225600,
	) {
	}

	public function getTime(): int {
		return $this->now;
	}
}

final class FakeLogger implements LoggerInterface {
	public array $lines = [];
	/** @var list<array> each line's context, in the order of `$lines` */
	public array $contexts = [];

	public function error(string|\Stringable $message, array $context = []): void {
		$this->lines[] = ['error', (string)$message];
		$this->contexts[] = $context;
	}

	public function warning(string|\Stringable $message, array $context = []): void {
		$this->lines[] = ['warning', (string)$message];
		$this->contexts[] = $context;
	}

	public function info(string|\Stringable $message, array $context = []): void {
		$this->lines[] = ['info', (string)$message];
		$this->contexts[] = $context;
	}

	/** Everything logged, messages and contexts (exceptions by message), as one string. */
	public function everything(): string {
		$contexts = array_map(static function (array $context): array {
			return array_map(static fn ($value) => $value instanceof \Throwable ? get_class($value) . ': ' . $value->getMessage() : $value, $context);
		}, $this->contexts);
		return json_encode([$this->lines, $contexts], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
	}
}
