<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

/** docs/vectors/identity.json, the vectors the orchestrator's Rust tests run too. */
final class Vectors {
	public static function load(): array {
		$path = dirname(__DIR__, 3) . '/docs/vectors/identity.json';
		$vectors = json_decode((string)file_get_contents($path), true, 16, JSON_THROW_ON_ERROR);
		assert(is_array($vectors));
		return $vectors;
	}
}
