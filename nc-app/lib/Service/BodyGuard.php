<?php

declare(strict_types=1);

namespace OCA\Tamebi\Service;

/**
 * Whether a request body names a user. A JSON `uid` key at any depth is an
 * attempt to choose who the assistant acts for, so the body is refused
 * (400), not cleaned: the app never rewrites a body it forwards. Pure.
 */
final class BodyGuard {
	/** As deep as PHP's decoder goes by default; deeper is not JSON to us. */
	public const DEPTH_MAX = 512;

	/**
	 * True when the body is JSON with an object key spelled exactly `uid`
	 * (after JSON escapes are decoded) anywhere inside. An empty or non-JSON
	 * body names nobody; the orchestrator refuses a non-JSON body itself.
	 */
	public static function namesUid(string $body): bool {
		if ($body === '') {
			return false;
		}
		try {
			// Arrays, not objects: an object key PHP cannot hold as a
			// property (one starting with NUL) is still a key here.
			$value = json_decode($body, true, self::DEPTH_MAX, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
		} catch (\JsonException) {
			return false;
		}
		return self::hasUidKey($value);
	}

	/** A JSON list decodes to integer keys, so only an object yields `uid`. */
	private static function hasUidKey(mixed $value): bool {
		if (!is_array($value)) {
			return false;
		}
		foreach ($value as $key => $child) {
			if ($key === 'uid' || self::hasUidKey($child)) {
				return true;
			}
		}
		return false;
	}
}
