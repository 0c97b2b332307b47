<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCA\Tamebi\Controller\AppPasswordController;
use OCA\Tamebi\Service\AppPasswordCheck;
use OCA\Tamebi\Service\AppPasswordStore;
use OCA\Tamebi\Service\Settings;
use OCA\Tamebi\Tests\Doubles\FakeAppConfig;
use OCA\Tamebi\Tests\Doubles\FakeClientService;
use OCA\Tamebi\Tests\Doubles\FakeConfig;
use OCA\Tamebi\Tests\Doubles\FakeCrypto;
use OCA\Tamebi\Tests\Doubles\FakeHttpResponse;
use OCA\Tamebi\Tests\Doubles\FakeLogger;
use OCA\Tamebi\Tests\Doubles\FakeRawRequest;
use OCA\Tamebi\Tests\Doubles\FakeRequest;
use OCA\Tamebi\Tests\Doubles\FakeUser;
use OCP\AppFramework\Http\JSONResponse;
use OCP\Http\Client\IResponse;
use PHPUnit\Framework\TestCase;

final class AppPasswordControllerTest extends TestCase {
	use GuardedCase;

	private const REQUEST_ID = 'Ap9-req.1';
	private const ALICES = 'Xk3pQ-7rTzw-Lm2Nb-Vc8Hd-Ej4Fs';
	private const BOBS = 'Bq9sW-2mPxr-Tn6Ka-Hd3Lf-Zv7Gc';
	private const NOT_JSON = 'Send a JSON object with your app password in "appPassword", then try again.';
	private const NOT_YOURS = 'That is not an app password of your account. Create one under Settings → Security → Devices & sessions, then paste it here.';

	private FakeRequest $request;
	private FakeConfig $config;
	private FakeCrypto $crypto;
	private FakeLogger $logger;
	private FakeClientService $http;

	protected function setUp(): void {
		$this->request = new FakeRequest(['requesttoken' => 'tok', 'Content-Type' => 'application/json'], [], self::REQUEST_ID, true, 'PUT');
		$this->signIn(new FakeUser('alice', 'Alice'), new FakeRawRequest(json_encode(['appPassword' => self::ALICES])));
		$this->config = new FakeConfig();
		$this->crypto = new FakeCrypto();
		$this->logger = new FakeLogger();
		// Nextcloud's `cloud/user` on the loopback: each user's app password logs that user in.
		$this->http = new FakeClientService(static function (string $method, string $uri, array $options): IResponse {
			$accepted = ['Basic ' . base64_encode('alice:' . self::ALICES) => 'alice', 'Basic ' . base64_encode('bob:' . self::BOBS) => 'bob'];
			$uid = $accepted[$options['headers']['Authorization'] ?? ''] ?? null;
			if ($method !== 'GET' || !str_ends_with($uri, '/ocs/v2.php/cloud/user?format=json') || $uid === null) {
				return new FakeHttpResponse(401, ['Content-Type' => 'application/json'], '{"ocs":{"meta":{"status":"failure","statuscode":997},"data":[]}}');
			}
			return new FakeHttpResponse(200, ['Content-Type' => 'application/json'], json_encode(['ocs' => ['meta' => ['status' => 'ok'], 'data' => ['id' => $uid]]]));
		});
	}

	private function store(): AppPasswordStore {
		return new AppPasswordStore($this->config, $this->crypto, $this->logger);
	}

	private function controller(): AppPasswordController {
		$guard = $this->guard($this->request);
		$check = new AppPasswordCheck($this->http, new Settings(FakeAppConfig::complete()), $this->logger);
		return new AppPasswordController($this->request, $guard, $this->raw, $this->store(), $check);
	}

	public function testStatusSaysWhetherOneIsSavedAndNeverWhichOne(): void {
		$response = $this->controller()->status();
		self::assertInstanceOf(JSONResponse::class, $response);
		self::assertSame(200, $response->getStatus());
		self::assertSame(['set' => false], $response->getData());

		$this->store()->save('alice', self::ALICES);
		$response = $this->controller()->status();
		self::assertSame(['set' => true], $response->getData());
		self::assertStringNotContainsString(self::ALICES, $response->render());
	}

	public function testStatusIsPerUser(): void {
		$this->store()->save('bob', self::BOBS);
		self::assertSame(['set' => false], $this->controller()->status()->getData());
	}

	public function testSavingTheUsersOwnIs204AndStoredEncrypted(): void {
		$response = $this->controller()->save();
		self::assertSame(204, $response->getStatus());
		self::assertNotInstanceOf(JSONResponse::class, $response);
		self::assertSame('', $response->render());
		$stored = $this->config->getUserValue('alice', 'tamebi', 'app_password');
		self::assertNotSame('', $stored);
		self::assertStringNotContainsString(self::ALICES, $stored, 'never stored in the clear');
		self::assertSame(self::ALICES, $this->crypto->decrypt($stored));
		self::assertSame(self::ALICES, $this->store()->get('alice'));
		// Checked once, as Alice, with her password.
		self::assertCount(1, $this->http->calls);
		self::assertSame('Basic ' . base64_encode('alice:' . self::ALICES), $this->http->calls[0]['options']['headers']['Authorization']);
		self::assertSame(['set' => true], $this->controller()->status()->getData());
		self::assertStringNotContainsString(self::ALICES, $this->logger->everything());
	}

	public function testSavingAgainReplacesTheOldOne(): void {
		$this->store()->save('alice', 'an-older-one');
		self::assertSame(204, $this->controller()->save()->getStatus());
		self::assertSame(self::ALICES, $this->store()->get('alice'));
	}

	public function testABodyThatIsNotAnAppPasswordObjectIs400WithTheSentence(): void {
		$bodies = ['', 'not json', '"' . self::ALICES . '"', '[]', '{}', '{"appPassword":""}', '{"appPassword":"   "}', '{"appPassword":42}',
			'{"appPassword":null}', '{"appPassword":["x"]}', '{"password":"' . self::ALICES . '"}', '[' . json_encode(self::ALICES) . ']'];
		foreach ($bodies as $body) {
			$this->raw->bodyBytes = $body;
			self::assertEnvelope($this->controller()->save(), 400, self::NOT_JSON);
		}
		self::assertSame([], $this->http->calls, 'nothing checked');
		self::assertSame([], $this->config->userValues, 'nothing stored');
	}

	public function testAPasswordThatIsNotTheUsersIs400WithTheSentenceAndNothingIsStored(): void {
		foreach (['wrong-password', self::BOBS] as $password) {
			$this->raw->bodyBytes = json_encode(['appPassword' => $password]);
			self::assertEnvelope($this->controller()->save(), 400, self::NOT_YOURS);
		}
		self::assertCount(2, $this->http->calls);
		self::assertSame([], $this->config->userValues);
		self::assertStringNotContainsString(self::BOBS, $this->logger->everything());
	}

	public function testARefusedPasswordLeavesTheSavedOneAlone(): void {
		$this->store()->save('alice', self::ALICES);
		$this->raw->bodyBytes = '{"appPassword":"wrong-password"}';
		self::assertEnvelope($this->controller()->save(), 400, self::NOT_YOURS);
		self::assertSame(self::ALICES, $this->store()->get('alice'));
	}

	public function testAValueThatCannotBeAnAppPasswordIsRefusedWithoutAsking(): void {
		foreach ([self::ALICES . "\r\nX-Tamebi-Uid: bob", ' ' . self::ALICES, self::ALICES . "\n", "caf\u{e9}-password", "tab\there", str_repeat('a', 257)] as $password) {
			$this->raw->bodyBytes = json_encode(['appPassword' => $password]);
			self::assertEnvelope($this->controller()->save(), 400, self::NOT_YOURS);
		}
		self::assertSame([], $this->http->calls);
		self::assertSame([], $this->config->userValues);
		// 256 is still one (checked, then refused here as not Alice's).
		$this->raw->bodyBytes = json_encode(['appPassword' => str_repeat('a', 256)]);
		self::assertEnvelope($this->controller()->save(), 400, self::NOT_YOURS);
		self::assertCount(1, $this->http->calls);
	}

	public function testWhenTheCheckCannotRunThePasswordIsRefused(): void {
		$this->http = new FakeClientService(static function (): IResponse {
			throw new \RuntimeException('connection refused');
		});
		self::assertEnvelope($this->controller()->save(), 400, self::NOT_YOURS);
		self::assertSame([], $this->config->userValues);
	}

	public function testABodyOver4MiBIs413(): void {
		$this->raw->bodyBytes = str_repeat(' ', 4 * 1024 * 1024 + 1);
		self::assertEnvelope($this->controller()->save(), 413, 'The request is too large. Shorten it and try again.');
	}

	public function testRemoveIs204WhetherOrNotOneWasSaved(): void {
		$this->store()->save('alice', self::ALICES);
		$this->store()->save('bob', self::BOBS);
		$response = $this->controller()->remove();
		self::assertSame(204, $response->getStatus());
		self::assertNull($this->store()->get('alice'));
		self::assertSame(self::BOBS, $this->store()->get('bob'), "only the user's own");
		self::assertSame(204, $this->controller()->remove()->getStatus());
		self::assertSame(['set' => false], $this->controller()->status()->getData());
	}

	public function testWithoutASessionEachRouteIsTheGuardsEnvelopeAndNothingHappens(): void {
		$this->store()->save('alice', self::ALICES);
		$this->userSession->user = null;
		foreach (['status', 'save', 'remove'] as $method) {
			self::assertEnvelope($this->controller()->$method(), 401, 'Your Nextcloud session has ended. Reload the page to sign in again.');
		}
		self::assertSame(0, $this->raw->bodyReads);
		self::assertSame([], $this->http->calls);
		self::assertSame(self::ALICES, $this->store()->get('alice'));
	}

	public function testAFailedCsrfCheckIsNextcloudsOwn412OnEachRoute(): void {
		$this->store()->save('alice', self::ALICES);
		$this->request->csrfPasses = false;
		foreach (['status', 'save', 'remove'] as $method) {
			$response = $this->controller()->$method();
			self::assertCsrfRefusal($response);
		}
		self::assertSame(0, $this->raw->bodyReads);
		self::assertSame(self::ALICES, $this->store()->get('alice'));
	}

	public function testASavedValueThatNoLongerDecryptsReadsAsNoneAndIsLoggedWithoutTheValue(): void {
		$this->config->setUserValue('alice', 'tamebi', 'app_password', 'fake-crypto|00|ff');
		self::assertNull($this->store()->get('alice'));
		self::assertSame(['set' => false], $this->controller()->status()->getData());
		self::assertSame('warning', $this->logger->lines[0][0]);
		self::assertStringNotContainsString('fake-crypto|00|ff', $this->logger->everything());
		// Saving a new one works as usual.
		self::assertSame(204, $this->controller()->save()->getStatus());
		self::assertSame(self::ALICES, $this->store()->get('alice'));
	}

	public function testTheSentencesAreTheContractsWordForWord(): void {
		$contract = file_get_contents(dirname(__DIR__, 3) . '/docs/app-contract.md');
		$flat = preg_replace('/\s+/', ' ', $contract);
		self::assertStringContainsString('**400** *"' . self::NOT_JSON . '"*', $flat);
		self::assertStringContainsString('**400** *"' . self::NOT_YOURS . '"*', $flat);
		self::assertSame(self::NOT_JSON, \OCA\Tamebi\Service\Envelope::APP_PASSWORD_NOT_JSON);
		self::assertSame(self::NOT_YOURS, \OCA\Tamebi\Service\Envelope::APP_PASSWORD_NOT_YOURS);
	}
}
