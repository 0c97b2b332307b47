<?php

declare(strict_types=1);

namespace OCA\Tamebi\Controller;

use OCA\Tamebi\Http\Guard;
use OCA\Tamebi\Http\RawRequest;
use OCA\Tamebi\Service\Envelope;
use OCA\Tamebi\Service\MailBridge;
use OCA\Tamebi\Service\MailContracts;
use OCA\Tamebi\Service\MailFailure;
use OCP\AppFramework\Http\Attribute\NoAdminRequired;
use OCP\AppFramework\Http\Attribute\NoCSRFRequired;
use OCP\AppFramework\Http\Attribute\PublicPage;
use OCP\AppFramework\Http\JSONResponse;
use OCP\IRequest;
use OCP\IUser;
use Psr\Container\ContainerInterface;

/**
 * The mail routes. search, read and compose answer mcp-mail's
 * Nextcloud-audience bearer (user_oidc logs its `sub` in); preview, send
 * and save answer only the chat page's session, and send and save refuse
 * any request carrying a bearer: sending is the user's click, never a
 * token's.
 */
class MailController extends GuardedController {
	/** A compose body: 100 000 bytes of text, JSON-escaped, with its recipients. */
	public const COMPOSE_BODY_BYTES_MAX = 1024 * 1024;

	public function __construct(
		IRequest $request,
		Guard $guard,
		RawRequest $rawRequest,
		private ContainerInterface $container,
		/** Mail's names MailBridge needs; the tests name a missing one. @var list<string> */
		private array $mailContracts = MailContracts::REQUIRED,
	) {
		parent::__construct($request, $guard, $rawRequest);
	}

	/**
	 * Whether Nextcloud Mail is there, asked by mcp-mail before it lists
	 * its tools: `{"available": true}`, or the `mail_unavailable` 503.
	 */
	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function status(): JSONResponse {
		$user = $this->guard->bearer();
		return $this->forUser($user, fn (): JSONResponse => $this->mailMissing() ?? new JSONResponse(['available' => true]));
	}

	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function search(): JSONResponse {
		$user = $this->guard->bearer();
		return $this->forUser($user, function (IUser $user): JSONResponse {
			$limitText = $this->stringParam('limit');
			if ($limitText !== '' && preg_match('/\A[0-9]{1,3}\z/', $limitText) !== 1) {
				return $this->envelope(400, 'limit: a whole number from 1 to ' . MailBridge::LIMIT_MAX . '.');
			}
			$limit = $limitText === '' ? MailBridge::LIMIT_DEFAULT : (int)$limitText;
			$mailbox = $this->stringParam('mailbox');
			$cursor = $this->stringParam('cursor');
			return $this->answer($user, fn (MailBridge $bridge, string $uid) => $bridge->search(
				$uid,
				$this->stringParam('query'),
				$mailbox === '' ? null : $mailbox,
				$limit,
				$cursor === '' ? null : $cursor,
			));
		});
	}

	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function message(string $id): JSONResponse {
		$user = $this->guard->bearer();
		return $this->forUser($user, function (IUser $user) use ($id): JSONResponse {
			if (preg_match('/\A[1-9][0-9]{0,17}\z/', $id) !== 1) {
				return $this->envelope(404, MailBridge::NOT_FOUND_MESSAGE);
			}
			return $this->answer($user, fn (MailBridge $bridge, string $uid) => $bridge->read($uid, (int)$id));
		});
	}

	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function compose(): JSONResponse {
		$user = $this->guard->bearer();
		$body = $this->bodyFor($user, self::COMPOSE_BODY_BYTES_MAX);
		if ($body instanceof JSONResponse) {
			return $body;
		}
		try {
			$input = json_decode($body, true, 16, JSON_THROW_ON_ERROR);
		} catch (\JsonException) {
			return $this->envelope(400, 'The body must be a JSON object with to, cc, subject and body.');
		}
		return $this->answer($user, fn (MailBridge $bridge, string $uid) => $bridge->compose($uid, $input));
	}

	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function preview(string $id): JSONResponse {
		$user = $this->guard->session();
		return $this->answer($user, fn (MailBridge $bridge, string $uid) => $bridge->preview($uid, $id));
	}

	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function send(string $id): JSONResponse {
		$user = $this->guard->sessionOnly();
		return $this->answer($user, fn (MailBridge $bridge, string $uid) => $bridge->send($uid, $id));
	}

	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function save(string $id): JSONResponse {
		$user = $this->guard->sessionOnly();
		return $this->answer($user, fn (MailBridge $bridge, string $uid) => $bridge->save($uid, $id));
	}

	/** A query parameter as text; `?query[]=…` and the like read as absent. */
	private function stringParam(string $name): string {
		$value = $this->request->getParam($name, '');
		return is_string($value) ? $value : '';
	}

	/**
	 * Mail is optional: without it (disabled, or a contract moved) every
	 * mail route says so with a code mcp-mail acts on, instead of failing
	 * to autowire MailBridge.
	 */
	private function mailMissing(): ?JSONResponse {
		if (MailContracts::missing($this->mailContracts) === []) {
			return null;
		}
		return Envelope::coded(503, MailContracts::UNAVAILABLE_CODE, MailContracts::UNAVAILABLE, $this->request);
	}

	/**
	 * The Guard's verdict, then Mail's presence, then the work for the
	 * user: its array as JSON, or its MailFailure as the envelope.
	 *
	 * @param \Closure(MailBridge, string): array $work given the bridge and the user's uid
	 */
	private function answer(IUser|JSONResponse $verdict, \Closure $work): JSONResponse {
		return $this->forUser($verdict, function (IUser $user) use ($work): JSONResponse {
			$missing = $this->mailMissing();
			if ($missing !== null) {
				return $missing;
			}
			try {
				return new JSONResponse($work($this->container->get(MailBridge::class), $user->getUID()));
			} catch (MailFailure $failure) {
				return $this->envelope($failure->status, $failure->getMessage());
			}
		});
	}
}
