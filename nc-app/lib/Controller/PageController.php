<?php

declare(strict_types=1);

namespace OCA\Tamebi\Controller;

use OCA\Tamebi\AppInfo\Application;
use OCP\AppFramework\Controller;
use OCP\AppFramework\Http\Attribute\NoAdminRequired;
use OCP\AppFramework\Http\Attribute\NoCSRFRequired;
use OCP\AppFramework\Http\ContentSecurityPolicy;
use OCP\AppFramework\Http\TemplateResponse;
use OCP\IRequest;
use OCP\Util;

/**
 * `GET /apps/tamebi/`: the chat page, a mount point for the island that
 * `web/` builds (`web/dist/tamebi-main.mjs` and `tamebi-main.css`, copied
 * into this app's `js/` and `css/` by `nc-app/copy-web.sh`; docs/nc-app.md).
 * Nextcloud loads a `.mjs` as an ES module with its CSP nonce. Nextcloud's
 * own session check applies (a visitor without a session is sent to the
 * login page).
 */
class PageController extends Controller {
	public function __construct(IRequest $request) {
		parent::__construct(Application::APP_ID, $request);
	}

	#[NoAdminRequired]
	#[NoCSRFRequired]
	public function index(): TemplateResponse {
		Util::addScript(Application::APP_ID, 'tamebi-main');
		Util::addStyle(Application::APP_ID, 'tamebi-main');
		$response = new TemplateResponse(Application::APP_ID, 'main');
		// MCP Apps are framed from this origin (UiController::show).
		$policy = new ContentSecurityPolicy();
		$policy->addAllowedFrameDomain("'self'");
		$response->setContentSecurityPolicy($policy);
		return $response;
	}
}
