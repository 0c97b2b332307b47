<?php

declare(strict_types=1);

namespace OCA\Tamebi\Controller;

use OCA\Tamebi\Db\UiStore;
use OCA\Tamebi\Http\Guard;
use OCA\Tamebi\Http\HtmlResponse;
use OCA\Tamebi\Http\RawRequest;
use OCA\Tamebi\Service\CspBuilder;
use OCA\Tamebi\Service\Envelope;
use OCP\AppFramework\Http\Attribute\NoAdminRequired;
use OCP\AppFramework\Http\Attribute\NoCSRFRequired;
use OCP\AppFramework\Http\Attribute\PublicPage;
use OCP\AppFramework\Http\JSONResponse;
use OCP\AppFramework\Http\Response;
use OCP\AppFramework\Utility\ITimeFactory;
use OCP\IRequest;
use OCP\IURLGenerator;
use OCP\IUser;
use OCP\IUserSession;

/**
 * The MCP Apps re-serve. An MCP App's HTML cannot be inlined: a frame on a
 * local scheme inherits Nextcloud's CSP, whose `'strict-dynamic'` nonce
 * rule blocks the app's own script. So the page posts the HTML here and
 * frames a same-origin URL that answers it under a policy built from the
 * resource's own `_meta.ui.csp`.
 */
class UiController extends GuardedController {
	public const HTML_BYTES_MAX = 1024 * 1024;
	/** The HTML JSON-escaped, plus the domain lists. */
	public const BODY_BYTES_MAX = 8 * 1024 * 1024;

	public function __construct(
		IRequest $request,
		Guard $guard,
		RawRequest $rawRequest,
		private IUserSession $userSession,
		private UiStore $store,
		private IURLGenerator $urlGenerator,
		private ITimeFactory $timeFactory,
	) {
		parent::__construct($request, $guard, $rawRequest);
	}

	#[NoAdminRequired]
	#[NoCSRFRequired]
	#[PublicPage]
	public function store(): JSONResponse {
		$user = $this->guard->session();
		$body = $this->bodyFor($user, self::BODY_BYTES_MAX);
		if ($body instanceof JSONResponse) {
			return $body;
		}
		$input = json_decode($body, true, 16);
		$html = is_array($input) ? ($input['html'] ?? null) : null;
		if (!is_string($html) || $html === '') {
			return $this->envelope(400, 'html: the MCP App document is missing.');
		}
		if (strlen($html) > self::HTML_BYTES_MAX) {
			return $this->envelope(400, 'html: at most 1 MiB.');
		}
		$csp = $input['csp'] ?? [];
		if (!is_array($csp)) {
			return $this->envelope(400, 'csp: must be an object with connectDomains and resourceDomains.');
		}
		$connect = $csp['connectDomains'] ?? [];
		$resource = $csp['resourceDomains'] ?? [];
		if (!is_array($connect) || !is_array($resource)) {
			return $this->envelope(400, 'csp: connectDomains and resourceDomains must be lists.');
		}
		try {
			$policy = CspBuilder::policy(array_values($connect), array_values($resource));
		} catch (\InvalidArgumentException $e) {
			return $this->envelope(400, $e->getMessage());
		}
		$id = $this->store->insert($user->getUID(), $html, $policy, $this->timeFactory->getTime());
		return new JSONResponse(['url' => $this->urlGenerator->linkToRoute('tamebi.ui.show', ['id' => $id])]);
	}

	#[NoAdminRequired]
	#[NoCSRFRequired]
	public function show(string $id): Response {
		$user = $this->userSession->getUser();
		if (!$user instanceof IUser) {
			return $this->envelope(401, Envelope::SESSION_ENDED);
		}
		$document = $this->store->find($user->getUID(), $id, $this->timeFactory->getTime());
		if ($document === null) {
			return $this->envelope(404, 'This view has expired. Run the request again to see it.');
		}
		return new HtmlResponse($document['html'], $document['policy']);
	}
}
