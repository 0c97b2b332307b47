<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCA\Tamebi\Service\Settings;
use OCA\Tamebi\Service\TokenRenewer;
use OCA\Tamebi\Tests\Doubles\FakeAppConfig;
use OCA\Tamebi\Tests\Doubles\FakeClientService;
use OCA\Tamebi\Tests\Doubles\FakeHttpResponse;
use OCA\Tamebi\Tests\Doubles\FakeLogger;
use OCA\Tamebi\Tests\Doubles\FakeOidc;
use OCA\Tamebi\Tests\Doubles\FakeSession;
use OCA\Tamebi\Tests\Doubles\FakeTime;
use PHPUnit\Framework\TestCase;

final class TokenRenewerTest extends TestCase {
	private const BROWSER_COOKIES = [
		'ocabc123' => 'sessionid42',
		'oc_sessionPassphrase' => 'pass+word/with=chars',
		'nc_sameSiteCookielax' => 'true',
		'nc_sameSiteCookiestrict' => 'true',
		'nc_username' => 'alice',
		'evil' => 'tracker',
		'_ga' => 'GA1.2.3',
		'xoc' => 'not a session cookie',
	];

	private FakeSession $session;
	private FakeTime $time;
	private FakeOidc $oidc;
	private FakeClientService $http;

	protected function setUp(): void {
		$this->session = new FakeSession();
		$this->time = new FakeTime(1767225600);
		$this->oidc = new FakeOidc('ocabc123');
		$this->http = $this->oidc->service();
	}

	private function renewer(?FakeAppConfig $config = null, ?FakeClientService $http = null): TokenRenewer {
		return new TokenRenewer($http ?? $this->http, $this->session, new Settings($config ?? FakeAppConfig::complete()), $this->time, new FakeLogger());
	}

	public function testOnlyTheSessionCookiesAndNoBrowserHeaderAreSent(): void {
		$this->renewer()->token('mcp-nextcloud', self::BROWSER_COOKIES);
		$authorize = $this->http->calls[0];
		self::assertSame('GET', $authorize['method']);
		self::assertSame(['Cookie'], array_keys($authorize['options']['headers']));
		$sent = [];
		foreach (explode('; ', $authorize['options']['headers']['Cookie']) as $pair) {
			[$name, $value] = explode('=', $pair, 2);
			$sent[$name] = rawurldecode($value);
		}
		self::assertSame([
			'ocabc123' => 'sessionid42',
			'oc_sessionPassphrase' => 'pass+word/with=chars',
			'nc_sameSiteCookielax' => 'true',
			'nc_sameSiteCookiestrict' => 'true',
			'nc_username' => 'alice',
		], $sent);
		self::assertStringNotContainsString('evil', $authorize['options']['headers']['Cookie']);
		self::assertFalse($authorize['options']['allow_redirects']);
		// The token call carries no cookie at all.
		self::assertArrayNotHasKey('headers', $this->http->calls[1]['options']);
	}

	public function testTheLoopbackRunsTheAuthorizationCodeFlowWithPkceS256(): void {
		$token = $this->renewer()->token('mcp-mail', self::BROWSER_COOKIES);
		self::assertSame('jwt-client-mcp-mail-1', $token);
		[$authorize, $exchange] = $this->http->calls;
		self::assertStringStartsWith('http://nextcloud.internal/index.php/apps/oidc/authorize?', $authorize['uri']);
		parse_str(parse_url($authorize['uri'], PHP_URL_QUERY), $query);
		self::assertSame('code', $query['response_type']);
		self::assertSame('client-mcp-mail', $query['client_id']);
		self::assertSame('http://cloud.test/index.php/apps/tamebi/oauth/callback', $query['redirect_uri']);
		self::assertSame('openid profile', $query['scope']);
		self::assertStringContainsString('scope=openid%20profile', $authorize['uri']);
		self::assertSame('S256', $query['code_challenge_method']);
		self::assertMatchesRegularExpression('/\A[0-9a-f]{32}\z/', $query['state']);

		self::assertSame('POST', $exchange['method']);
		self::assertSame('http://nextcloud.internal/index.php/apps/oidc/token', $exchange['uri']);
		$form = $exchange['options']['form_params'];
		self::assertSame('authorization_code', $form['grant_type']);
		self::assertSame('client-mcp-mail', $form['client_id']);
		self::assertSame('secret-mcp-mail', $form['client_secret']);
		self::assertSame($query['redirect_uri'], $form['redirect_uri']);
		// RFC 7636: 43–128 unreserved characters; challenge = BASE64URL(SHA256(verifier)).
		self::assertMatchesRegularExpression('/\A[A-Za-z0-9\-._~]{43,128}\z/', $form['code_verifier']);
		self::assertSame(rtrim(strtr(base64_encode(hash('sha256', $form['code_verifier'], true)), '+/', '-_'), '='), $query['code_challenge']);
	}

	public function testTheRfc7636ExampleChallenge(): void {
		// RFC 7636 appendix B.
		self::assertSame('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', TokenRenewer::challenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'));
		self::assertNotSame(TokenRenewer::verifier(), TokenRenewer::verifier());
	}

	public function testACachedTokenIsReusedUntil120SecondsBeforeExpiryThenRenewed(): void {
		$renewer = $this->renewer();
		self::assertSame('jwt-client-nextcloud-1', $renewer->token('nextcloud', self::BROWSER_COOKIES));
		self::assertCount(2, $this->http->calls);

		// 900 s lifetime: at +779 s, 121 s remain — reused, no call.
		$this->time->now += 779;
		self::assertSame('jwt-client-nextcloud-1', $renewer->token('nextcloud', self::BROWSER_COOKIES));
		self::assertCount(2, $this->http->calls);

		// At +780 s, 120 s remain — renewed.
		$this->time->now += 1;
		self::assertSame('jwt-client-nextcloud-2', $renewer->token('nextcloud', self::BROWSER_COOKIES));
		self::assertCount(4, $this->http->calls);

		// The new token is what the session holds now, with its own expiry.
		$stored = json_decode($this->session->values['tamebi_token_nextcloud'], true);
		self::assertSame(['token' => 'jwt-client-nextcloud-2', 'expires' => 1767225600 + 780 + 900], $stored);
	}

	public function testEachAudienceHasItsOwnTokenAndClient(): void {
		$tokens = $this->renewer()->tokens(self::BROWSER_COOKIES);
		self::assertSame([
			'mcp-nextcloud' => 'jwt-client-mcp-nextcloud-1',
			'mcp-mail' => 'jwt-client-mcp-mail-2',
			'nextcloud' => 'jwt-client-nextcloud-3',
		], $tokens);
	}

	public function testARedirectToTheLoginPageYieldsNoTokenAndForgetsTheOldOne(): void {
		$renewer = $this->renewer();
		$renewer->token('mcp-nextcloud', self::BROWSER_COOKIES);
		$this->time->now += 800;
		$this->oidc->sessionAlive = false;
		self::assertNull($renewer->token('mcp-nextcloud', self::BROWSER_COOKIES));
		self::assertArrayNotHasKey('tamebi_token_mcp-nextcloud', $this->session->values);
		self::assertSame([], $renewer->tokens(self::BROWSER_COOKIES));
	}

	public function testNoSessionCookieMeansNoCallAndNoToken(): void {
		$renewer = $this->renewer(null, FakeClientService::unused());
		self::assertNull($renewer->token('mcp-nextcloud', ['evil' => 'x']));
	}

	public function testTheSessionIsReleasedBeforeTheLoopbackAndWrittenRightAfter(): void {
		$this->renewer()->token('mcp-nextcloud', self::BROWSER_COOKIES);
		self::assertSame(['close', 'set tamebi_token_mcp-nextcloud', 'close'], $this->session->log);
	}

	public function testAStateMismatchOrAnErrorRedirectIsNoCode(): void {
		$uri = 'http://cloud.test/index.php/apps/tamebi/oauth/callback';
		self::assertSame('abc', TokenRenewer::codeFrom(303, "$uri?code=abc&state=s1", $uri, 's1'));
		self::assertNull(TokenRenewer::codeFrom(303, "$uri?code=abc&state=s2", $uri, 's1'));
		self::assertNull(TokenRenewer::codeFrom(303, "$uri?error=access_denied&state=s1", $uri, 's1'));
		self::assertNull(TokenRenewer::codeFrom(303, "http://evil.test/cb?code=abc&state=s1", $uri, 's1'));
		self::assertNull(TokenRenewer::codeFrom(200, "$uri?code=abc&state=s1", $uri, 's1'));
		self::assertTrue(TokenRenewer::redirectsAway(303, 'http://cloud.test/index.php/login?redirect_url=x', $uri));
		self::assertFalse(TokenRenewer::redirectsAway(303, "$uri?error=access_denied", $uri));
		self::assertFalse(TokenRenewer::redirectsAway(200, '', $uri));
	}

	public function testAnErrorRedirectKeepsTheCachedTokenButASessionLossDoesNot(): void {
		$renewer = $this->renewer();
		$renewer->token('nextcloud', self::BROWSER_COOKIES);
		$this->time->now += 800;
		$refusing = new FakeClientService(fn () => new FakeHttpResponse(303, ['Location' => 'http://cloud.test/index.php/apps/tamebi/oauth/callback?error=invalid_scope']));
		$later = $this->renewer(null, $refusing);
		self::assertSame('jwt-client-nextcloud-1', $later->token('nextcloud', self::BROWSER_COOKIES));
	}

	public function testAFailingTokenEndpointKeepsAStillValidToken(): void {
		$renewer = $this->renewer();
		$renewer->token('mcp-mail', self::BROWSER_COOKIES);
		$this->time->now += 850; // 50 s left: renewal is due
		$failing = new FakeClientService(fn () => new FakeHttpResponse(500));
		$later = $this->renewer(null, $failing);
		self::assertSame('jwt-client-mcp-mail-1', $later->token('mcp-mail', self::BROWSER_COOKIES));
		$this->time->now += 60; // expired
		self::assertNull($later->token('mcp-mail', self::BROWSER_COOKIES));
	}

	public function testAnAudienceWithoutAClientGetsNoToken(): void {
		$config = FakeAppConfig::complete(['client_id_mcp_mail' => '']);
		$tokens = $this->renewer($config)->tokens(self::BROWSER_COOKIES);
		self::assertSame(['mcp-nextcloud', 'nextcloud'], array_keys($tokens));
	}

	public function testTheRenewalMarginIsTwoMinutes(): void {
		self::assertSame(120, TokenRenewer::RENEW_BEFORE_SECONDS);
	}
}
