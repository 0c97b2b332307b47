<?php

declare(strict_types=1);

namespace OCA\Tamebi\Controller;

use OCA\Tamebi\AppInfo\Application;
use OCA\Tamebi\Http\Guard;
use OCA\Tamebi\Http\RawRequest;
use OCA\Tamebi\Service\BodyGuard;
use OCA\Tamebi\Service\Envelope;
use OCA\Tamebi\Service\OrchestratorProxy;
use OCP\AppFramework\Controller;
use OCP\AppFramework\Http\Attribute\NoAdminRequired;
use OCP\AppFramework\Http\Attribute\NoCSRFRequired;
use OCP\AppFramework\Http\Attribute\PublicPage;
use OCP\AppFramework\Http\Response;
use OCP\IRequest;

/**
 * The chat proxy and the conversation and memory routes: session + CSRF
 * (checked by Guard, so an ended session gets the envelope), the body
 * read as bytes and refused when it names a uid, then signed and streamed
 * to the same route of the orchestrator.
 */
class ChatController extends Controller {
	public function __construct(
		IRequest $request,
		private Guard $guard,
		private RawRequest $rawRequest,
		private OrchestratorProxy $proxy,
	) {
		parent::__construct(Application::APP_ID, $request);
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
		if ($user instanceof Response) {
			return $user;
		}
		$body = $this->rawRequest->body(OrchestratorProxy::BODY_BYTES_MAX);
		if ($body === null) {
			return Envelope::response(413, Envelope::BODY_TOO_LARGE, $this->request);
		}
		if (BodyGuard::namesUid($body)) {
			return Envelope::response(400, Envelope::BODY_NAMES_UID, $this->request);
		}
		return $this->proxy->forward($user, $method, $path, $body, $this->rawRequest->cookies());
	}
}
