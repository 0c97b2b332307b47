<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCA\Tamebi\Http\Guard;
use OCA\Tamebi\Tests\Doubles\FakeAppManager;
use OCA\Tamebi\Tests\Doubles\FakeRawRequest;
use OCA\Tamebi\Tests\Doubles\FakeRequest;
use OCA\Tamebi\Tests\Doubles\FakeUser;
use OCA\Tamebi\Tests\Doubles\FakeUserSession;
use OCP\AppFramework\Http\JSONResponse;
use OCP\AppFramework\Http\Response;

/**
 * What the guarded controllers' tests share, written once. The set-up the
 * Guard reads: a user signed in (a test signs them out, or in as someone
 * else, through `userSession->user`), the body and cookies the request
 * carries, and the app enabled for that user (`appManager->enabled`). And
 * the refusals it answers with: the app's error envelope carrying the
 * request's id (the using test names it in its REQUEST_ID constant), and
 * Nextcloud's own 412 for a failed CSRF check, word for word.
 */
trait GuardedCase {
	private FakeUserSession $userSession;
	private FakeRawRequest $raw;
	private FakeAppManager $appManager;

	private function signIn(FakeUser $user, FakeRawRequest $raw = new FakeRawRequest()): void {
		$this->userSession = new FakeUserSession($user);
		$this->raw = $raw;
		$this->appManager = new FakeAppManager();
	}

	/** The Guard over `$request` and the signed-in user. */
	private function guard(FakeRequest $request): Guard {
		return new Guard($request, $this->userSession, $this->appManager);
	}

	private static function assertEnvelope(Response $response, int $status, string $message): void {
		self::assertInstanceOf(JSONResponse::class, $response);
		self::assertSame($status, $response->getStatus());
		self::assertSame(['error' => ['message' => $message, 'requestId' => self::REQUEST_ID]], $response->getData());
	}

	private static function assertCsrfRefusal(Response $response): void {
		self::assertSame(412, $response->getStatus());
		self::assertSame(['message' => 'CSRF check failed'], $response->getData());
	}
}
