<?php

declare(strict_types=1);

namespace OCA\Tamebi\Service;

use OCA\Mail\Contracts\IMailManager;
use OCA\Mail\Contracts\IMailSearch;
use OCA\Mail\Contracts\IMailTransmission;
use OCA\Mail\IMAP\IMAPClientFactory;
use OCA\Mail\Send\CopySentMessageHandler;
use OCA\Mail\Service\AccountService;

/**
 * Whether Nextcloud Mail is there for MailBridge: every interface and class
 * of Mail's that it is built on must exist. A disabled Mail app registers
 * no autoloader, and a Mail release that moved a contract lacks it, so
 * both read as missing here, and the mail routes answer 503 with the code
 * `mail_unavailable` (docs/app-contract.md, "Mail") instead of failing to
 * autowire. mcp-mail then lists no tools: the seeds' degradation, the
 * same as an unreachable MCP server.
 */
final class MailContracts {
	public const UNAVAILABLE_CODE = 'mail_unavailable';
	public const UNAVAILABLE = 'Nextcloud Mail is not available on this Nextcloud, so the assistant cannot reach your mail. Ask your administrator.';

	/** What MailBridge's constructor takes from Mail. */
	public const REQUIRED = [
		IMailSearch::class,
		IMailManager::class,
		IMailTransmission::class,
		AccountService::class,
		IMAPClientFactory::class,
		CopySentMessageHandler::class,
	];

	/**
	 * The names in $required that do not exist (without autoloading them
	 * twice: a missing one costs one autoloader lookup per request).
	 *
	 * @param list<string> $required
	 * @return list<string>
	 */
	public static function missing(array $required = self::REQUIRED): array {
		return array_values(array_filter(
			$required,
			fn (string $name) => !interface_exists($name) && !class_exists($name),
		));
	}
}
