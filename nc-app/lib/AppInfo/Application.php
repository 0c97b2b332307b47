<?php

declare(strict_types=1);

namespace OCA\Tamebi\AppInfo;

use OCP\AppFramework\App;
use OCP\AppFramework\Bootstrap\IBootContext;
use OCP\AppFramework\Bootstrap\IBootstrap;
use OCP\AppFramework\Bootstrap\IRegistrationContext;

/**
 * The Tamebi app: the one component that knows who the user is. It reads
 * the uid from the Nextcloud session, signs it, streams the chat through
 * to the orchestrator, renews the user's tokens, serves the chat page and
 * bridges mail (docs/app-contract.md). Every class is autowired; nothing
 * needs registering.
 */
class Application extends App implements IBootstrap {
	public const APP_ID = 'tamebi';

	public function __construct(array $urlParams = []) {
		parent::__construct(self::APP_ID, $urlParams);
	}

	public function register(IRegistrationContext $context): void {
	}

	public function boot(IBootContext $context): void {
	}
}
