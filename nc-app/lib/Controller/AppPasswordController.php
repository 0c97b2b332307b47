<?php

declare(strict_types=1);

namespace OCA\Tamebi\Controller;

use OCA\Tamebi\Http\Guard;
use OCA\Tamebi\Http\RawRequest;
use OCA\Tamebi\Service\AppPasswordCheck;
use OCA\Tamebi\Service\AppPasswordStore;
use OCA\Tamebi\Service\Envelope;
use OCA\Tamebi\Service\OrchestratorProxy;
use OCP\AppFramework\Http;
use OCP\AppFramework\Http\Attribute\NoAdminRequired;
use OCP\AppFramework\Http\Attribute\NoCSRFRequired;
use OCP\AppFramework\Http\Attribute\PublicPage;
use OCP\AppFramework\Http\JSONResponse;
use OCP\AppFramework\Http\Response;
use OCP\IRequest;
use OCP\IUser;

/**
 * `/api/app-password`: app-password mode (docs/app-contract.md). Where
 * Nextcloud refuses the sessions a bearer token creates (its open bug on
 * CalDAV and Deck), the user saves an app password of their own here —
 * created under Settings → Security → Devices & sessions, so it is
 * revocable there — and the chat proxy sends it in `X-Tamebi-App-Password`
 * with every request it signs. It is never sent back: GET says only
 * whether one is saved.
 *
 * Session + CSRF (Guard), like the chat routes: only the user's browser
 * saves or removes it.
 */
class AppPasswordController extends GuardedController {
	public function __construct(
		IRequest $request,
		Guard $guard,
		RawRequest $rawRequest,
		private AppPasswordStore $store,
		private AppPasswordCheck $check,
	) {
		parent::__construct($request, $guard, $rawRequest);
	}

	/** `GET`: `{"set": bool}`. */
	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function status(): Response {
		$user = $this->guard->session();
		return $this->forUser($user, fn (IUser $user): Response => new JSONResponse(['set' => $this->store->has($user->getUID())]));
	}

	/** `PUT` `{"appPassword": "…"}`: checked as the user's, stored encrypted, 204. */
	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function save(): Response {
		$user = $this->guard->session();
		$body = $this->bodyFor($user, OrchestratorProxy::BODY_BYTES_MAX);
		if ($body instanceof JSONResponse) {
			return $body;
		}
		$password = self::passwordFrom($body);
		if ($password === null) {
			return $this->envelope(400, Envelope::APP_PASSWORD_NOT_JSON);
		}
		$uid = $user->getUID();
		// Nextcloud's app passwords are visible ASCII; anything else cannot
		// be one, and could not travel in a header: refused without asking.
		if (!AppPasswordStore::hasTheShape($password) || !$this->check->isTheUsers($uid, $password)) {
			return $this->envelope(400, Envelope::APP_PASSWORD_NOT_YOURS);
		}
		$this->store->save($uid, $password);
		return self::noContent();
	}

	/** `DELETE`: forgets it; 204 whether or not one was saved. */
	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function remove(): Response {
		$user = $this->guard->session();
		return $this->forUser($user, function (IUser $user): Response {
			$this->store->remove($user->getUID());
			return self::noContent();
		});
	}

	private static function noContent(): Response {
		$response = new Response();
		$response->setStatus(Http::STATUS_NO_CONTENT);
		return $response;
	}

	/** The `appPassword` of a JSON object, when it is a string with more than whitespace; else null. */
	public static function passwordFrom(string $body): ?string {
		try {
			$decoded = json_decode($body, true, 8, JSON_THROW_ON_ERROR);
		} catch (\JsonException) {
			return null;
		}
		if (!is_array($decoded) || !is_string($decoded['appPassword'] ?? null) || trim($decoded['appPassword']) === '') {
			return null;
		}
		return $decoded['appPassword'];
	}
}
