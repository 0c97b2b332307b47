<?php

declare(strict_types=1);

namespace OCA\Tamebi\Controller;

use OCA\Tamebi\Http\Guard;
use OCA\Tamebi\Http\RawRequest;
use OCA\Tamebi\Service\BodyGuard;
use OCA\Tamebi\Service\Envelope;
use OCA\Tamebi\Service\OrchestratorProxy;
use OCP\AppFramework\Http\Attribute\NoAdminRequired;
use OCP\AppFramework\Http\Attribute\NoCSRFRequired;
use OCP\AppFramework\Http\Attribute\PublicPage;
use OCP\AppFramework\Http\JSONResponse;
use OCP\AppFramework\Http\Response;
use OCP\IRequest;

/**
 * The chat proxy and the conversation and memory routes: session + CSRF
 * (checked by Guard, so an ended session gets the envelope), the body
 * read as bytes and refused when it names a uid, then signed and streamed
 * to the same route of the orchestrator.
 */
class ChatController extends GuardedController {
	public function __construct(
		IRequest $request,
		Guard $guard,
		RawRequest $rawRequest,
		private OrchestratorProxy $proxy,
	) {
		parent::__construct($request, $guard, $rawRequest);
	}

	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function chat(): Response {
		return $this->forward('POST', '/api/chat');
	}

	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function conversations(): Response {
		return $this->forward('GET', '/api/conversations');
	}

	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function conversation(string $id): Response {
		return $this->forward('GET', '/api/conversations/' . rawurlencode($id));
	}

	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function deleteConversation(string $id): Response {
		return $this->forward('DELETE', '/api/conversations/' . rawurlencode($id));
	}

	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function memory(): Response {
		return $this->forward('GET', '/api/memory');
	}

	/**
	 * A fact the user adds in the memory panel (`{"text": "..."}`): the only
	 * way a fact is stored as the user's; the orchestrator checks the body.
	 */
	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function addMemory(): Response {
		return $this->forward('POST', '/api/memory');
	}

	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function deleteMemory(string $id): Response {
		return $this->forward('DELETE', '/api/memory/' . rawurlencode($id));
	}

	private function forward(string $method, string $path): Response {
		$user = $this->guard->session();
		$body = $this->bodyFor($user, OrchestratorProxy::BODY_BYTES_MAX);
		if ($body instanceof JSONResponse) {
			return $body;
		}
		if (BodyGuard::namesUid($body)) {
			return $this->envelope(400, Envelope::BODY_NAMES_UID);
		}
		return $this->proxy->forward($user, $method, $path, $body, $this->rawRequest->cookies());
	}
}
