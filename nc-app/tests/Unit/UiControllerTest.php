<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCA\Tamebi\Controller\UiController;
use OCA\Tamebi\Db\UiStore;
use OCA\Tamebi\Http\HtmlResponse;
use OCA\Tamebi\Tests\Doubles\FakeRequest;
use OCA\Tamebi\Tests\Doubles\FakeTime;
use OCA\Tamebi\Tests\Doubles\FakeUser;
use OCA\Tamebi\Tests\Doubles\SqliteConnection;
use OCP\AppFramework\Http\JSONResponse;
use OCP\IURLGenerator;
use PHPUnit\Framework\TestCase;

final class UiControllerTest extends TestCase {
	use GuardedCase;

	private const REQUEST_ID = 'req-ui-1';

	private FakeTime $time;
	private UiStore $store;
	private FakeRequest $request;

	protected function setUp(): void {
		$this->signIn(new FakeUser('alice'));
		$this->time = new FakeTime(1767225600);
		$this->store = new UiStore(new SqliteConnection());
		$this->request = new FakeRequest(['requesttoken' => 'tok'], [], self::REQUEST_ID);
	}

	private function controller(): UiController {
		$urls = new class implements IURLGenerator {
			public function linkToRoute(string $routeName, array $arguments = []): string {
				\PHPUnit\Framework\Assert::assertSame('tamebi.ui.show', $routeName);
				return '/index.php/apps/tamebi/ui/' . $arguments['id'];
			}
		};
		return new UiController($this->request, $this->guard($this->request), $this->raw, $this->userSession, $this->store, $urls, $this->time);
	}

	private function post(array $input): JSONResponse {
		$this->raw->bodyBytes = json_encode($input);
		return $this->controller()->store();
	}

	public function testAStoredDocumentIsServedUnderItsOwnPolicy(): void {
		$html = '<!doctype html><script>parent.postMessage("ui/initialize","*")</script>';
		$stored = $this->post(['html' => $html, 'csp' => ['connectDomains' => ['https://api.example.com'], 'resourceDomains' => ['https://cdn.example.com']]]);
		self::assertSame(200, $stored->getStatus());
		$url = $stored->getData()['url'];
		self::assertMatchesRegularExpression('#\A/index\.php/apps/tamebi/ui/[0-9a-f]{32}\z#', $url);

		$served = $this->controller()->show(basename($url));
		self::assertInstanceOf(HtmlResponse::class, $served);
		self::assertSame($html, $served->render());
		$headers = $served->getHeaders();
		self::assertSame('text/html; charset=utf-8', $headers['Content-Type']);
		self::assertSame('nosniff', $headers['X-Content-Type-Options']);
		self::assertSame("default-src 'none'; script-src 'unsafe-inline' https://cdn.example.com; style-src 'unsafe-inline' https://cdn.example.com; img-src data: https://cdn.example.com; font-src https://cdn.example.com; media-src https://cdn.example.com; connect-src https://api.example.com; frame-ancestors 'self'; base-uri 'none'; form-action 'none'; sandbox allow-scripts", $headers['Content-Security-Policy']);
	}

	public function testNoCspMeansDefaultDeny(): void {
		$url = $this->post(['html' => '<p>hi</p>'])->getData()['url'];
		$policy = $this->controller()->show(basename($url))->getHeaders()['Content-Security-Policy'];
		self::assertSame("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src 'none'; media-src 'none'; connect-src 'none'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'; sandbox allow-scripts", $policy);
	}

	public function testADomainThatIsNotAnOriginIs400AndNothingIsStored(): void {
		$response = $this->post(['html' => '<p>x</p>', 'csp' => ['connectDomains' => ["https://a.example.com; script-src *"]]]);
		self::assertEnvelope($response, 400, 'csp.connectDomains: each entry must be an http:// or https:// origin, like https://cdn.example.com');
		self::assertSame(0, (int)(new \ReflectionProperty($this->store, 'db'))->getValue($this->store)->pdo->query('SELECT COUNT(*) FROM oc_tamebi_ui')->fetchColumn());
	}

	public function testHtmlOver1MiBIs400(): void {
		self::assertSame(400, $this->post(['html' => str_repeat('a', 1024 * 1024 + 1)])->getStatus());
		self::assertSame(200, $this->post(['html' => str_repeat('a', 1024 * 1024)])->getStatus());
	}

	public function testADocumentIsOnlyItsUsersAndOnlyForTenMinutes(): void {
		$id = basename($this->post(['html' => '<p>alice</p>'])->getData()['url']);
		$this->userSession->user = new FakeUser('bob');
		self::assertSame(404, $this->controller()->show($id)->getStatus());
		$this->userSession->user = new FakeUser('alice');
		$this->time->now += 600;
		self::assertInstanceOf(HtmlResponse::class, $this->controller()->show($id));
		$this->time->now += 1;
		self::assertSame(404, $this->controller()->show($id)->getStatus());
	}

	public function testStoringNeedsTheSessionAndCsrf(): void {
		$this->request->csrfPasses = false;
		self::assertSame(412, $this->post(['html' => '<p>x</p>'])->getStatus());
		$this->userSession->user = null;
		self::assertSame(401, $this->post(['html' => '<p>x</p>'])->getStatus());
	}
}
