<?php

declare(strict_types=1);

// Hand-written stand-ins for exactly the parts of Nextcloud's public API
// (OCP) the app uses, so the tests run without a Nextcloud. Signatures
// follow Nextcloud 30–32; bodies do the least a test needs. Nothing here is
// loaded inside Nextcloud: the real classes win there.

namespace OCP {
	interface IUser {
		public function getUID();
		public function getDisplayName();
	}

	interface IUserSession {
		public function getUser();
		public function isLoggedIn();
	}

	interface ISession {
		public function set(string $key, $value);
		public function get(string $key);
		public function exists(string $key): bool;
		public function remove(string $key);
		public function close();
		public function reopen(): bool;
		public function getId(): string;
	}

	/**
	 * @property-read string[] $server
	 */
	interface IRequest {
		public function getHeader(string $name): string;
		public function getParam(string $key, $default = null);
		public function getMethod(): string;
		public function getCookie(string $key);
		public function passesCSRFCheck(): bool;
		public function passesStrictCookieCheck(): bool;
		public function getId(): string;
	}

	interface IConfig {
		public function setUserValue($userId, $appName, $key, $value, $preCondition = null);
		public function getUserValue($userId, $appName, $key, $default = '');
		public function deleteUserValue($userId, $appName, $key);
	}

	interface IAppConfig {
		public function getValueString(string $app, string $key, string $default = '', bool $lazy = false): string;
	}

	interface IURLGenerator {
		public function linkToRoute(string $routeName, array $arguments = []): string;
	}

	interface IDBConnection {
		public function executeQuery(string $sql, array $params = [], $types = []): DB\IResult;
		public function executeStatement($sql, array $params = [], array $types = []): int;
	}

	class Util {
		/** @var list<array{string, string}> */
		public static array $scripts = [];

		public static function addScript(string $application, string $file, string $afterAppId = 'core', bool $prepend = false): void {
			self::$scripts[] = [$application, $file];
		}

		/** @var list<array{string, string}> */
		public static array $styles = [];

		public static function addStyle(string $application, ?string $file = null, bool $prepend = false): void {
			self::$styles[] = [$application, (string)$file];
		}
	}
}

namespace OCP\Security {
	interface ICrypto {
		public function calculateHMAC(string $message, string $password = ''): string;
		public function encrypt(string $plaintext, string $password = ''): string;
		/** @throws \Exception when the ciphertext does not authenticate */
		public function decrypt(string $authenticatedCiphertext, string $password = ''): string;
	}
}

namespace OCP\DB {
	interface IResult {
		public function closeCursor(): bool;
		public function fetch(int $fetchMode = \PDO::FETCH_ASSOC);
		public function fetchAll(int $fetchMode = \PDO::FETCH_ASSOC): array;
	}

	interface ISchemaWrapper {
		public function hasTable($tableName);
		public function createTable($tableName);
	}

	class Types {
		public const BIGINT = 'bigint';
		public const STRING = 'string';
		public const TEXT = 'text';
	}
}

namespace OCP\DB\QueryBuilder {
	interface IQueryBuilder {
		public const PARAM_INT = 1;
		public const PARAM_STR = 2;
	}
}

namespace OCP\Migration {
	interface IOutput {
	}

	abstract class SimpleMigrationStep {
		public function changeSchema(IOutput $output, \Closure $schemaClosure, array $options) {
			return null;
		}
	}
}

namespace OCP\App {
	interface IAppManager {
		public function isEnabledForUser($appId, $user = null);
	}
}

namespace OCP\Http\Client {
	interface IResponse {
		public function getBody();
		public function getStatusCode(): int;
		public function getHeader(string $key): string;
		public function getHeaders(): array;
	}

	interface IClient {
		public function get(string $uri, array $options = []): IResponse;
		public function post(string $uri, array $options = []): IResponse;
	}

	interface IClientService {
		public function newClient(): IClient;
	}
}

namespace OCP\AppFramework\Utility {
	interface ITimeFactory {
		public function getTime(): int;
	}
}

namespace OCP\AppFramework\Bootstrap {
	interface IRegistrationContext {
	}

	interface IBootContext {
	}

	interface IBootstrap {
		public function register(IRegistrationContext $context): void;
		public function boot(IBootContext $context): void;
	}
}

namespace OCP\AppFramework {
	class App {
		public function __construct(string $appName, array $urlParams = []) {
		}
	}

	abstract class Controller {
		protected $appName;
		protected $request;

		public function __construct($appName, \OCP\IRequest $request) {
			$this->appName = $appName;
			$this->request = $request;
		}
	}

	class Http {
		public const STATUS_OK = 200;
		public const STATUS_NO_CONTENT = 204;
		public const STATUS_BAD_REQUEST = 400;
		public const STATUS_UNAUTHORIZED = 401;
		public const STATUS_FORBIDDEN = 403;
		public const STATUS_NOT_FOUND = 404;
		public const STATUS_CONFLICT = 409;
		public const STATUS_PRECONDITION_FAILED = 412;
		public const STATUS_REQUEST_ENTITY_TOO_LARGE = 413;
		public const STATUS_BAD_GATEWAY = 502;
		public const STATUS_SERVICE_UNAVAILABLE = 503;
	}
}

namespace OCP\AppFramework\Db {
	class DoesNotExistException extends \Exception {
	}

	/**
	 * Nextcloud's Entity as far as Mail's entities use it here: a getter
	 * per (protected) field, by __call, `getSentAt()` reading `sentAt`; a
	 * name that is no field is an error, as in Nextcloud.
	 */
	abstract class Entity {
		public function __call(string $name, array $arguments) {
			$field = lcfirst(substr($name, 3));
			if (str_starts_with($name, 'get') && $arguments === [] && property_exists($this, $field)) {
				return $this->$field;
			}
			throw new \BadFunctionCallException($name . ' does not exist');
		}
	}
}

namespace OCP\AppFramework\Http\Attribute {
	#[\Attribute(\Attribute::TARGET_METHOD)]
	class NoAdminRequired {
	}

	#[\Attribute(\Attribute::TARGET_METHOD)]
	class NoCSRFRequired {
	}

	#[\Attribute(\Attribute::TARGET_METHOD)]
	class PublicPage {
	}
}

namespace OCP\AppFramework\Http {
	class Response {
		private array $headers = ['Cache-Control' => 'no-cache, no-store, must-revalidate'];
		private int $status;
		private ?EmptyContentSecurityPolicy $contentSecurityPolicy = null;

		public function __construct(int $status = 200, array $headers = []) {
			$this->status = $status;
			$this->headers = array_merge($this->headers, $headers);
		}

		public function addHeader($name, $value) {
			$this->headers[trim($name)] = $value;
			return $this;
		}

		/** As Nextcloud does: the policy object always sets the CSP header. */
		public function getHeaders() {
			$this->headers['Content-Security-Policy'] = $this->getContentSecurityPolicy()->buildPolicy();
			return $this->headers;
		}

		public function render() {
			return '';
		}

		public function setStatus($status) {
			$this->status = $status;
			return $this;
		}

		public function getStatus() {
			return $this->status;
		}

		public function setContentSecurityPolicy(EmptyContentSecurityPolicy $csp) {
			$this->contentSecurityPolicy = $csp;
			return $this;
		}

		public function getContentSecurityPolicy() {
			return $this->contentSecurityPolicy ??= new EmptyContentSecurityPolicy();
		}
	}

	class JSONResponse extends Response {
		protected $data;

		public function __construct($data = [], int $statusCode = 200, array $headers = []) {
			parent::__construct($statusCode, $headers);
			$this->data = $data;
			$this->addHeader('Content-Type', 'application/json; charset=utf-8');
		}

		public function getData() {
			return $this->data;
		}

		public function render() {
			return json_encode($this->data, JSON_HEX_TAG | JSON_THROW_ON_ERROR);
		}
	}

	class TemplateResponse extends Response {
		public function __construct(public string $appName, public string $templateName, public array $params = [], public string $renderAs = 'user', int $status = 200, array $headers = []) {
			parent::__construct($status, $headers);
		}
	}

	class EmptyContentSecurityPolicy {
		protected array $allowedFrameDomains = [];

		public function addAllowedFrameDomain(string $domain) {
			$this->allowedFrameDomains[] = $domain;
			return $this;
		}

		public function buildPolicy() {
			$frames = $this->allowedFrameDomains === [] ? '' : "frame-src " . implode(' ', $this->allowedFrameDomains) . ';';
			return "default-src 'none';" . $frames;
		}
	}

	class ContentSecurityPolicy extends EmptyContentSecurityPolicy {
	}

	interface IOutput {
		public function setOutput($out);
		public function setReadfile($path);
		public function setHeader($header);
		public function getHttpResponseCode();
		public function setHttpResponseCode($code);
		public function setCookie($name, $value, $expire, $path, $domain, $secure, $httpOnly, $sameSite = 'Lax');
	}

	interface ICallbackResponse {
		public function callback(IOutput $output);
	}
}

namespace Psr\Log {
	interface LoggerInterface {
		public function error(string|\Stringable $message, array $context = []): void;
		public function warning(string|\Stringable $message, array $context = []): void;
		public function info(string|\Stringable $message, array $context = []): void;
	}
}

namespace Psr\Container {
	interface ContainerInterface {
		public function get(string $id);
		public function has(string $id): bool;
	}
}
