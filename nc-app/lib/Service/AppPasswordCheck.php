<?php

declare(strict_types=1);

namespace OCA\Tamebi\Service;

use OCP\Http\Client\IClientService;
use Psr\Log\LoggerInterface;

/**
 * Whether a password is one the signed-in user's account accepts: a
 * loopback `GET <internal>/ocs/v2.php/cloud/user?format=json` with Basic
 * `uid:password` and `OCS-APIRequest: true` must answer 200 naming that
 * very uid (docs/app-contract.md, app-password mode). Nextcloud does the
 * checking — app passwords, revocation, `token_auth_enforced` — so the app
 * needs no private API.
 *
 * The password is never logged: not in a message, not in a context.
 */
final class AppPasswordCheck {
	public const PATH = '/ocs/v2.php/cloud/user?format=json';

	public function __construct(
		private IClientService $clientService,
		private Settings $settings,
		private LoggerInterface $logger,
	) {
	}

	public function isTheUsers(string $uid, string $password): bool {
		$internal = $this->settings->internalUrl();
		if ($internal === null) {
			$this->logger->error('tamebi: internal_url is not configured, so an app password cannot be checked');
			return false;
		}
		try {
			$answer = $this->clientService->newClient()->get($internal . self::PATH, Loopback::options([
				'headers' => [
					'Authorization' => 'Basic ' . base64_encode($uid . ':' . $password),
					'OCS-APIRequest' => 'true',
					'Accept' => 'application/json',
				],
			]));
		} catch (\Exception $e) {
			// The class only: an HTTP client's exception message may quote the request.
			$this->logger->warning('tamebi: the app-password check loopback failed', ['uid' => $uid, 'error' => get_class($e)]);
			return false;
		}
		if ($answer->getStatusCode() !== 200) {
			return false;
		}
		$body = json_decode((string)$answer->getBody(), true);
		$id = is_array($body) ? ($body['ocs']['data']['id'] ?? null) : null;
		return is_string($id) && $id === $uid;
	}
}
