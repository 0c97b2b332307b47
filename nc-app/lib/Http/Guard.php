<?php

declare(strict_types=1);

namespace OCA\Tamebi\Http;

use OCA\Tamebi\AppInfo\Application;
use OCA\Tamebi\Service\Envelope;
use OCP\App\IAppManager;
use OCP\AppFramework\Http\JSONResponse;
use OCP\IRequest;
use OCP\IUser;
use OCP\IUserSession;

/**
 * Who may call a route, checked in the order the contract answers.
 *
 * The API routes are declared `#[PublicPage] #[NoCSRFRequired]` and call
 * one of these first, because Nextcloud's own checks answer an ended
 * session with its own 401 body, where the contract wants the envelope
 * the page can show. The checks are Nextcloud's: the logged-in user from
 * IUserSession, `IRequest::passesCSRFCheck()` (the `requesttoken` header
 * against the session, strict same-site cookie included), and the app
 * being enabled for that user. Two-factor enforcement still applies:
 * Nextcloud's middleware ignores `#[PublicPage]` for it.
 */
final class Guard {
	public function __construct(
		private IRequest $request,
		private IUserSession $userSession,
		private IAppManager $appManager,
	) {
	}

	/** Session + CSRF: the signed-in user, or the answer refusing the request. */
	public function session(): IUser|JSONResponse {
		$user = $this->userSession->getUser();
		if (!$user instanceof IUser) {
			return Envelope::response(401, Envelope::SESSION_ENDED, $this->request);
		}
		if (!$this->request->passesCSRFCheck()) {
			// Nextcloud's own answer to a failed CSRF check, word for word.
			return new JSONResponse(['message' => 'CSRF check failed'], 412);
		}
		return $this->enabled($user);
	}

	/**
	 * Session + CSRF only, for the human click (send, save): a request
	 * carrying a bearer is refused whatever else it carries, so no token —
	 * the model's included — can ever send mail.
	 */
	public function sessionOnly(): IUser|JSONResponse {
		if ($this->carriesBearer()) {
			return Envelope::response(403, Envelope::SEND_NEEDS_CLICK, $this->request);
		}
		return $this->session();
	}

	/**
	 * The Nextcloud-audience bearer of mcp-mail. user_oidc validates the
	 * token and logs its `sub` in for this request (its bearer backend), so
	 * the user arrives through IUserSession like any other; the header is
	 * required too, so a browser's cookies alone never reach these routes.
	 */
	public function bearer(): IUser|JSONResponse {
		if (!$this->carriesBearer()) {
			return Envelope::response(401, 'This route needs a Nextcloud access token (Authorization: Bearer).', $this->request);
		}
		$user = $this->userSession->getUser();
		if (!$user instanceof IUser) {
			return Envelope::response(401, 'The access token was not accepted. Get a new one and try again.', $this->request);
		}
		return $this->enabled($user);
	}

	public function carriesBearer(): bool {
		return preg_match('/\A\s*bearer(\s|\z)/i', $this->request->getHeader('Authorization')) === 1;
	}

	private function enabled(IUser $user): IUser|JSONResponse {
		if (!$this->appManager->isEnabledForUser(Application::APP_ID, $user)) {
			return Envelope::response(403, Envelope::NOT_ENABLED, $this->request);
		}
		return $user;
	}
}
