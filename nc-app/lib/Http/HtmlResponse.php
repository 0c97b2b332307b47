<?php

declare(strict_types=1);

namespace OCA\Tamebi\Http;

use OCP\AppFramework\Http\Response;

/**
 * An MCP App's HTML under its own policy. Nextcloud writes the policy
 * object of every response into Content-Security-Policy (merged with its
 * defaults and a nonce), which would put back the `strict-dynamic` that
 * blocks the app's script; so this response replaces that one header
 * with the exact policy CspBuilder made for the document.
 */
class HtmlResponse extends Response {
	public function __construct(
		private string $html,
		private string $policy,
	) {
		parent::__construct();
	}

	public function getHeaders(): array {
		$headers = parent::getHeaders();
		$headers['Content-Security-Policy'] = $this->policy;
		$headers['Content-Type'] = 'text/html; charset=utf-8';
		$headers['X-Content-Type-Options'] = 'nosniff';
		return $headers;
	}

	public function render(): string {
		return $this->html;
	}
}
