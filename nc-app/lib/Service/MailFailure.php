<?php

declare(strict_types=1);

namespace OCA\Tamebi\Service;

/**
 * A mail request refused or failed: the status and the sentence the
 * caller (mcp-mail's model, or the user in the page) reads in the envelope.
 */
final class MailFailure extends \RuntimeException {
	public function __construct(
		public readonly int $status,
		string $message,
	) {
		parent::__construct($message);
	}
}
