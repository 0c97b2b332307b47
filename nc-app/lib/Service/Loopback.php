<?php

declare(strict_types=1);

namespace OCA\Tamebi\Service;

/**
 * The options of a request this Nextcloud makes to itself on its internal
 * URL (TokenRenewer's code flow, AppPasswordCheck): that URL is usually a
 * local address, which Nextcloud's HTTP client refuses unless told; a
 * redirect or an error status is an answer the caller reads, so neither is
 * followed or thrown; and the wait is bounded.
 */
final class Loopback {
	public const TIMEOUT_SECONDS = 10;

	/**
	 * @param array<string, mixed> $options the request's own (headers, form parameters), first
	 * @return array<string, mixed>
	 */
	public static function options(array $options): array {
		return $options + [
			'allow_redirects' => false,
			'http_errors' => false,
			'timeout' => self::TIMEOUT_SECONDS,
			'nextcloud' => ['allow_local_address' => true],
		];
	}
}
