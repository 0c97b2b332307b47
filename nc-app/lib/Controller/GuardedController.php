<?php

declare(strict_types=1);

namespace OCA\Tamebi\Controller;

use OCA\Tamebi\AppInfo\Application;
use OCA\Tamebi\Http\Guard;
use OCA\Tamebi\Http\RawRequest;
use OCA\Tamebi\Service\Envelope;
use OCP\AppFramework\Controller;
use OCP\AppFramework\Http\JSONResponse;
use OCP\IRequest;
use OCP\IUser;

/**
 * What the app's API controllers share: the Guard each route asks first
 * who may call, the request body read as bytes up to a bound, and every
 * refusal as the error envelope with this request's id. PageController is
 * not one: Nextcloud's own session check answers for the page.
 */
abstract class GuardedController extends Controller {
	public function __construct(
		IRequest $request,
		protected Guard $guard,
		protected RawRequest $rawRequest,
	) {
		parent::__construct(Application::APP_ID, $request);
	}

	/** The error envelope for this request. */
	protected function envelope(int $status, string $message): JSONResponse {
		return Envelope::response($status, $message, $this->request);
	}

	/**
	 * The body of a request the Guard let through: its bytes, or the
	 * answer refusing the request. The verdict comes first, so a caller
	 * the Guard refused never has a byte of its body read; a body over
	 * `$bytesMax` is the 413 before anything parses it.
	 *
	 * @param IUser|JSONResponse $verdict what the Guard answered
	 */
	protected function bodyFor(IUser|JSONResponse $verdict, int $bytesMax): string|JSONResponse {
		return $this->forUser($verdict, fn (): string|JSONResponse => $this->rawRequest->body($bytesMax) ?? $this->envelope(413, Envelope::BODY_TOO_LARGE));
	}

	/**
	 * The Guard's refusal as it is, or `$work` done for the user it let
	 * through: every route's first step, so none can act before the Guard.
	 *
	 * @template T
	 * @param IUser|JSONResponse $verdict what the Guard answered
	 * @param \Closure(IUser): T $work
	 * @return T|JSONResponse
	 */
	protected function forUser(IUser|JSONResponse $verdict, \Closure $work): mixed {
		return $verdict instanceof IUser ? $work($verdict) : $verdict;
	}
}
