<?php

declare(strict_types=1);

namespace OCA\Tamebi\Service;

use OCP\AppFramework\Http\JSONResponse;
use OCP\IRequest;

/**
 * The error envelope of every error this app makes:
 * `{"error": {"message", "requestId"}}` with Nextcloud's own request id,
 * the one in nextcloud.log. The page shows the message only because the
 * request id is there; so a message says what happened and what to do,
 * never a hostname, a stack trace or an upstream body.
 */
final class Envelope {
	public const SESSION_ENDED = 'Your Nextcloud session has ended. Reload the page to sign in again.';
	public const BODY_NAMES_UID = 'The request names a user; the assistant acts only for the signed-in user. Reload the page and try again.';
	public const ORCHESTRATOR_UNREACHABLE = 'The assistant is not reachable right now. Try again in a moment.';
	public const SEND_NEEDS_CLICK = 'Sending or saving mail needs your click in the chat page.';
	public const NOT_CONFIGURED = 'The assistant is not set up on this Nextcloud yet. Ask your administrator to finish its setup.';
	public const BODY_TOO_LARGE = 'The request is too large. Shorten it and try again.';
	public const NOT_ENABLED = 'The assistant is not enabled for your account. Ask your administrator.';
	public const APP_PASSWORD_NOT_JSON = 'Send a JSON object with your app password in "appPassword", then try again.';
	public const APP_PASSWORD_NOT_YOURS = 'That is not an app password of your account. Create one under Settings → Security → Devices & sessions, then paste it here.';

	/** @return array{error: array{message: string, requestId: string}} */
	public static function data(string $message, string $requestId): array {
		return ['error' => ['message' => $message, 'requestId' => $requestId]];
	}

	/** The envelope as bytes, for a response that writes its own body. */
	public static function json(string $message, string $requestId): string {
		return json_encode(self::data($message, $requestId), JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
	}

	public static function response(int $status, string $message, IRequest $request): JSONResponse {
		return new JSONResponse(self::data($message, $request->getId()), $status);
	}

	/**
	 * The envelope with a machine-readable `code` beside the message, for
	 * an answer a client acts on rather than shows (`mail_unavailable`).
	 */
	public static function coded(int $status, string $code, string $message, IRequest $request): JSONResponse {
		$data = self::data($message, $request->getId());
		$data['error']['code'] = $code;
		return new JSONResponse($data, $status);
	}
}
