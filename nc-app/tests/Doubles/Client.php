<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Doubles;

use OCP\Http\Client\IClient;
use OCP\Http\Client\IClientService;
use OCP\Http\Client\IResponse;

final class FakeHttpResponse implements IResponse {
	/** @param array<string, string> $headers */
	public function __construct(
		private int $status,
		private array $headers = [],
		private string $body = '',
	) {
	}

	public function getBody() {
		return $this->body;
	}

	public function getStatusCode(): int {
		return $this->status;
	}

	public function getHeader(string $key): string {
		foreach ($this->headers as $name => $value) {
			if (strcasecmp($name, $key) === 0) {
				return $value;
			}
		}
		return '';
	}

	public function getHeaders(): array {
		return array_map(fn ($v) => [$v], $this->headers);
	}
}

/**
 * Nextcloud's HTTP client, answering from a script: each call is recorded
 * and handed to `$answer`, which returns the response (or throws).
 */
final class FakeClientService implements IClientService, IClient {
	/** @var list<array{method: string, uri: string, options: array}> */
	public array $calls = [];

	/** @param \Closure(string, string, array): IResponse $answer */
	public function __construct(
		public \Closure $answer,
	) {
	}

	public function newClient(): IClient {
		return $this;
	}

	public function get(string $uri, array $options = []): IResponse {
		$this->calls[] = ['method' => 'GET', 'uri' => $uri, 'options' => $options];
		return ($this->answer)('GET', $uri, $options);
	}

	public function post(string $uri, array $options = []): IResponse {
		$this->calls[] = ['method' => 'POST', 'uri' => $uri, 'options' => $options];
		return ($this->answer)('POST', $uri, $options);
	}

	/** A client that fails the test if it is ever called. */
	public static function unused(): self {
		return new self(static function (string $method, string $uri): IResponse {
			throw new \LogicException("no HTTP call was expected, got $method $uri");
		});
	}
}

/**
 * The oidc app as the loopback sees it: authorize answers a redirect with
 * a code when the session cookie is present, the login page otherwise;
 * token exchanges the code for an access token.
 */
final class FakeOidc {
	public int $issued = 0;
	/** @var array<string, array{client: string, challenge: string, redirect: string}> */
	public array $codes = [];
	public bool $sessionAlive = true;
	public int $expiresIn = 900;

	public function __construct(
		public string $sessionCookie = 'ocabc123',
	) {
	}

	public function service(): FakeClientService {
		return new FakeClientService(fn (string $method, string $uri, array $options) => $this->answer($method, $uri, $options));
	}

	private function answer(string $method, string $uri, array $options): FakeHttpResponse {
		if ($method === 'GET' && str_contains($uri, '/index.php/apps/oidc/authorize?')) {
			parse_str(parse_url($uri, PHP_URL_QUERY), $query);
			$cookie = $options['headers']['Cookie'] ?? '';
			if (!$this->sessionAlive || !str_contains($cookie, $this->sessionCookie . '=')) {
				return new FakeHttpResponse(303, ['Location' => 'http://cloud.test/index.php/login?redirect_url=%2Findex.php%2Fapps%2Foidc%2Fauthorize']);
			}
			$code = 'code-' . count($this->codes);
			$this->codes[$code] = ['client' => $query['client_id'], 'challenge' => $query['code_challenge'], 'redirect' => $query['redirect_uri']];
			return new FakeHttpResponse(303, ['Location' => $query['redirect_uri'] . '?code=' . $code . '&state=' . $query['state']]);
		}
		if ($method === 'POST' && str_ends_with($uri, '/index.php/apps/oidc/token')) {
			$form = $options['form_params'];
			$code = $this->codes[$form['code']] ?? null;
			$challenge = rtrim(strtr(base64_encode(hash('sha256', $form['code_verifier'], true)), '+/', '-_'), '=');
			if ($code === null || $code['challenge'] !== $challenge || $code['client'] !== $form['client_id'] || $code['redirect'] !== $form['redirect_uri']) {
				return new FakeHttpResponse(400, [], '{"error":"invalid_grant"}');
			}
			unset($this->codes[$form['code']]);
			$this->issued++;
			return new FakeHttpResponse(200, ['Content-Type' => 'application/json'], json_encode([
				'access_token' => "jwt-{$form['client_id']}-{$this->issued}",
				'token_type' => 'Bearer',
				'expires_in' => $this->expiresIn,
				'id_token' => 'id',
			]));
		}
		return new FakeHttpResponse(404);
	}
}
