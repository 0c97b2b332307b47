<?php

declare(strict_types=1);

namespace OCA\Tamebi\Tests\Unit;

use OCA\Tamebi\Service\CspBuilder;
use PHPUnit\Framework\TestCase;

final class CspBuilderTest extends TestCase {
	private function check(array $connect, array $resource, string $expected): void {
		self::assertSame($expected, CspBuilder::policy($connect, $resource));
	}

	public function testEmptyListsLeaveKeywordsOrNone(): void {
		$this->check([], [], "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src 'none'; media-src 'none'; connect-src 'none'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'; sandbox allow-scripts");
	}

	public function testResourceDomainsOpenScriptStyleImageFontMedia(): void {
		$this->check([], ['https://cdn.example.com', 'http://127.0.0.1:8081'], "default-src 'none'; script-src 'unsafe-inline' https://cdn.example.com http://127.0.0.1:8081; style-src 'unsafe-inline' https://cdn.example.com http://127.0.0.1:8081; img-src data: https://cdn.example.com http://127.0.0.1:8081; font-src https://cdn.example.com http://127.0.0.1:8081; media-src https://cdn.example.com http://127.0.0.1:8081; connect-src 'none'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'; sandbox allow-scripts");
	}

	public function testConnectDomainsOpenConnectOnly(): void {
		$this->check(['https://api.example.com', 'https://api.example.com', 'http://[::1]:9000'], [], "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src 'none'; media-src 'none'; connect-src https://api.example.com http://[::1]:9000; frame-ancestors 'self'; base-uri 'none'; form-action 'none'; sandbox allow-scripts");
	}

	public function notOrigins(): array {
		return [
			'another scheme' => ['ftp://files.example.com'],
			'javascript' => ['javascript:alert(1)'],
			'data' => ['data:'],
			'a keyword' => ["'self'"],
			'no scheme' => ['cdn.example.com'],
			'a path' => ['https://cdn.example.com/lib'],
			'a trailing slash' => ['https://cdn.example.com/'],
			'a second directive' => ['https://a.example.com; script-src *'],
			'a second source' => ['https://a.example.com https://b.example.com'],
			'a wildcard' => ['https://*.example.com'],
			'a star' => ['*'],
			'a query' => ['https://a.example.com?x'],
			'credentials' => ['https://user@a.example.com'],
			'a port out of range' => ['https://a.example.com:70000'],
			'a newline' => ["https://a.example.com\n"],
			'empty' => [''],
			'not a string' => [42],
		];
	}

	/** @dataProvider notOrigins */
	public function testAnythingButAnHttpOriginIsRefused(mixed $domain): void {
		foreach ([[[$domain], []], [[], [$domain]]] as [$connect, $resource]) {
			try {
				CspBuilder::policy($connect, $resource);
				self::fail('accepted ' . json_encode($domain));
			} catch (\InvalidArgumentException $e) {
				self::assertStringContainsString($connect === [] ? 'resourceDomains' : 'connectDomains', $e->getMessage());
			}
		}
	}
}
