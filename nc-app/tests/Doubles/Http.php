<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Doubles;

use OCA\Tamebi\Http\RawRequest;
use OCP\AppFramework\Http\IOutput;
use OCP\IRequest;

/** A request: headers, parameters, Nextcloud's request id, the CSRF verdict. */
final class FakeRequest implements IRequest {
	public array $server = [];

	/** @param array<string, string> $headers */
	public function __construct(
		public array $headers = [],
		public array $params = [],
		public string $id = 'req-7Hq2',
		public bool $csrfPasses = true,
		public string $method = 'POST',
	) {
	}

	public function getHeader(string $name): string {
		foreach ($this->headers as $key => $value) {
			if (strcasecmp($key, $name) === 0) {
				return $value;
			}
		}
		return '';
	}

	public function getParam(string $key, $default = null) {
		return $this->params[$key] ?? $default;
	}

	public function getMethod(): string {
		return $this->method;
	}

	public function getCookie(string $key) {
		return null;
	}

	public function passesCSRFCheck(): bool {
		return $this->csrfPasses;
	}

	public function passesStrictCookieCheck(): bool {
		return $this->csrfPasses;
	}

	public function getId(): string {
		return $this->id;
	}
}

/** The body and cookies a test sends. */
final class FakeRawRequest extends RawRequest {
	public int $bodyReads = 0;

	public function __construct(
		public string $bodyBytes = '',
		public array $cookieJar = [],
	) {
	}

	public function body(int $bytesMax): ?string {
		$this->bodyReads++;
		return strlen($this->bodyBytes) > $bytesMax ? null : $this->bodyBytes;
	}

	public function cookies(): array {
		return $this->cookieJar;
	}
}

/** What Nextcloud's output wrapper was told, in order. */
final class FakeOutput implements IOutput {
	/** @var list<array{0: string, 1: mixed}> */
	public array $events = [];
	public int $code = 200;

	public function setOutput($out) {
		$this->events[] = ['output', $out];
	}

	public function setReadfile($path) {
		return false;
	}

	public function setHeader($header) {
		$this->events[] = ['header', $header];
	}

	public function getHttpResponseCode() {
		return $this->code;
	}

	public function setHttpResponseCode($code) {
		$this->code = $code;
		$this->events[] = ['status', $code];
	}

	public function setCookie($name, $value, $expire, $path, $domain, $secure, $httpOnly, $sameSite = 'Lax') {
	}

	/** @return list<string> */
	public function headers(): array {
		return array_values(array_map(fn ($e) => $e[1], array_filter($this->events, fn ($e) => $e[0] === 'header')));
	}
}
