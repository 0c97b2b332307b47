<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCA\Tamebi\Controller\ChatController;
use OCA\Tamebi\Http\StreamResponse;
use OCA\Tamebi\Service\AppPasswordStore;
use OCA\Tamebi\Service\OrchestratorProxy;
use OCA\Tamebi\Service\Settings;
use OCA\Tamebi\Service\Signer;
use OCA\Tamebi\Service\TokenRenewer;
use OCA\Tamebi\Tests\Doubles\FakeAppConfig;
use OCA\Tamebi\Tests\Doubles\FakeClientService;
use OCA\Tamebi\Tests\Doubles\FakeConfig;
use OCA\Tamebi\Tests\Doubles\FakeCrypto;
use OCA\Tamebi\Tests\Doubles\FakeLogger;
use OCA\Tamebi\Tests\Doubles\FakeOidc;
use OCA\Tamebi\Tests\Doubles\FakeOutput;
use OCA\Tamebi\Tests\Doubles\FakeRawRequest;
use OCA\Tamebi\Tests\Doubles\FakeRequest;
use OCA\Tamebi\Tests\Doubles\FakeSession;
use OCA\Tamebi\Tests\Doubles\FakeTime;
use OCA\Tamebi\Tests\Doubles\FakeUser;
use OCA\Tamebi\Tests\Doubles\OrchestratorServer;
use PHPUnit\Framework\TestCase;

final class ChatControllerTest extends TestCase {
	use GuardedCase;

	private const REQUEST_ID = 'Z9x-req.42';
	private const SECRET = 'tamebi-test-vector-secret-0123456789abcdef';
	private const COOKIES = ['ocabc123' => 'sessionid42', 'oc_sessionPassphrase' => 'p', 'nc_sameSiteCookiestrict' => 'true', 'evil' => 'x'];

	private FakeRequest $request;
	private FakeClientService $http;
	private FakeAppConfig $appConfig;
	private FakeTime $time;
	private FakeConfig $config;
	private FakeCrypto $crypto;

	protected function setUp(): void {
		// The client tries to choose a user in a header too: never read.
		$this->request = new FakeRequest(['requesttoken' => 'tok', 'Content-Type' => 'application/json', 'X-Tamebi-Uid' => 'mallory'], [], self::REQUEST_ID);
		$this->signIn(new FakeUser('alice', 'Alice Martín'), new FakeRawRequest('{"id":"c1","message":{"role":"user","parts":[{"type":"text","text":"Où est le rapport ?"}]}}', self::COOKIES));
		$this->http = (new FakeOidc('ocabc123'))->service();
		$this->appConfig = FakeAppConfig::complete();
		$this->time = new FakeTime(1767225600);
		$this->config = new FakeConfig(['alice/core/timezone' => 'Europe/Paris', 'alice/core/lang' => 'pt_BR']);
		$this->crypto = new FakeCrypto();
	}

	private function controller(string $orchestratorUrl = 'http://orchestrator.test:9100'): ChatController {
		$this->appConfig->values['orchestrator_url'] = $orchestratorUrl;
		$settings = new Settings($this->appConfig);
		$logger = new FakeLogger();
		$renewer = new TokenRenewer($this->http, new FakeSession(), $settings, $this->time, $logger);
		$proxy = new OrchestratorProxy($settings, $renewer, new AppPasswordStore($this->config, $this->crypto, $logger), $this->config, $this->time, $this->request, $logger);
		$guard = $this->guard($this->request);
		return new ChatController($this->request, $guard, $this->raw, $proxy);
	}

	private function saveAppPassword(string $uid, string $password): void {
		(new AppPasswordStore($this->config, $this->crypto, new FakeLogger()))->save($uid, $password);
	}

	/** The method the relay would send the forwarded request with. */
	private static function upstreamMethod(StreamResponse $response): string {
		$options = $response->curlOptions(new \OCA\Tamebi\Http\Relay(new FakeOutput(), static function (string $chunk): void {
		}, 'r'));
		return $options[CURLOPT_CUSTOMREQUEST];
	}

	/**
	 * OrchestratorProxy::headers for one request of Alice's, fixed but for
	 * the language and, when given at all, the app password.
	 */
	private static function headersFor(string $language, ?string ...$appPassword): array {
		return OrchestratorProxy::headers(new Signer(self::SECRET), 'alice', 1767225600, str_repeat('ab', 16), 'POST', '/api/chat', '{}', 'r1', [], 'Alice', 'UTC', $language, ...$appPassword);
	}

	/**
	 * A chat through the orchestrator stand-in (`php -S`, which echoes the
	 * request it got in the stream's first event): what Nextcloud's output
	 * was told, and the stream as it was relayed, chunk by chunk.
	 *
	 * @return array{0: FakeOutput, 1: string}
	 */
	private function chatThroughOrchestrator(): array {
		$server = new OrchestratorServer();
		$chunks = [];
		$output = new FakeOutput();
		try {
			$response = $this->controller($server->url)->chat();
			// Not an arrow function: it would capture a copy of $chunks.
			$response->withSinkFactory(static function () use (&$chunks): \Closure {
				return static function (string $chunk) use (&$chunks): void {
					$chunks[] = $chunk;
				};
			})->callback($output);
		} finally {
			$server->stop();
		}
		return [$output, implode('', $chunks)];
	}

	/** The request the stand-in received, from the stream's first event; header names in lower case. */
	private static function received(string $stream): array {
		$received = json_decode(substr(explode("\n\n", $stream)[0], strlen('data: ')), true)['received'];
		$received['headers'] = array_change_key_case($received['headers'], CASE_LOWER);
		return $received;
	}

	public function testABodyNamingAUidIs400WithTheRequestIdAndNothingIsForwarded(): void {
		$this->raw->bodyBytes = '{"id":"c1","message":{"metadata":{"uid":"bob"}}}';
		$this->http = FakeClientService::unused();
		$response = $this->controller()->chat();
		self::assertEnvelope($response, 400, 'The request names a user; the assistant acts only for the signed-in user. Reload the page and try again.');
		self::assertNotInstanceOf(StreamResponse::class, $response);
	}

	public function testTheForwardedRequestIsSignedForTheSessionUserOverTheExactBody(): void {
		$response = $this->controller()->chat();
		self::assertInstanceOf(StreamResponse::class, $response);
		self::assertSame('http://orchestrator.test:9100/api/chat', $response->upstreamUrl());
		self::assertSame($this->raw->bodyBytes, $response->upstreamBody(), 'forwarded byte for byte');
		$headers = $response->upstreamHeaders();
		self::assertSame('alice', $headers['X-Tamebi-Uid']);
		self::assertSame('1767225600', $headers['X-Tamebi-Timestamp']);
		$nonce = $headers['X-Tamebi-Nonce'];
		self::assertMatchesRegularExpression('/\A[0-9a-f]{32}\z/', $nonce);
		self::assertSame(hash_hmac('sha256', "alice\n1767225600\n$nonce\nPOST\n/api/chat\n" . hash('sha256', $this->raw->bodyBytes), self::SECRET), $headers['X-Tamebi-Signature']);
		self::assertSame((new Signer(self::SECRET))->signature('alice', '1767225600', $nonce, 'POST', '/api/chat', $this->raw->bodyBytes), $headers['X-Tamebi-Signature']);
		self::assertSame('Z9x-req.42', $headers['X-Request-Id']);
		self::assertSame('Alice%20Mart%C3%ADn', $headers['X-Tamebi-Display-Name']);
		self::assertSame('Europe/Paris', $headers['X-Tamebi-Time-Zone']);
		self::assertSame('application/json', $headers['Content-Type']);
	}

	public function testOneTokenHeaderPerAudienceThatHasAToken(): void {
		$this->appConfig->values['client_secret_mcp_mail'] = '';
		$headers = $this->controller()->chat()->upstreamHeaders();
		$tokenHeaders = array_filter($headers, fn ($name) => str_starts_with($name, 'X-Tamebi-Token-'), ARRAY_FILTER_USE_KEY);
		self::assertSame([
			'X-Tamebi-Token-Mcp-Nextcloud' => 'jwt-client-mcp-nextcloud-1',
			'X-Tamebi-Token-Nextcloud' => 'jwt-client-nextcloud-2',
		], $tokenHeaders);
		// The loopback carried only the session cookies.
		foreach ($this->http->calls as $call) {
			self::assertStringNotContainsString('evil', json_encode($call['options']));
		}
	}

	public function testNoTokenAtAllStillChats(): void {
		$this->raw->cookieJar = [];
		$headers = $this->controller()->chat()->upstreamHeaders();
		self::assertSame([], array_filter(array_keys($headers), fn ($name) => str_starts_with($name, 'X-Tamebi-Token-')));
		self::assertSame('alice', $headers['X-Tamebi-Uid']);
	}

	public function testNoAppPasswordHeaderWhenTheUserSavedNone(): void {
		$headers = $this->controller()->chat()->upstreamHeaders();
		self::assertArrayNotHasKey('X-Tamebi-App-Password', $headers);
	}

	public function testASavedAppPasswordRidesAlongOnEveryRoute(): void {
		$this->saveAppPassword('alice', 'Xk3pQ-7rTzw-Lm2Nb-Vc8Hd-Ej4Fs');
		// Bob's is not Alice's: only the session user's is read.
		$this->saveAppPassword('bob', 'bobs-own-app-password');
		$this->raw->bodyBytes = '';
		$controller = $this->controller();
		foreach ([['chat', []], ['conversations', []], ['conversation', ['c1']], ['deleteConversation', ['c1']], ['memory', []], ['deleteMemory', ['7']]] as [$method, $arguments]) {
			$headers = $controller->$method(...$arguments)->upstreamHeaders();
			self::assertSame('Xk3pQ-7rTzw-Lm2Nb-Vc8Hd-Ej4Fs', $headers['X-Tamebi-App-Password'], $method);
			self::assertSame('alice', $headers['X-Tamebi-Uid'], $method);
		}
	}

	public function testAnAppPasswordThatNoLongerDecryptsIsLeftOutAndTheChatGoesOn(): void {
		$this->config->setUserValue('alice', 'tamebi', 'app_password', 'from-another-instance-secret');
		$headers = $this->controller()->chat()->upstreamHeaders();
		self::assertArrayNotHasKey('X-Tamebi-App-Password', $headers);
		self::assertSame('alice', $headers['X-Tamebi-Uid']);
	}

	public function testTheHeadersFunctionAddsTheAppPasswordOnlyWhenGiven(): void {
		$without = self::headersFor('fr');
		self::assertArrayNotHasKey('X-Tamebi-App-Password', $without);
		self::assertSame($without, self::headersFor('fr', null));
		$with = self::headersFor('fr', 'Xk3pQ-7rTzw');
		self::assertSame('Xk3pQ-7rTzw', $with['X-Tamebi-App-Password']);
		self::assertSame(str_repeat('a', 256), self::headersFor('fr', str_repeat('a', 256))['X-Tamebi-App-Password']);
		// Not part of the signature: the rest is the same, byte for byte.
		unset($with['X-Tamebi-App-Password']);
		self::assertSame($without, $with);
		// A value that could break the header is never sent.
		foreach (["a\r\nX-Tamebi-Uid: bob", '', ' padded ', "caf\u{e9}", str_repeat('a', 257)] as $unsafe) {
			self::assertArrayNotHasKey('X-Tamebi-App-Password', self::headersFor('fr', $unsafe));
		}
	}

	public function testTheLanguageIsSentOnlyAsAShortTag(): void {
		foreach (['fr', 'de_DE', 'pt-BR', 'zh-Hans-CN', 'es-419'] as $tag) {
			self::assertSame($tag, self::headersFor($tag)['X-Tamebi-Language'], $tag);
		}
		foreach (['', 'f', 'fren', 'sr@latin', "fr\r\nX-Tamebi-Uid: bob", 'fr FR', 'en-abcdefghi', 'de-', "d\u{e9}"] as $unsafe) {
			self::assertArrayNotHasKey('X-Tamebi-Language', self::headersFor($unsafe), $unsafe);
		}
		// Not part of the signature.
		$with = self::headersFor('fr');
		unset($with['X-Tamebi-Language']);
		self::assertSame(self::headersFor(''), $with);
	}

	public function testAUserWithoutALanguageSettingSendsNone(): void {
		unset($this->config->userValues['alice/core/lang']);
		self::assertArrayNotHasKey('X-Tamebi-Language', $this->controller()->chat()->upstreamHeaders());
	}

	public function testAnEndedSessionIs401WithTheEnvelopeAndNothingIsRead(): void {
		$this->userSession->user = null;
		$response = $this->controller()->chat();
		self::assertEnvelope($response, 401, 'Your Nextcloud session has ended. Reload the page to sign in again.');
		self::assertSame(0, $this->raw->bodyReads);
	}

	public function testAFailedCsrfCheckIsNextcloudsOwn412(): void {
		$this->request->csrfPasses = false;
		foreach (['chat', 'conversations', 'memory'] as $method) {
			$response = $this->controller()->$method();
			self::assertCsrfRefusal($response);
		}
		self::assertSame(0, $this->raw->bodyReads);
	}

	public function testAUserTheAppIsNotEnabledForIs403(): void {
		$this->appManager->enabled = false;
		self::assertEnvelope($this->controller()->chat(), 403, 'The assistant is not enabled for your account. Ask your administrator.');
	}

	public function testABodyOver4MiBIs413(): void {
		$this->raw->bodyBytes = str_repeat('a', 4 * 1024 * 1024 + 1);
		self::assertEnvelope($this->controller()->chat(), 413, 'The request is too large. Shorten it and try again.');
		$this->raw->bodyBytes = '"' . str_repeat('a', 4 * 1024 * 1024 - 2) . '"';
		self::assertInstanceOf(StreamResponse::class, $this->controller()->chat());
	}

	public function testWithoutTheOrchestratorOrAFullSecretThereIsNoChat(): void {
		$this->appConfig->values['shared_secret'] = str_repeat('s', 31);
		self::assertEnvelope($this->controller()->chat(), 503, 'The assistant is not set up on this Nextcloud yet. Ask your administrator to finish its setup.');
		$this->appConfig->values['shared_secret'] = self::SECRET;
		self::assertEnvelope($this->controller('')->chat(), 503, 'The assistant is not set up on this Nextcloud yet. Ask your administrator to finish its setup.');
	}

	public function testAFactTheUserAddsIsForwardedSignedOverItsExactBody(): void {
		$this->raw->bodyBytes = '{"text":"Je suis en congé en août"}';
		$response = $this->controller()->addMemory();
		self::assertInstanceOf(StreamResponse::class, $response);
		self::assertSame('http://orchestrator.test:9100/api/memory', $response->upstreamUrl());
		self::assertSame($this->raw->bodyBytes, $response->upstreamBody());
		self::assertSame('POST', self::upstreamMethod($response));
		$headers = $response->upstreamHeaders();
		self::assertSame('alice', $headers['X-Tamebi-Uid']);
		self::assertSame((new Signer(self::SECRET))->signature('alice', $headers['X-Tamebi-Timestamp'], $headers['X-Tamebi-Nonce'], 'POST', '/api/memory', $this->raw->bodyBytes), $headers['X-Tamebi-Signature']);
		// The body cannot choose whose fact it is.
		$this->raw->bodyBytes = '{"text":"x","uid":"bob"}';
		self::assertEnvelope($this->controller()->addMemory(), 400, 'The request names a user; the assistant acts only for the signed-in user. Reload the page and try again.');
		// Nor can an ended session add one.
		$this->userSession->user = null;
		self::assertEnvelope($this->controller()->addMemory(), 401, 'Your Nextcloud session has ended. Reload the page to sign in again.');
	}

	public function testEachRouteGoesToTheSameRouteOfTheOrchestrator(): void {
		$this->raw->bodyBytes = '';
		$controller = $this->controller();
		$cases = [
			['conversations', [], 'GET', '/api/conversations'],
			['conversation', ['c 1/x'], 'GET', '/api/conversations/c%201%2Fx'],
			['deleteConversation', ['c1'], 'DELETE', '/api/conversations/c1'],
			['memory', [], 'GET', '/api/memory'],
			['deleteMemory', ['17'], 'DELETE', '/api/memory/17'],
		];
		foreach ($cases as [$method, $arguments, $verb, $path]) {
			$response = $controller->$method(...$arguments);
			self::assertInstanceOf(StreamResponse::class, $response);
			self::assertSame('http://orchestrator.test:9100' . $path, $response->upstreamUrl());
			self::assertSame($verb, self::upstreamMethod($response));
			// An empty body is signed as one: sha256 of nothing.
			$headers = $response->upstreamHeaders();
			self::assertSame((new Signer(self::SECRET))->signature('alice', $headers['X-Tamebi-Timestamp'], $headers['X-Tamebi-Nonce'], $verb, $path, ''), $headers['X-Tamebi-Signature']);
		}
	}

	public function testAUidNextcloudWouldRefuseIsNotSigned(): void {
		$this->userSession->user = new FakeUser('a/b');
		self::assertEnvelope($this->controller()->chat(), 403, 'Your account name cannot be used with the assistant. Ask your administrator.');
	}

	public function testEndToEndTheOrchestratorReceivesWhatWasSignedAndTheStreamComesBack(): void {
		[$output, $stream] = $this->chatThroughOrchestrator();
		self::assertSame(200, $output->code);
		self::assertStringEndsWith("data: [DONE]\n\n", $stream);
		$received = self::received($stream);
		$headers = $received['headers'];
		self::assertSame('POST', $received['method']);
		self::assertSame($this->raw->bodyBytes, $received['body']);
		self::assertSame('alice', $headers['x-tamebi-uid']);
		self::assertSame(
			(new Signer(self::SECRET))->signature('alice', $headers['x-tamebi-timestamp'], $headers['x-tamebi-nonce'], $received['method'], $received['path'], $received['body']),
			$headers['x-tamebi-signature'],
		);
		self::assertSame('Z9x-req.42', $headers['x-request-id']);
		self::assertSame('jwt-client-mcp-nextcloud-1', $headers['x-tamebi-token-mcp-nextcloud']);
		self::assertSame('jwt-client-mcp-mail-2', $headers['x-tamebi-token-mcp-mail']);
		self::assertSame('jwt-client-nextcloud-3', $headers['x-tamebi-token-nextcloud']);
		self::assertSame('pt_BR', $headers['x-tamebi-language'], "the user's core/lang setting");
		// Nothing of the browser's rides along.
		self::assertArrayNotHasKey('cookie', $headers);
		self::assertArrayNotHasKey('requesttoken', $headers);
		self::assertArrayNotHasKey('authorization', $headers);
		self::assertArrayNotHasKey('x-tamebi-app-password', $headers);
	}

	public function testEndToEndTheSavedAppPasswordReachesTheOrchestrator(): void {
		$this->saveAppPassword('alice', 'Xk3pQ-7rTzw-Lm2Nb-Vc8Hd-Ej4Fs');
		$headers = self::received($this->chatThroughOrchestrator()[1])['headers'];
		self::assertSame('Xk3pQ-7rTzw-Lm2Nb-Vc8Hd-Ej4Fs', $headers['x-tamebi-app-password']);
		self::assertSame('alice', $headers['x-tamebi-uid']);
	}
}
