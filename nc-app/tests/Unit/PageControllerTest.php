<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCA\Tamebi\Controller\PageController;
use OCA\Tamebi\Tests\Doubles\FakeRequest;
use OCP\Util;
use PHPUnit\Framework\TestCase;

/** The chat page loads the island web/ builds, as the fake Nextcloud does. */
final class PageControllerTest extends TestCase {
	public function testThePageLoadsTheBuiltIslandAndMayFrameItsOwnOrigin(): void {
		Util::$scripts = [];
		Util::$styles = [];
		$response = (new PageController(new FakeRequest()))->index();
		$this->assertSame('tamebi', $response->appName);
		$this->assertSame('main', $response->templateName);
		$this->assertSame([['tamebi', 'tamebi-main']], Util::$scripts);
		$this->assertSame([['tamebi', 'tamebi-main']], Util::$styles);
		$this->assertStringContainsString("frame-src 'self'", $response->getContentSecurityPolicy()->buildPolicy());
		$template = (string)file_get_contents(__DIR__ . '/../../templates/main.php');
		$this->assertStringContainsString('<div id="tamebi"></div>', $template);
	}
}
