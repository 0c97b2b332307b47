<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCP\AppFramework\Http\JSONResponse;
use OCP\AppFramework\Http\Response;

/**
 * The refusals the guarded controllers' tests check, written once: the
 * app's error envelope carrying the request's id (the using test names it
 * in its REQUEST_ID constant), and Nextcloud's own 412 for a failed CSRF
 * check, word for word.
 */
trait Refusals {
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
