<?php

declare(strict_types=1);

namespace OCA\Tamebi\Service;

/**
 * The Content-Security-Policy an MCP App's HTML is re-served under: the
 * contract's default-deny policy, opened only to the origins the resource
 * declared in `_meta.ui.csp`. Pure.
 */
final class CspBuilder {
	/**
	 * One `http://` or `https://` origin: scheme, host (a DNS name, an IPv4
	 * address or a bracketed IPv6 address), optional port; no path, no
	 * wildcard, nothing CSP would read as a second source or directive.
	 */
	private const ORIGIN = '/\A(https?):\/\/([a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?|\[[0-9a-f:.]{2,45}\])(?::([0-9]{1,5}))?\z/i';

	public static function isOrigin(string $domain): bool {
		if (preg_match(self::ORIGIN, $domain, $match) !== 1) {
			return false;
		}
		return !isset($match[3]) || ((int)$match[3] >= 1 && (int)$match[3] <= 65535);
	}

	/**
	 * The exact policy of docs/app-contract.md. A directive with keywords
	 * and no domain keeps just its keywords; one with neither is `'none'`.
	 *
	 * @param list<string> $connectDomains
	 * @param list<string> $resourceDomains
	 * @throws \InvalidArgumentException naming the first list with a domain that is not an origin
	 */
	public static function policy(array $connectDomains, array $resourceDomains): string {
		$connect = self::origins($connectDomains, 'connectDomains');
		$resource = self::origins($resourceDomains, 'resourceDomains');
		$directives = [
			['default-src', ["'none'"], []],
			['script-src', ["'unsafe-inline'"], $resource],
			['style-src', ["'unsafe-inline'"], $resource],
			['img-src', ['data:'], $resource],
			['font-src', [], $resource],
			['media-src', [], $resource],
			['connect-src', [], $connect],
			['frame-ancestors', ["'self'"], []],
			['base-uri', ["'none'"], []],
			['form-action', ["'none'"], []],
		];
		$parts = [];
		foreach ($directives as [$name, $keywords, $domains]) {
			$sources = array_merge($keywords, $domains);
			$parts[] = $name . ' ' . ($sources === [] ? "'none'" : implode(' ', $sources));
		}
		// The document gets an opaque origin even when a page frames it
		// without the sandbox attribute: its script can run, but cannot
		// read Nextcloud's cookies, storage or request token.
		$parts[] = 'sandbox allow-scripts';
		return implode('; ', $parts);
	}

	/** @return list<string> the origins, in order, each once */
	private static function origins(array $domains, string $field): array {
		$origins = [];
		foreach ($domains as $domain) {
			if (!is_string($domain) || !self::isOrigin($domain)) {
				throw new \InvalidArgumentException("csp.$field: each entry must be an http:// or https:// origin, like https://cdn.example.com");
			}
			if (!in_array($domain, $origins, true)) {
				$origins[] = $domain;
			}
		}
		return $origins;
	}
}
