<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCA\Tamebi\Service\BodyGuard;
use PHPUnit\Framework\TestCase;

final class BodyGuardTest extends TestCase {
	public function bodyVectors(): array {
		$cases = [];
		foreach (Vectors::load()['bodies'] as $i => $vector) {
			$cases["#$i " . $vector['body']] = [$vector['body'], $vector['namesUid']];
		}
		return $cases;
	}

	/** @dataProvider bodyVectors */
	public function testEveryBodyVector(string $body, bool $namesUid): void {
		self::assertSame($namesUid, BodyGuard::namesUid($body));
	}

	public function moreBodies(): array {
		return [
			'not JSON names nobody' => ['uid=bob', false],
			'a uid value, not a key' => ['{"name":"uid"}', false],
			'a list holding the string uid' => ['["uid"]', false],
			'deep inside' => [str_repeat('[', 100) . '{"uid":1}' . str_repeat(']', 100), true],
			'beside a key PHP objects cannot hold' => ['{"\u0000x":1,"uid":"bob"}', true],
			'a numeric-looking key' => ['{"0":{"uid":true}}', true],
			'uid key in an approval payload' => ['{"message":{"parts":[{"approval":{"uid":"x"}}]}}', true],
		];
	}

	/** @dataProvider moreBodies */
	public function testMoreBodies(string $body, bool $namesUid): void {
		self::assertSame($namesUid, BodyGuard::namesUid($body));
	}
}
