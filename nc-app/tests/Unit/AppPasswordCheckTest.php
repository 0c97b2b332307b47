<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCA\Tamebi\Service\AppPasswordCheck;
use OCA\Tamebi\Service\Settings;
use OCA\Tamebi\Tests\Doubles\FakeAppConfig;
use OCA\Tamebi\Tests\Doubles\FakeClientService;
use OCA\Tamebi\Tests\Doubles\FakeHttpResponse;
use OCA\Tamebi\Tests\Doubles\FakeLogger;
use OCP\Http\Client\IResponse;
use PHPUnit\Framework\TestCase;

final class AppPasswordCheckTest extends TestCase {
	private const PASSWORD = 'Xk3pQ-7rTzw-Lm2Nb-Vc8Hd-Ej4Fs';

	private FakeLogger $logger;

	protected function setUp(): void {
		$this->logger = new FakeLogger();
	}

	private function check(FakeClientService $http, ?FakeAppConfig $config = null): AppPasswordCheck {
		return new AppPasswordCheck($http, new Settings($config ?? FakeAppConfig::complete()), $this->logger);
	}

	/** Nextcloud's OCS answer for `cloud/user`, naming `$id`. */
	private static function answering(int $status, ?string $id): FakeClientService {
		return new FakeClientService(static function () use ($status, $id): IResponse {
			$body = $id === null ? '' : json_encode(['ocs' => ['meta' => ['status' => 'ok', 'statuscode' => 200], 'data' => ['id' => $id, 'display-name' => 'Alice']]]);
			return new FakeHttpResponse($status, ['Content-Type' => 'application/json'], $body);
		});
	}

	public function testTheUsersOwnPasswordIsAcceptedWhenNextcloudNamesTheSameUid(): void {
		$http = self::answering(200, 'alice');
		self::assertTrue($this->check($http)->isTheUsers('alice', self::PASSWORD));
	}

	public function testTheLoopbackIsBasicWithOcsApiRequestToTheInternalUrl(): void {
		$http = self::answering(200, 'alice');
		$this->check($http)->isTheUsers('alice', self::PASSWORD);
		self::assertCount(1, $http->calls);
		[$call] = $http->calls;
		self::assertSame('GET', $call['method']);
		self::assertSame('http://nextcloud.internal/ocs/v2.php/cloud/user?format=json', $call['uri']);
		self::assertSame('Basic ' . base64_encode('alice:' . self::PASSWORD), $call['options']['headers']['Authorization']);
		self::assertSame('true', $call['options']['headers']['OCS-APIRequest']);
		// No cookie: the check is the password alone, not the browser's session.
		self::assertArrayNotHasKey('Cookie', $call['options']['headers']);
		self::assertFalse($call['options']['allow_redirects']);
		self::assertFalse($call['options']['http_errors']);
		self::assertTrue($call['options']['nextcloud']['allow_local_address']);
	}

	public function testAnotherUsersPasswordIsRefused(): void {
		self::assertFalse($this->check(self::answering(200, 'bob'))->isTheUsers('alice', self::PASSWORD));
		// Exactly the uid: no case folding, no prefix.
		self::assertFalse($this->check(self::answering(200, 'Alice'))->isTheUsers('alice', self::PASSWORD));
	}

	public function testAnyOtherAnswerIsRefused(): void {
		foreach ([401, 403, 302, 500, 503] as $status) {
			self::assertFalse($this->check(self::answering($status, 'alice'))->isTheUsers('alice', self::PASSWORD), (string)$status);
		}
		self::assertFalse($this->check(self::answering(200, null))->isTheUsers('alice', self::PASSWORD), 'empty body');
		$odd = new FakeClientService(static fn (): IResponse => new FakeHttpResponse(200, [], '{"ocs":{"data":"alice"}}'));
		self::assertFalse($this->check($odd)->isTheUsers('alice', self::PASSWORD), 'data not an object');
		$numeric = new FakeClientService(static fn (): IResponse => new FakeHttpResponse(200, [], '{"ocs":{"data":{"id":42}}}'));
		self::assertFalse($this->check($numeric)->isTheUsers('42', self::PASSWORD), 'id not a string');
	}

	public function testAFailedLoopbackIsRefusedAndLoggedWithoutThePassword(): void {
		$failing = new FakeClientService(static function (string $method, string $uri, array $options): IResponse {
			throw new \RuntimeException('cURL error 7: could not connect, Authorization: ' . $options['headers']['Authorization']);
		});
		self::assertFalse($this->check($failing)->isTheUsers('alice', self::PASSWORD));
		self::assertNotSame([], $this->logger->lines);
		$logged = $this->logger->everything();
		self::assertStringNotContainsString(self::PASSWORD, $logged);
		self::assertStringNotContainsString(base64_encode('alice:' . self::PASSWORD), $logged);
	}

	public function testWithoutTheInternalUrlNothingIsSentAndTheAnswerIsNo(): void {
		$config = FakeAppConfig::complete(['internal_url' => '']);
		self::assertFalse($this->check(FakeClientService::unused(), $config)->isTheUsers('alice', self::PASSWORD));
		self::assertStringNotContainsString(self::PASSWORD, $this->logger->everything());
	}
}
