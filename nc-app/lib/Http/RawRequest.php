<?php

declare(strict_types=1);

namespace OCA\Tamebi\Http;

/**
 * The request as bytes and cookies. The chat proxy forwards the body byte
 * for byte and signs its hash, so it reads php://input itself rather than
 * Nextcloud's decoded parameters; token renewal needs the browser's
 * cookies by name, which IRequest only hands out one at a time. Not final:
 * tests supply both.
 */
class RawRequest {
	/** The body, or null when it is larger than `$bytesMax`. */
	public function body(int $bytesMax): ?string {
		$stream = fopen('php://input', 'rb');
		if ($stream === false) {
			return '';
		}
		$body = stream_get_contents($stream, $bytesMax + 1);
		fclose($stream);
		if ($body === false) {
			return '';
		}
		return strlen($body) > $bytesMax ? null : $body;
	}

	/** @return array<string, string> the cookies as PHP decoded them */
	public function cookies(): array {
		return array_filter($_COOKIE, 'is_string');
	}
}
